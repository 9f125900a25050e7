"""Authorization in a page session: the worker's OAuth, and the authorizer that sends the
person's browser to the authorization server and waits for `/oauth/callback/`.

The callback may be served by any process: it finds the session from the `state` prefix
(`s<session id>.`) and sends the response's parameters to the worker's channel.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from django.db import transaction

from playground import security
from playground.mcp.auth import AuthorizationRequest, HeadlessAuthorizer, OAuth
from playground.mcp.auth.recorder import Recorder
from playground.mcp.events import Tap
from playground.transcripts.models import Session

from .models import ServerAuth
from .store import DjangoAuthStore

Publish = Callable[[dict[str, Any]], Awaitable[None]]

STATE = re.compile(r"^s(\d+)\.")
DEFAULT_CALLBACK = "http://127.0.0.1:8000/oauth/callback/"
_SAVING: set[asyncio.Task[None]] = set()


def session_of_state(state: str) -> int | None:
    m = STATE.match(state or "")
    return int(m.group(1)) if m else None


class PageAuthorizer:
    """Waits for the person: the page shows an "Authorize" card linking to the authorization URL."""

    def __init__(self, publish: Publish, redirect_uri: str, mode: str) -> None:
        """`publish(event)` tells the session's tabs: {"pending": ...} shows an "Authorize" card,
        {"done": state} removes it."""
        self.publish = publish
        self._redirect_uri = redirect_uri
        self.mode = mode
        self.waiting: dict[str, tuple[AuthorizationRequest, asyncio.Future[dict[str, str]]]] = {}

    def redirect_uri(self, default: str) -> str:
        return self._redirect_uri

    async def authorize(self, request: AuthorizationRequest, recorder: Recorder) -> dict[str, str]:
        if self.mode == ServerAuth.RedirectMode.HEADLESS:
            return await HeadlessAuthorizer(self._redirect_uri).authorize(request, recorder)
        future: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self.waiting[request.state] = (request, future)
        await self.publish({"pending": self.describe(request)})
        try:
            return await future
        finally:
            self.waiting.pop(request.state, None)
            await self.publish({"done": request.state})

    @staticmethod
    def describe(request: AuthorizationRequest) -> dict[str, Any]:
        return {
            "state": request.state,
            "url": request.url,
            "issuer": request.issuer,
            "redirect_uri": request.redirect_uri,
            "scope": request.params.get("scope", ""),
            "client_id": request.params.get("client_id", ""),
        }

    def pending(self) -> list[dict[str, Any]]:
        return [self.describe(req) for req, _ in self.waiting.values()]

    def resolve(self, params: dict[str, str]) -> bool:
        entry = self.waiting.get(params.get("state", ""))
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(params)
        return True


def settings_of(server_pk: int) -> ServerAuth | None:
    """A server's authorization settings, read when its session starts."""
    return ServerAuth.objects.filter(server_id=server_pk).first()


def make_oauth(
    tap: Tap,
    session_id: int,
    server_pk: int,
    url: str,
    auth: ServerAuth | None,
    redirect_uri: str | None,
    timeout: float,
    publish: Publish,
) -> tuple[OAuth, PageAuthorizer] | None:
    """A page session's OAuth and the authorizer that asks its person, or None when the
    server's settings turn authorization off."""
    settings = auth.auth_settings() if auth else None
    if settings is not None and not settings.enabled:
        return None
    mode = auth.redirect_mode if auth else ServerAuth.RedirectMode.BROWSER
    authorizer = PageAuthorizer(publish, redirect_uri or DEFAULT_CALLBACK, mode)
    oauth = OAuth(
        tap,
        url,
        settings=settings,
        authorizer=authorizer,
        store=DjangoAuthStore(server_pk),
        timeout=timeout,
        on_secret=lambda values: _remember_secrets(session_id, values),
        state_prefix=f"s{session_id}.",
        client_factory=security.net_guard().client,
    )
    return oauth, authorizer


def _remember_secrets(session_id: int, values: list[str]) -> None:
    """Tokens and codes join the session's OAuth secret values: its pages, exports and shares
    mask them (the worker masks what it sends to the pages meanwhile, from `OAuth.redactor()`)."""

    def save() -> None:
        with transaction.atomic():
            session = Session.objects.select_for_update().get(pk=session_id)
            session.oauth_secret_values = sorted(set(session.oauth_secret_values or []) | set(values))
            session.save(update_fields=["oauth_secret_values"])

    task = asyncio.get_running_loop().create_task(database_sync_to_async(save)())
    _SAVING.add(task)  # the loop keeps only a weak reference to a task
    task.add_done_callback(_SAVING.discard)


async def handle_command(
    oauth: OAuth | None, authorizer: PageAuthorizer | None, tap: Tap, command: str, params: dict[str, str]
) -> None:
    """The page's OAuth commands (the callback's response, Refresh, Revoke), run by the worker."""
    if command == "oauth_callback":
        if authorizer is None or not authorizer.resolve(params):
            tap.note(
                "auth",
                "an authorization response arrived that no authorization request waits for "
                "(stale or replayed); ignored",
                step="authorization-response",
                status="failed",
            )
    elif oauth is None:
        tap.note("auth", "this session does not use OAuth", step="token", status="failed")
    elif command == "oauth_refresh":
        if not await oauth.refresh():
            oauth.step("refresh", "failed", "nothing to refresh: no token with a refresh token")
    elif command == "oauth_revoke":
        await oauth.revoke()
