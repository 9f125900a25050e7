"""Notifications shown in a panel, a burst at a time.

A flood must not become one group message per notification: entries arriving within
`window` seconds reach the page as one message with the latest `shown` of them, and a count
of those left out (the transcript has them all). A reloading page gets the last `kept`.
Entries are kept as they came and completed (`finish`) only when shown: building every entry
of a flood was the reader's largest single cost.
"""
from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import Any

Entry = dict[str, Any]


class Bursts:
    def __init__(self, publish: Callable[[list[Entry], int], Awaitable[None]], finish: Callable[[Entry], Entry], *,
                 window: float = 0.05, shown: int = 20, kept: int = 200) -> None:
        self.publish = publish          # (finished entries, skipped) -> one message for the page
        self.finish = finish
        self.window = window
        self.kept: collections.deque[Entry] = collections.deque(maxlen=kept)
        self._pending: collections.deque[Entry] = collections.deque(maxlen=shown)
        self._skipped = 0
        self._shown = shown
        self._task: asyncio.Task[None] | None = None
        self._scheduled = False             # a send is due (cheaper to test than the task, per entry)

    def add(self, entry: Entry) -> None:
        self.kept.append(entry)
        pending = self._pending
        if len(pending) == self._shown:
            self._skipped += 1
        pending.append(entry)
        if not self._scheduled:
            self._scheduled = True
            self._task = asyncio.get_running_loop().create_task(self._send())

    def recent(self) -> list[Entry]:
        """The kept entries, finished (for a reloading page)."""
        return [self.finish(e) for e in self.kept]

    async def _send(self) -> None:
        try:
            await asyncio.sleep(self.window)
        finally:
            self._scheduled = False
        entries, skipped = [self.finish(e) for e in self._pending], self._skipped
        self._pending.clear()
        self._skipped = 0
        if entries:
            await self.publish(entries, skipped)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
