"""The Notifications panel: the server's notifications as they come (log messages have their
own panel, see logging.py; progress belongs to its call)."""
from __future__ import annotations

from typing import Any

from playground.mcp.client import META_SUBSCRIPTION

from ..html import oob
from ..protocol import FeatureEvent
from .base import ALL, Feature, render
from .bursts import Bursts, Entry
from .summaries import params_of, summarize


class Feed(Feature):
    name = "feed"
    notifications = ALL
    ignored_notifications = frozenset({"notifications/message"})      # the Log panel's
    panel_template = "sessions/features/feed_panel.html"

    def __init__(self, ctx: Any, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.bursts = Bursts(self._publish, _finished)

    def on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = params_of(message)
        meta = params.get("_meta")
        tag = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
        # Kept as it came; completed only if shown (see bursts.py).
        self.bursts.add({"method": method, "params": params, "subscription": tag,
                         "t": self.ctx.tap.clock() - self.ctx.tap.start})

    async def _publish(self, entries: list[Entry], skipped: int) -> None:
        # Rendered here once, not by each tab: the same fragment for all (50 tabs of a flood
        # rendered it 50 times, 20 times a second).
        await self.publish({"html": entries_html(entries, skipped=skipped)})

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event({"html": entries_html(self.bursts.recent(), replace=True)})]

    async def stop(self) -> None:
        self.bursts.close()


def _finished(entry: Entry) -> Entry:
    """The entry as the page shows it: its summary instead of its params (dropped once
    summarized), time in ms. Done once, in place."""
    if "params" in entry:
        entry["summary"] = summarize(entry["method"], entry.pop("params"))
        entry["t"] = round(entry["t"] * 1000, 1)
    return entry


def entries_html(entries: list[Entry], *, skipped: int = 0, replace: bool = False) -> str:
    html = render("sessions/features/feed_entries.html", {"entries": entries, "skipped": skipped})
    return oob("feed-notes", "innerHTML" if replace else "beforeend", html)
