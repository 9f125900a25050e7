"""OAuth 2.1 in a page session: the connection's authorization (HTTP servers), the
"Authorize" card that sends the person to the authorization server, and the commands the
OAuth pages send (the callback's response, Refresh, Revoke). The only importer of oauth.page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from playground.mcp.auth import OAuth
from playground.oauth import page
from playground.oauth import render as oauth_render

from ..fragments.html import oob
from ..protocol import Command, FeatureEvent
from .base import Feature
from .context import SessionContext, TabContext

if TYPE_CHECKING:
    from playground.registry.models import Server


class Authorization(Feature):
    name = "oauth"
    commands = frozenset({"oauth_callback", "oauth_refresh", "oauth_revoke"})

    @classmethod
    def prepare(cls, server: Server, *, callback_url: str | None = None, **hints: Any) -> dict[str, Any]:
        """HTTP servers only: their settings, and the client secret to mask from the start."""
        if server.transport == "stdio":
            return {}
        auth = page.settings_of(server.pk)
        secret = auth.auth_settings().client_secret if auth else ""
        return {
            "server_pk": server.pk,
            "url": server.url,
            "auth": auth,
            "callback_url": callback_url,
            "secrets": [secret] if secret else [],
        }

    @classmethod
    def fragments(cls, event: dict[str, Any], tab: TabContext) -> list[str]:
        if "done" in event:
            tab.forget("oauth:" + str(event["done"]))
            return [oob(oauth_render.card_id(str(event["done"])), "delete")]
        pending = event["pending"]
        if not tab.first_time("oauth:" + str(pending.get("state", ""))):
            return []
        return [oob("server-requests", "beforeend", oauth_render.authorize_card(pending))]

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.oauth: OAuth | None = None
        self.authorizer: page.PageAuthorizer | None = None
        if self.options.get("url"):
            made = page.make_oauth(
                ctx.tap,
                ctx.session_id,
                self.options["server_pk"],
                self.options["url"],
                self.options.get("auth"),
                self.options.get("callback_url"),
                ctx.config.timeout,
                self.publish,
            )
            if made is not None:
                self.oauth, self.authorizer = made

    def client_auth(self) -> OAuth | None:
        return self.oauth

    async def handle(self, command: Command) -> None:
        # Refresh and revoke make requests: a task of the session, as a call is.
        self.ctx.spawn(
            str(command.get("command")),
            page.handle_command(
                self.oauth, self.authorizer, self.ctx.tap, str(command.get("command")), command.get("params") or {}
            ),
        )

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event({"pending": p}) for p in (self.authorizer.pending() if self.authorizer else [])]
