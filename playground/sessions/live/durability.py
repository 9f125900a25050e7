"""Sessions whose worker died with its process are marked ended, transcript intact.

A worker lives in one process; if that process dies (killed, crashed, restarted) its
sessions would stay "connected" forever. Two rules find them:
- heartbeat: every worker touches `heartbeat_at` every PLAYGROUND_HEARTBEAT_SECONDS; a
  live session whose heartbeat is older than three beats has no worker (any layer);
- process start, in-memory layer only: no worker can survive its process, so every live
  session started before this process began is dead.
The sweep runs once per process at its first request, on every session page and socket
connect, and in `playground_setup`; a tab showing a live session checks its own every beat,
so a viewer on another process sees the session end. It appends a note to the transcript.
A process stopped cleanly (SIGTERM, SIGINT) ends its own sessions first: see shutdown.py.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from playground.transcripts.models import Event, Session

from .workers import WORKERS

log = logging.getLogger(__name__)

WORKER_ENDED = "worker process ended"
# A captured session (playground/capture) ends when its capture has sent nothing for this long
# (it sends a heartbeat record every few seconds while the host's connection is open).
CAPTURE_SILENCE = 30.0
CAPTURE_SILENT = "the capture stopped sending (no record for 30 seconds)"
PROCESS_STARTED = timezone.now()
_LIVE = (Session.Status.CONNECTING, Session.Status.CONNECTED)
_started_lock = threading.Lock()
_started_done = False


def in_memory_layer() -> bool:
    return settings.CHANNEL_LAYERS["default"]["BACKEND"].endswith("InMemoryChannelLayer")


def reap_dead_sessions(
    *, at_start: bool = False, session_id: int | None = None, now: datetime | None = None
) -> list[int]:
    """Mark dead sessions (or only `session_id`) ended; return their ids. Workers of this
    process are never touched. A captured session has no worker: it is dead once its capture
    has sent nothing for CAPTURE_SILENCE seconds (its heartbeats stopped), whatever process runs."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=3 * settings.PLAYGROUND_HEARTBEAT_SECONDS)
    captured = Q(kind=Session.Kind.CAPTURED)
    dead = ~captured & (Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale))
    if at_start and in_memory_layer():
        dead |= ~captured & Q(started_at__lt=PROCESS_STARTED)
    dead |= captured & Q(heartbeat_at__lt=now - timedelta(seconds=CAPTURE_SILENCE))
    live = Session.objects.filter(dead, status__in=_LIVE).exclude(pk__in=list(WORKERS))
    if session_id is not None:
        live = live.filter(pk=session_id)
    ids = list(live.values_list("pk", flat=True))
    reaped = [pk for pk in ids if _end(pk, dead)]
    if reaped:
        log.warning("marked %d session(s) ended: %s", len(reaped), WORKER_ENDED)
    return reaped


def _end(pk: int, dead: Q) -> bool:
    """End one session if it is still live and still dead (a racing sweep or its worker may have won)."""
    with transaction.atomic():
        kind = Session.objects.filter(pk=pk).values_list("kind", flat=True).first()
        reason = CAPTURE_SILENT if kind == Session.Kind.CAPTURED else WORKER_ENDED
        updated = Session.objects.filter(dead, pk=pk, status__in=_LIVE).update(
            status=Session.Status.ENDED, end_reason=reason, ended_at=timezone.now(), worker_channel=""
        )
        if not updated:
            return False
        last = Event.objects.filter(session_id=pk).order_by("-seq").values("seq", "t").first() or {"seq": 0, "t": 0.0}
        seq = last["seq"] + 1
        if kind == Session.Kind.CAPTURED:
            text = f"{CAPTURE_SILENT}: the host's connection or its capture is gone; records that come later are added"
        else:
            text = (
                f"{WORKER_ENDED}: the process that ran this session's worker stopped "
                "(no heartbeat); the transcript is saved up to that point"
            )
        Event.objects.create(
            session_id=pk,
            seq=seq,
            t=last["t"],
            dir="note",
            data={"seq": seq, "t": last["t"], "dir": "note", "message": None, "kind": "error", "text": text},
        )
        Session.objects.filter(pk=pk).update(event_count=seq)
    return True


def reap_once_at_start(**_kwargs: object) -> None:
    """The first request of a process sweeps with the process-start rule (connected to request_started)."""
    global _started_done
    with _started_lock:
        if _started_done:
            return
        _started_done = True
    try:
        reap_dead_sessions(at_start=True)
    except Exception:  # never fail a request over housekeeping
        log.exception("sweeping dead sessions at process start failed")
