"""What an upload stored, to the session's open pages (the group `session.<id>` its tabs
listen on): its lines, masked as the owner's page masks them, and its state when it changed.
A flood's upload sends its last PLAYGROUND_PAGE_MAX_LINES lines and a marker for the rest,
as a live session's throttle does; the database has them all (a reload shows them)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings

from playground.channel_layer import channel_layer
from playground.sessions.fragments import lines
from playground.sessions.protocol import group_name, share_group_name
from playground.transcripts.storable import without_surrogates

from .ingest import Applied


def publish(applied: Applied) -> None:
    session = applied.session
    if not applied.rows and not applied.state_changed:
        return
    layer = channel_layer()
    group = group_name(session.pk)

    def send(to: str, message: dict[str, Any]) -> None:
        try:
            async_to_sync(layer.group_send)(to, message)
        except UnicodeEncodeError:  # Redis's msgpack refuses unpaired surrogates
            async_to_sync(layer.group_send)(to, without_surrogates(message))

    shared = session.shares.filter(revoked_at__isnull=True).exists()  # (live share viewers may watch)
    if applied.rows:
        most = settings.PLAYGROUND_PAGE_MAX_LINES
        rows = applied.rows[-most:]
        skipped = len(applied.rows) - len(rows)
        frames = [lines.skipped(session.pk, skipped)] if skipped else []
        frames += lines.transcript_append_frames(session.owner_redactor().obj(rows), owner=True)
        send(group, {"type": "session.lines", "frames": frames})
        if shared:  # rendered again for the shares: without the owner's controls, every secret masked
            frames = [lines.skipped(session.pk, skipped, export_url="#share-downloads")] if skipped else []
            frames += lines.transcript_append_frames(session.share_redactor().obj(rows))
            send(share_group_name(session.pk), {"type": "session.lines", "frames": frames})
    if applied.state_changed:
        send(group, {"type": "session.state", "state": session.state()})
        if shared:  # (each viewer redacts it)
            send(share_group_name(session.pk), {"type": "session.state", "state": session.state()})
