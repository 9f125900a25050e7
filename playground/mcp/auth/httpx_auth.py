"""The hook into the HTTP transports: an `httpx.Auth` on the transport's client, so every
request (POST, the GET stream, DELETE; Streamable HTTP and HTTP+SSE alike) carries the
token, and a 401 — or a 403 `insufficient_scope` — runs the flow and retries the request.
"""
from __future__ import annotations

from collections.abc import AsyncGenerator, Generator

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


def is_legacy_request(request: httpx.Request) -> bool:
    """Modern (2026-07-28) requests carry `Mcp-Method` and a 2026+ `MCP-Protocol-Version`."""
    version = request.headers.get("mcp-protocol-version", "")
    return "mcp-method" not in request.headers and not version >= "2026"


class OAuthHttpxAuth(httpx.Auth):
    def __init__(self, oauth: OAuth) -> None:
        self.oauth = oauth

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
                self.oauth.step("retry", "refused", reason, expected="clients SHOULD limit retries "
                                "(Step-Up Authorization Flow)")
                response.extensions[OUTCOME] = self.oauth.outcome
                return
            sent = request.headers.get("authorization")
            retry = await self.oauth.handle(response.status_code, challenges, sent, legacy=is_legacy_request(request))
            if not retry:
                response.extensions[OUTCOME] = self.oauth.outcome
                return
            attempts += 1
            header = await self.oauth.authorization_header()
            if header:
                request.headers["Authorization"] = header
            response = yield request
            status = response.status_code
            self.oauth.step("retry", "info" if status in (401, 403) else "ok",
                            f"retried {request.method} {request.url} with the new token → HTTP {status}",
                            url=str(request.url), method=request.method, status_code=status)

    def _record_challenge(self, request: httpx.Request, response: httpx.Response) -> None:
        ex = Exchange(request.method, str(request.url), response.status_code, response.headers, response.content)
        body = request.content if request.method == "POST" else None
        self.oauth.recorder.record("challenge", ex, dict(request.headers), body,
                                   request.headers.get("content-type", "").split(";")[0], response)
        www = response.headers.get_list("www-authenticate")
        self.oauth.step("challenge", "info", f"HTTP {response.status_code} from the MCP server"
                        + (f"; WWW-Authenticate: {' | '.join(www)}" if www else " without WWW-Authenticate"),
                        status_code=response.status_code, www_authenticate=www, url=str(request.url))
