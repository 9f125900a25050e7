"""The Log panel: `logging/setLevel` and the server's log messages (`notifications/message`).

In the modern era there is no setLevel request: the level goes in each request's `_meta`
(the client core does that once a level is set)."""
from __future__ import annotations

from typing import Any

from playground.mcp.client import RequestTimeout
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import TransportError

from ..html import oob
from ..protocol import Command, FeatureEvent
from .base import Feature, error_fragment, render
from .bursts import Bursts, Entry
from .context import TabContext
from .summaries import summarize

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Logging(Feature):
    name = "logging"
    actions = frozenset({"set_level"})
    notifications = frozenset({"notifications/message"})
    panel_template = "sessions/features/logging_panel.html"

    @classmethod
    def page_context(cls, session: Any) -> dict[str, Any]:
        return {"log_levels": LOG_LEVELS}

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        level = str(content.get("level") or "")
        return {"command": "set_level", "name": level} if level else None

    def __init__(self, ctx: Any, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.level = ""
        self.error = ""
        self.bursts = Bursts(self._publish_entries, _finished)

    async def handle(self, command: Command) -> None:
        client = self.ctx.client
        if client is None or client.closed:
            return
        level = str(command.get("name") or "")
        self.error = ""
        try:
            await client.set_logging_level(level)
            self.level = level
        except JsonRpcError as exc:
            self.error = f"set_level: JSON-RPC error {exc.code}: {exc.message}"
        except (RequestTimeout, TransportError) as exc:
            self.error = f"set_level: {exc}"
        await self.publish(self._state(error=True))

    def on_notification(self, message: dict[str, Any]) -> None:
        tap, params = self.ctx.tap, message.get("params")
        self.bursts.add({"method": "notifications/message", "params": params if type(params) is dict else {},
                         "t": tap.clock() - tap.start})

    async def _publish_entries(self, entries: list[Entry], skipped: int) -> None:
        await self.publish({"html": entries_html(entries, skipped=skipped)})

    async def start(self) -> None:
        await self.publish(self._state())

    async def stop(self) -> None:
        self.bursts.close()

    def _state(self, error: bool = False) -> dict[str, Any]:
        """The level line; with `error`, the panels' error line too (an action's outcome)."""
        client = self.ctx.client
        era = client.era if client else ""
        html = oob("log-state", "innerHTML", render("sessions/features/logging_state.html",
                                                    {"level": self.level, "era": era}))
        return {"html": html + error_fragment(self.error) if error or self.error else html}

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(self._state()),
                self.event({"html": entries_html(self.bursts.recent(), replace=True)})]


def _finished(entry: Entry) -> Entry:
    """Summary, level and logger instead of the params (dropped once done), time in ms. In place."""
    if "params" in entry:
        params = entry.pop("params")
        entry.update(summary=summarize("notifications/message", params), t=round(entry["t"] * 1000, 1),
                     level=str(params.get("level") or "")[:40], logger=str(params.get("logger") or "")[:200])
    return entry


def entries_html(entries: list[Entry], *, skipped: int = 0, replace: bool = False) -> str:
    html = render("sessions/features/logging_entries.html", {"entries": entries, "skipped": skipped})
    return oob("feed-log", "innerHTML" if replace else "beforeend", html)
