"""Notification counts: how many of each method the server sent this session, busiest first.
A summary the Notifications panel cannot give once a flood scrolled it away."""

from __future__ import annotations

from typing import Any

from ..fragments.html import oob
from .base import ALL, Feature, render
from .context import SessionContext

UPDATE_EVERY = 0.25  # seconds: the table reaches the page at most this often
METHODS_KEPT = 100  # distinct methods counted by name; a server inventing more is counted as "other"
OTHER = "(other methods)"


class NotificationCounts(Feature):
    name = "counts"
    notifications = ALL
    panel_template = "sessions/features/counts_panel.html"

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.counts: dict[str, int] = {}

    def on_notification(self, message: dict[str, Any]) -> None:
        counts, method = self.counts, message["method"]
        if method not in counts:
            method = method[:200] if len(counts) < METHODS_KEPT else OTHER
        counts[method] = counts.get(method, 0) + 1
        self.publish_state_soon(UPDATE_EVERY)

    def state_html(self) -> str:
        return oob(
            "notification-counts",
            "outerHTML",
            render(
                "sessions/features/counts_table.html", {"counts": sorted(self.counts.items(), key=lambda kv: -kv[1])}
            ),
        )
