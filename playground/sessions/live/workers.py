"""The workers living in this process, and the one heartbeat that tells other processes so.

Kept apart from the worker: the durability sweep and the clean stop need the list, and the
worker needs neither of them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Protocol

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from playground.transcripts.models import Session

from ..protocol import Command

log = logging.getLogger(__name__)


class LiveWorker(Protocol):
    channel: str

    def deliver(self, command: Command) -> None:
        """A command from a tab in this process (not through the channel layer)."""

    async def stop(self, reason: str | None = None) -> None: ...

    def busy(self) -> bool: ...


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
            heartbeat_at=timezone.now()
        )

    while WORKERS:
        await asyncio.sleep(settings.PLAYGROUND_HEARTBEAT_SECONDS)
        beats = {session_id: worker.channel for session_id, worker in WORKERS.items() if worker.channel}
        if beats:
            try:
                await database_sync_to_async(touch)(beats)
                await end_idle(beats)
            except Exception:
                log.exception("heartbeat of %d session(s) failed", len(beats))


def idle_reason(minutes: float) -> str:
    return f"nobody watched it for {minutes:g} minutes (PLAYGROUND_IDLE_MINUTES)"


async def end_idle(beats: dict[int, str]) -> list[int]:
    """End this process's live sessions that no tab or share viewer showed for
    PLAYGROUND_IDLE_MINUTES, unless busy on their own (a replay, a check). Their server processes
    would otherwise run until the playground stops. The sessions ended."""
    minutes = settings.PLAYGROUND_IDLE_MINUTES
    if minutes <= 0:
        return []
    cutoff = timezone.now() - timedelta(minutes=minutes)
    idle = await database_sync_to_async(
        lambda: list(Session.objects.filter(pk__in=list(beats), viewed_at__lt=cutoff).values_list("pk", flat=True))
    )()
    ended = []
    for session_id in idle:
        worker = WORKERS.get(session_id)
        if worker is not None and not worker.busy():
            await worker.stop(idle_reason(minutes))
            ended.append(session_id)
    return ended


def local(session_id: int, channel: str) -> LiveWorker | None:
    """The session's worker if it lives in this process at `channel` (the tab's worker channel)."""
    worker = WORKERS.get(session_id)
    return worker if worker is not None and channel and worker.channel == channel else None
