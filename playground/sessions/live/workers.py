"""The workers living in this process, and the one heartbeat that tells other processes so.

Kept apart from the worker: the durability sweep and the clean stop need the list, and the
worker needs neither of them.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from playground.transcripts.models import Session

log = logging.getLogger(__name__)


class LiveWorker(Protocol):
    channel: str

    async def stop(self, reason: str | None = None) -> None: ...


# Workers living in this process, by session id.
WORKERS: dict[int, LiveWorker] = {}

_heartbeat: asyncio.Task[None] | None = None


def add(session_id: int, worker: LiveWorker) -> None:
    """A worker joins the process: its session beats from now on."""
    global _heartbeat
    WORKERS[session_id] = worker
    loop = asyncio.get_running_loop()
    if _heartbeat is None or _heartbeat.done() or _heartbeat.get_loop() is not loop:
        _heartbeat = loop.create_task(_heartbeat_loop(), name="session-heartbeats")


def remove(session_id: int) -> None:
    """A worker has ended; the heartbeat stops with the last one."""
    WORKERS.pop(session_id, None)
    if not WORKERS and _heartbeat is not None:
        _heartbeat.cancel()


def heartbeat() -> asyncio.Task[None] | None:
    """The process's heartbeat task, if one runs (for tests)."""
    return _heartbeat


async def _heartbeat_loop() -> None:
    """Tell other processes that this process's workers live (see durability.reap_dead_sessions):
    one UPDATE for all of them every beat. (A task and a write per worker made 100 idle sessions
    cost 1-2% of a core: ten writes a second.) Ends when the process has no worker left."""
    def touch(beats: dict[int, str]) -> None:
        Session.objects.filter(pk__in=list(beats), worker_channel__in=list(beats.values())).update(
            heartbeat_at=timezone.now())

    while WORKERS:
        await asyncio.sleep(settings.PLAYGROUND_HEARTBEAT_SECONDS)
        beats = {session_id: worker.channel for session_id, worker in WORKERS.items() if worker.channel}
        if beats:
            try:
                await database_sync_to_async(touch)(beats)
            except Exception:
                log.exception("heartbeat of %d session(s) failed", len(beats))
