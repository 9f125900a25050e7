"""Legacy resource subscriptions: `resources/subscribe` and `resources/unsubscribe` (the
catalogue's Subscribe buttons). The updates themselves show in the Notifications panel."""
from __future__ import annotations

from typing import Any

from playground.mcp.client import RequestTimeout
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import TransportError

from ..html import oob
from ..protocol import Command, FeatureEvent
from .base import Feature, error_fragment, render
from .context import TabContext


class Subscriptions(Feature):
    name = "subscriptions"
    actions = frozenset({"subscribe", "unsubscribe"})
    panel_template = "sessions/features/subscriptions_panel.html"

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        uri = str(content.get("uri") or "")
        return {"command": action, "uri": uri} if uri else None

    def __init__(self, ctx: Any, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.subscribed: list[str] = []           # in the order subscribed
        self.error = ""

    async def handle(self, command: Command) -> None:
        client = self.ctx.client
        if client is None or client.closed:
            return
        uri = str(command.get("uri") or "")
        action = command.get("command")
        self.error = ""
        try:
            if action == "subscribe":
                await client.subscribe(uri)
                if uri not in self.subscribed:
                    self.subscribed.append(uri)
            else:
                await client.unsubscribe(uri)
                self.subscribed = [u for u in self.subscribed if u != uri]
        except JsonRpcError as exc:
            self.error = f"{action}: JSON-RPC error {exc.code}: {exc.message}"
        except (RequestTimeout, TransportError) as exc:
            self.error = f"{action}: {exc}"
        await self.publish(self._state(error=True))

    async def start(self) -> None:
        await self.publish(self._state())

    def _state(self, error: bool = False) -> dict[str, Any]:
        client = self.ctx.client
        caps = (client.server_capabilities or {}) if client else {}
        resources = caps.get("resources") if isinstance(caps.get("resources"), dict) else {}
        html = oob("subs-state", "innerHTML", render("sessions/features/subscriptions_state.html", {
            "subscribed": self.subscribed, "can_subscribe": bool(resources.get("subscribe"))}))
        return {"html": html + error_fragment(self.error) if error or self.error else html}

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(self._state())]
