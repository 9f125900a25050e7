"""Legacy resource subscriptions: `resources/subscribe` and `resources/unsubscribe` (the
catalogue's Subscribe buttons). The updates themselves show in the Notifications panel."""

from __future__ import annotations

from typing import Any

from playground.mcp.client import McpClient

from ..fragments.html import oob
from ..protocol import Command
from .base import Feature, render
from .context import SessionContext, TabContext


class Subscriptions(Feature):
    name = "subscriptions"
    actions = frozenset({"subscribe", "unsubscribe"})
    panel_template = "sessions/features/subscriptions_panel.html"

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        uri = str(content.get("uri") or "")
        return {"command": action, "uri": uri} if uri else None

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.subscribed: list[str] = []  # in the order subscribed

    async def handle(self, command: Command) -> None:
        uri, action = str(command.get("uri") or ""), str(command.get("command"))

        async def run(client: McpClient) -> None:
            if action == "subscribe":
                await client.subscribe(uri)
                if uri not in self.subscribed:
                    self.subscribed.append(uri)
            else:
                await client.unsubscribe(uri)
                self.subscribed = [u for u in self.subscribed if u != uri]

        if await self.attempt(action, run):
            await self.publish_state(outcome=True)

    def state_html(self) -> str:
        client = self.ctx.client
        caps = (client.server_capabilities or {}) if client else {}
        resources = caps.get("resources")
        resources = resources if isinstance(resources, dict) else {}
        return oob(
            "subs-state",
            "innerHTML",
            render(
                "sessions/features/subscriptions_state.html",
                {"subscribed": self.subscribed, "can_subscribe": bool(resources.get("subscribe"))},
            ),
        )
