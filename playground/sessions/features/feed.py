"""The Notifications panel: the server's notifications as they come (log messages have their
own panel, see logging.py; progress belongs to its call)."""

from __future__ import annotations

from typing import Any

from playground.mcp.client import META_SUBSCRIPTION
from playground.mcp.secrets import Redactor

from ..protocol import FeatureEvent
from .base import ALL, Feature
from .bursts import Bursts, Entry, text_html, time_html
from .context import SessionContext
from .summaries import params_of, summarize


class Feed(Feature):
    name = "feed"
    notifications = ALL
    ignored_notifications = frozenset({"notifications/message"})  # the Log panel's
    panel_template = "sessions/features/feed_panel.html"

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.bursts = Bursts(
            self,
            entries_html=_entries_html,
            target="feed-notes",
            finish=lambda entry: _finished(entry, ctx.secrets()),
        )

    def on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = params_of(message)
        meta = params.get("_meta")
        tag = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
        # Kept as it came; completed only if shown (see bursts.py).
        self.bursts.add(
            {"method": method, "params": params, "subscription": tag, "t": self.ctx.tap.clock() - self.ctx.tap.start}
        )

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(self.bursts.replay())]


def _entries_html(entries: list[Entry]) -> str:
    """The Notifications panel's entries (finished: see `_finished`)."""
    out = []
    for e in entries:
        tag = e.get("subscription")
        out.append(
            f'<li class="feed-entry">{time_html(e.get("t"))}<code class="method">{text_html(e.get("method"))}</code>'
            + (f' <span class="tag" title="subscriptionId">sub #{text_html(tag)}</span>' if tag is not None else "")
            + f' <span class="text mono">{text_html(e.get("summary"))}</span></li>'
        )
    return "".join(out)


def _finished(entry: Entry, secrets: Redactor) -> Entry:
    """The entry as the page shows it: its summary instead of its params (dropped once
    summarized), time in ms. Done once, in place."""
    if "params" in entry:
        entry["summary"] = summarize(entry["method"], entry.pop("params"), secrets)
        entry["t"] = round(entry["t"] * 1000, 1)
    return entry
