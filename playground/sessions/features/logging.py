"""The Log panel: `logging/setLevel` and the server's log messages (`notifications/message`).

In the modern era there is no setLevel request: the level goes in each request's `_meta`
(the client core does that once a level is set)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playground.mcp.client import McpClient
from playground.mcp.secrets import Redactor

from ..fragments.html import oob
from ..protocol import Command, FeatureEvent
from .base import Feature, render
from .bursts import Bursts, Entry, text_html, time_html
from .context import SessionContext, TabContext
from .summaries import summarize

if TYPE_CHECKING:
    from playground.transcripts.models import Session

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Logging(Feature):
    name = "logging"
    actions = frozenset({"set_level"})
    notifications = frozenset({"notifications/message"})
    panel_template = "sessions/features/logging_panel.html"

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        return {"log_levels": LOG_LEVELS}

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        level = str(content.get("level") or "")
        return {"command": "set_level", "name": level} if level else None

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.level = ""
        self.bursts = Bursts(
            self,
            entries_html=_entries_html,
            target="feed-log",
            finish=lambda entry: _finished(entry, ctx.secrets()),
        )

    async def handle(self, command: Command) -> None:
        level = str(command.get("name") or "")

        async def run(client: McpClient) -> None:
            await client.set_logging_level(level)
            self.level = level

        if await self.attempt("set_level", run):
            await self.publish_state(outcome=True)

    def on_notification(self, message: dict[str, Any]) -> None:
        tap, params = self.ctx.tap, message.get("params")
        self.bursts.add(
            {
                "method": "notifications/message",
                "params": params if type(params) is dict else {},
                "t": tap.clock() - tap.start,
            }
        )

    def state_html(self) -> str:
        client = self.ctx.client
        return oob(
            "log-state",
            "innerHTML",
            render("sessions/features/logging_state.html", {"level": self.level, "era": client.era if client else ""}),
        )

    def snapshot(self) -> list[FeatureEvent]:
        return [*super().snapshot(), self.event(self.bursts.replay())]


def _entries_html(entries: list[Entry]) -> str:
    """The Log panel's entries (finished: see `_finished`)."""
    out = []
    for e in entries:
        level, logger = text_html(e.get("level")), e.get("logger")
        out.append(
            f'<li class="feed-entry level-{level}">{time_html(e.get("t"))}<span class="level">{level}</span>'
            + (f' <span class="logger">{text_html(logger)}</span>' if logger else "")
            + f' <span class="text">{text_html(e.get("summary"))}</span></li>'
        )
    return "".join(out)


def _finished(entry: Entry, secrets: Redactor) -> Entry:
    """Summary, level and logger instead of the params (dropped once done), time in ms. In place."""
    if "params" in entry:
        params = entry.pop("params")
        entry.update(
            summary=summarize("notifications/message", params, secrets),
            t=round(entry["t"] * 1000, 1),
            level=secrets.cut(str(params.get("level") or ""), 40),
            logger=secrets.cut(str(params.get("logger") or ""), 200),
        )
    return entry
