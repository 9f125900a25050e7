"""Notifications shown in a panel, a burst at a time.

A flood must not become one group message per notification: entries arriving within
`window` seconds reach the page as one message with the latest `shown` of them, and a count
of those left out (the transcript has them all). A reloading page gets the last `kept`.
Entries are kept as they came and completed (`finish`) only when shown: building every entry
of a flood was the reader's largest single cost. Each burst is rendered here once, for every
tab (50 tabs of a flood rendered it 50 times, 20 times a second).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Any

from ..fragments.html import oob
from .base import Feature, render

Entry = dict[str, Any]


class Bursts:
    def __init__(
        self,
        feature: Feature,
        *,
        template: str,
        target: str,
        finish: Callable[[Entry], Entry],
        window: float = 0.05,
        shown: int = 20,
        kept: int = 200,
    ) -> None:
        """Entries of `feature`'s panel list `target`, each burst rendered by `template`
        (with `entries` and `skipped`)."""
        self.feature = feature
        self.template, self.target, self.finish = template, target, finish
        self.window = window
        self.kept: collections.deque[Entry] = collections.deque(maxlen=kept)
        self._pending: collections.deque[Entry] = collections.deque(maxlen=shown)
        self._shown = shown
        self._skipped = 0
        self._scheduled = False  # a send is due (cheaper to test than a task, per entry)

    def add(self, entry: Entry) -> None:
        self.kept.append(entry)
        pending = self._pending
        if len(pending) == self._shown:
            self._skipped += 1
        pending.append(entry)
        if not self._scheduled:
            self._scheduled = True
            self.feature.ctx.spawn(f"{self.feature.name}-burst", self._send())

    def replay(self) -> dict[str, Any]:
        """The kept entries as one event that replaces the list (for a reloading page)."""
        return {"html": self._html([self.finish(e) for e in self.kept], replace=True)}

    def _html(self, entries: list[Entry], *, skipped: int = 0, replace: bool = False) -> str:
        html = render(self.template, {"entries": entries, "skipped": skipped})
        return oob(self.target, "innerHTML" if replace else "beforeend", html)

    async def _send(self) -> None:
        try:
            await asyncio.sleep(self.window)
        finally:
            self._scheduled = False
        entries, skipped = [self.finish(e) for e in self._pending], self._skipped
        self._pending.clear()
        self._skipped = 0
        if entries:
            await self.feature.publish({"html": self._html(entries, skipped=skipped)})
