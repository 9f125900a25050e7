"""Lists refreshed when the server says they changed (`notifications/*/list_changed`), unless
the person turns it off to watch the notifications alone."""

from __future__ import annotations

from typing import Any

from ..fragments.html import oob
from ..protocol import Command
from .base import Feature, render
from .context import SessionContext, TabContext

LIST_CHANGED = frozenset(
    {"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"}
)


class AutoRefresh(Feature):
    name = "auto_refresh"
    actions = frozenset({"auto_refresh"})
    notifications = LIST_CHANGED
    head_template = "sessions/features/auto_refresh_head.html"

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        return {"command": "auto_refresh", "params": bool(content.get("on"))}

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.on = True

    async def handle(self, command: Command) -> None:
        self.on = bool(command.get("params"))
        await self.publish_state()

    def on_notification(self, message: dict[str, Any]) -> None:
        if self.on:
            self.ctx.spawn("refresh", self.ctx.refresh_catalogue(announced=True))

    def state_html(self) -> str:
        return oob(
            "auto-refresh-state", "innerHTML", render("sessions/features/auto_refresh_state.html", {"on": self.on})
        )
