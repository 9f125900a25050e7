"""Keep a page usable when a server floods: at most N transcript lines per interval.

The worker already batches (≤500 events per 20 ms); a server sending 100,000 notifications
would still make the page build 100,000 DOM nodes. Per tab, within each interval the first
lines up to the budget go out at once; beyond it, only the latest `budget` lines are held and
sent when the interval ends, after a marker "N more events (see export)" counting the lines
left out. The tail of a flood (the note saying the server exited) therefore always arrives,
and the database keeps every event for the export and for replay.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

Rows = list[dict[str, Any]]


class PageWindow:
    def __init__(self, send: Callable[[Rows, int], Awaitable[None]], *, budget: int, interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """`send(rows, skipped)` renders and sends one fragment: a marker for `skipped`, then `rows`."""
        self.send = send
        self.budget = max(1, budget)
        self.interval = interval
        self.clock = clock
        self._start = clock()
        self._used = 0
        self._held: collections.deque[dict[str, Any]] = collections.deque(maxlen=self.budget)
        self._skipped = 0
        self._timer: asyncio.Task[None] | None = None

    async def push(self, rows: Rows) -> None:
        now = self.clock()
        if self._timer is None and now - self._start >= self.interval:
            self._start, self._used = now, 0
        room = self.budget - self._used if self._timer is None else 0
        if len(rows) <= room:
            self._used += len(rows)
            await self.send(rows, 0)
            return
        if room > 0:
            self._used += room
            await self.send(rows[:room], 0)
            rows = rows[room:]
        overflow = len(self._held) + len(rows) - self.budget
        if overflow > 0:
            self._skipped += overflow
        self._held.extend(rows)
        if self._timer is None:
            delay = max(0.0, self.interval - (now - self._start))
            self._timer = asyncio.get_running_loop().create_task(self._release_later(delay))

    async def _release_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        rows, skipped = list(self._held), self._skipped
        self._held.clear()
        self._skipped = 0
        self._start, self._used = self.clock(), len(rows)
        self._timer = None
        await self.send(rows, skipped)

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
            self._timer = None
