"""Roots: answered from the server's settings without asking; edited on the server's page, a
live session answers from the new list at once (and tells a legacy server it changed).
The Client panel shows them with the capabilities the page declares."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from playground.mcp.transports.base import TransportError

from ..fragments.html import oob
from ..protocol import Command
from .base import Feature, render
from .context import SessionContext

if TYPE_CHECKING:
    from playground.registry.models import Server


class Roots(Feature):
    name = "roots"
    commands = frozenset({"set_roots"})  # sent by the server's edit page
    server_requests = frozenset({"roots/list"})
    panel_template = "sessions/features/roots_panel.html"

    @classmethod
    def prepare(cls, server: Server, **hints: Any) -> dict[str, Any]:
        return {"roots": list(server.roots or [])}

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.roots: list[dict[str, Any]] = list(self.options.get("roots") or [])

    def capabilities(self) -> dict[str, Any]:
        return {"roots": {"listChanged": True}}

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": self.roots}

    async def handle(self, command: Command) -> None:
        """New roots from the server's settings: answer from them, and tell a legacy server."""
        self.roots = [r for r in command.get("params") or [] if isinstance(r, dict)]
        client = self.ctx.client
        if client is not None and not client.closed and client.era == "legacy":
            with contextlib.suppress(TransportError):
                await client.notify("notifications/roots/list_changed")
        await self.publish_state()

    def state_html(self) -> str:
        client = self.ctx.client
        caps = json.dumps(client.capabilities() if client else {}, ensure_ascii=False)
        return oob(
            "client-state",
            "innerHTML",
            render(
                "sessions/features/roots_state.html",
                {"roots": self.roots, "caps_json": caps, "era": client.era if client else ""},
            ),
        )
