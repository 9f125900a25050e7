"""Keep a page usable when a server floods: at most `rate` transcript lines a second.

The worker already batches (≤500 events per 20 ms); a server sending 100,000 notifications
would still make the page build 100,000 DOM nodes. A token bucket per session (the worker
renders the lines once for all its tabs): bursts up to
`rate` lines go out at once (a server's start-up chatter is shown whole); beyond that only the
latest lines are held, `tail` seconds' worth, and sent after a marker "N more events (see
export)" counting the lines left out, as soon as the bucket has room for them — at most
`tail` seconds after the flood stops. The tail of a flood (the note saying the server exited,
the call's result) therefore always arrives, promptly, and the database keeps every event for
the export and for replay.

Items are opaque to the throttle (the worker passes each saved row).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from playground.token_bucket import TokenBucket

Items = list[Any]


class LineThrottle:
    def __init__(
        self,
        send: Callable[[Items, int], Awaitable[None]],
        *,
        rate: float,
        tail: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`send(items, skipped)` renders and sends one fragment: a marker for `skipped`, then `items`."""
        self.send = send
        self.rate = max(1.0, rate)
        self.clock = clock
        self._bucket = TokenBucket(self.rate, self.rate, clock)  # the bucket holds one second's worth
        self._held: collections.deque[Any] = collections.deque(maxlen=max(1, round(self.rate * tail)))
        self._skipped = 0
        self._timer: asyncio.Task[None] | None = None
        self.due = 0.0  # on `clock`, when held lines go out

    async def push(self, items: Items) -> None:
        bucket = self._bucket
        bucket.refill()
        if self._timer is None:
            room = max(0, int(bucket.tokens))
            if len(items) <= room:
                bucket.tokens -= len(items)
                await self.send(items, 0)
                return
            if room:
                bucket.tokens -= room
                await self.send(items[:room], 0)
                items = items[room:]
        overflow = len(self._held) + len(items) - self._held.maxlen  # type: ignore[operator]
        if overflow > 0:
            self._skipped += overflow
        self._held.extend(items)
        if self._timer is None:
            # When the bucket has room for a full hold again.
            self.due = bucket.last + max(0.0, (self._held.maxlen - bucket.tokens) / self.rate)  # type: ignore[operator]
            self._timer = asyncio.get_running_loop().create_task(self._release_at(self.due))

    async def _release_at(self, due: float) -> None:
        await asyncio.sleep(max(0.0, due - self.clock()))
        items, skipped = list(self._held), self._skipped
        self._held.clear()
        self._skipped = 0
        self._bucket.refill()
        self._bucket.tokens -= len(items)
        self._timer = None
        await self.send(items, skipped)

    async def flush(self) -> None:
        """Send what is held now (the session is ending: nothing comes after it)."""
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
            self._timer = None
        if self._held or self._skipped:
            items, skipped = list(self._held), self._skipped
            self._held.clear()
            self._skipped = 0
            await self.send(items, skipped)

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
            self._timer = None
