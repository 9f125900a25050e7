"""Features' commands run beside the worker's command loop, one lane per feature.

A feature's command may wait on the server (a tasks/get, logging/setLevel, a subscription).
Awaited in the loop, it held back every other command — cancel, disconnect, a tab's sync, and
the person's answer to a server request that the awaited request was itself waiting for (on
stdio a request's timeout is paused while a person answers: nothing moved any more, not even
Disconnect). In a lane, a feature's commands still run one after the other, in the order they
came (a subscribe then an unsubscribe), and a wait holds back only that feature's later ones.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[None]]


class Lanes:
    """Jobs by lane: each lane's in order, lanes side by side, each drained by a task made with
    `spawn` (the session's: cancelled when it ends, the jobs still queued with it)."""

    def __init__(self, spawn: Callable[[str, Coroutine[Any, Any, Any]], None]) -> None:
        self._spawn = spawn
        self._queues: dict[str, deque[Job]] = {}

    def run(self, lane: str, job: Job) -> None:
        """Run `job` once the lane's earlier jobs are done (at once if there are none)."""
        queue = self._queues.get(lane)
        if queue is not None:
            queue.append(job)
            return
        self._queues[lane] = deque([job])
        self._spawn(f"{lane}-commands", self._drain(lane))

    async def _drain(self, lane: str) -> None:
        queue = self._queues[lane]
        try:
            while queue:
                job = queue.popleft()
                try:
                    await job()
                except Exception:  # one job's failure is not the lane's end
                    log.exception("a job of lane %s failed", lane)
        finally:
            del self._queues[lane]
