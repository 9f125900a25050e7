"""The hook into the HTTP transports: an `httpx.Auth` on the transport's client, so every
request (POST, the GET stream, DELETE; Streamable HTTP and HTTP+SSE alike) carries the
token, and a 401 — or a 403 `insufficient_scope` — runs the flow and retries the request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Generator

import httpx

from .flow import OAuth, Outcome
from .recorder import Exchange

# Authorizations for one request (initial + step-ups/re-authorizations) before giving up.
MAX_AUTHORIZATIONS_PER_REQUEST = 3
# A 401/403 the flow could not get past carries the flow's outcome here (see auth_failure).
OUTCOME = "playground.auth_outcome"


def auth_failure(response: httpx.Response) -> str | None:
    """The error message for a 401/403 that authorization could not get past: the step that
    failed and why, not only the server's "invalid_token" (None when no flow ran for it)."""
    outcome = response.extensions.get(OUTCOME)
    if not isinstance(outcome, Outcome):
        return None
    return f"HTTP {response.status_code}: authorization {outcome.status} at {outcome.step}: {outcome.reason}"


def protocol_version_of(request: httpx.Request, negotiated: str | None = None) -> str | None:
    """The protocol version a request is made under: its `MCP-Protocol-Version` header (sent
    once a version is negotiated, and on every modern request), else the version an `initialize`
    request offers (the handshake itself is what gets the first 401), else `negotiated` (the
    HTTP+SSE transport sends no header); None before anything says (the HTTP+SSE GET)."""
    header = request.headers.get("mcp-protocol-version")
    if header:
        return header
    if request.method == "POST":
        try:
            body = json.loads(request.content)
        except (ValueError, httpx.RequestNotRead):
            body = None
        params = body.get("params") if isinstance(body, dict) and body.get("method") == "initialize" else None
        offered = params.get("protocolVersion") if isinstance(params, dict) else None
        if isinstance(offered, str) and offered:
            return offered
    return negotiated


class OAuthHttpxAuth(httpx.Auth):
    """`negotiated`: the transport's protocol version (negotiated or selected), when it has one."""

    def __init__(self, oauth: OAuth, negotiated: Callable[[], str | None] | None = None) -> None:
        self.oauth = oauth
        self.negotiated = negotiated or (lambda: None)

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("OAuth is for the asyncio transports only")
        yield request  # pragma: no cover

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        header = await self.oauth.authorization_header()
        if header:
            request.headers["Authorization"] = header
        response = yield request
        attempts = 0
        while response.status_code in (401, 403):
            challenges = response.headers.get_list("www-authenticate")
            if response.status_code == 403 and not any("bearer" in c.lower() for c in challenges):
                return  # a plain 403: nothing to do with tokens
            await response.aread()
            self._record_challenge(request, response)
            if attempts >= MAX_AUTHORIZATIONS_PER_REQUEST:
                reason = f"gave up after {attempts} authorizations for this request (HTTP {response.status_code} again)"
                self.oauth.outcome = Outcome("refused", "retry", reason)
                self.oauth.step(
                    "retry", "refused", reason, expected="clients SHOULD limit retries (Step-Up Authorization Flow)"
                )
                response.extensions[OUTCOME] = self.oauth.outcome
                return
            sent = request.headers.get("authorization")
            retry = await self.oauth.handle(
                response.status_code, challenges, sent, protocol_version=protocol_version_of(request, self.negotiated())
            )
            if not retry:
                response.extensions[OUTCOME] = self.oauth.outcome
                return
            attempts += 1
            header = await self.oauth.authorization_header()
            if header:
                request.headers["Authorization"] = header
            response = yield request
            status = response.status_code
            self.oauth.step(
                "retry",
                "info" if status in (401, 403) else "ok",
                f"retried {request.method} {request.url} with the new token → HTTP {status}",
                url=str(request.url),
                method=request.method,
                status_code=status,
            )

    def _record_challenge(self, request: httpx.Request, response: httpx.Response) -> None:
        ex = Exchange(request.method, str(request.url), response.status_code, response.headers, response.content)
        body = request.content if request.method == "POST" else None
        self.oauth.recorder.record(
            "challenge",
            ex,
            dict(request.headers),
            body,
            request.headers.get("content-type", "").split(";")[0],
            response,
        )
        www = response.headers.get_list("www-authenticate")
        self.oauth.step(
            "challenge",
            "info",
            f"HTTP {response.status_code} from the MCP server"
            + (f"; WWW-Authenticate: {' | '.join(www)}" if www else " without WWW-Authenticate"),
            status_code=response.status_code,
            www_authenticate=www,
            url=str(request.url),
        )
