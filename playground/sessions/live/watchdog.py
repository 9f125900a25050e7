"""A tab's watch on its session's worker, the owner's and a share viewer's alike.

A worker lives in one process. When that process dies, its sessions' heartbeats go stale; a
tab in another process would show the session live forever. So every tab showing a live
session checks, every beat, that its worker still beats (durability.reap_dead_sessions); the
first to find it dead ends the session and tells every tab and every share viewer: the note
saying so (masked for each audience) and the state.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from playground.transcripts.models import Event, Session

from ..fragments import lines
from ..protocol import group_name, share_group_name
from .durability import reap_dead_sessions

log = logging.getLogger(__name__)


async def watch_worker(layer: Any, session_id: int, watching: Callable[[], bool]) -> None:
    """Every beat while `watching()`: end the session if its worker died, and say so; and
    note that the session is shown (Session.viewed_at: a session nobody shows ends when idle)."""
    while watching():
        try:
            await database_sync_to_async(viewed)(session_id)
        except Exception:  # housekeeping never closes a tab
            log.exception("noting that session %s is shown failed", session_id)
        await asyncio.sleep(settings.PLAYGROUND_HEARTBEAT_SECONDS)
        try:
            if await database_sync_to_async(reap_dead_sessions)(session_id=session_id):
                await announce_end(layer, session_id)
        except Exception:  # housekeeping never closes a tab
            log.exception("checking the worker of session %s failed", session_id)


def viewed(session_id: int) -> None:
    Session.objects.filter(pk=session_id).update(viewed_at=timezone.now())


async def announce_end(layer: Any, session_id: int) -> None:
    """The session's last line (the reaper's note) and its state, to its tabs and its share
    viewers (each redacts the state for a share, and turns into a snapshot)."""

    def read() -> tuple[Session, list[Any]]:
        session = Session.objects.get(pk=session_id)
        last = list(Event.objects.filter(session_id=session_id).order_by("-seq").values_list("data", flat=True)[:1])
        return session, last

    session, last = await database_sync_to_async(read)()
    state = session.state()
    group, shares = group_name(session_id), share_group_name(session_id)
    await layer.group_send(
        group,
        {
            "type": "session.lines",
            "frames": lines.transcript_append_frames(session.owner_redactor().obj(last), owner=True),
        },
    )
    await layer.group_send(group, {"type": "session.state", "state": state})
    await layer.group_send(
        shares, {"type": "session.lines", "frames": lines.transcript_append_frames(session.share_redactor().obj(last))}
    )
    await layer.group_send(shares, {"type": "session.state", "state": state})
