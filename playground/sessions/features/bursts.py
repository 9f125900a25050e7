"""Notifications shown in a panel, a burst at a time.

A flood must not become one group message per notification: entries arriving within
`window` seconds reach the page as one message with the latest `shown` of them, and a count
of those left out (the transcript has them all). A reloading page gets the last `kept`.
Entries are kept as they came and completed (`finish`) only when shown: building every entry
of a flood was the reader's largest single cost. Each burst is rendered here once, for every
tab (50 tabs of a flood rendered it 50 times, 20 times a second), in Python as the transcript's
lines are (lines.py): a Django template took ~1.3 ms for a burst of 20 log entries, ~5-10% of the
event loop's time in a flood.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Any

from ..fragments.html import esc, latency_ms, oob
from .base import Feature

Entry = dict[str, Any]


def time_html(t: float | None) -> str:
    """An entry's time (ms since the session started), as the transcript's lines show theirs."""
    if t is None:
        return ""
    return f'<span class="t" data-ms="{t:.1f}" title="ms since the session started">{esc(latency_ms(t))}</span>'


def text_html(value: Any) -> str:
    """A value shown as Django's autoescaping shows it (None as nothing: the entries leave such
    keys out)."""
    return "" if value is None else esc(value)


class Bursts:
    def __init__(
        self,
        feature: Feature,
        *,
        entries_html: Callable[[list[Entry]], str],
        target: str,
        finish: Callable[[Entry], Entry],
        window: float = 0.05,
        shown: int = 20,
        kept: int = 200,
    ) -> None:
        """Entries of `feature`'s panel list `target`, each burst's finished entries rendered
        by `entries_html` (after a line saying how many were left out, if any)."""
        self.feature = feature
        self.entries_html, self.target, self.finish = entries_html, target, finish
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
        html = self.entries_html(entries)
        if skipped:
            html = (
                f'<li class="feed-entry feed-skipped dim">… {skipped} more notifications (the transcript has them)</li>'
                + html
            )
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
