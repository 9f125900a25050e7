"""The user-facing step of the authorization code flow, pluggable like the responder: send
the user agent to the authorization URL and get the redirect's parameters back.

HeadlessAuthorizer (CLI, conformance) follows the first redirect itself — enough for an
authorization server that approves without a person (the conformance mock does). The page
has its own authorizer that sends the browser there and waits for `/oauth/callback/`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

from .recorder import Recorder, mask_url


class AuthorizationAborted(Exception):
    """No authorization response came back (the person gave up, the server wants a login page...)."""


@dataclass
class AuthorizationRequest:
    url: str  # the whole authorization URL (no secret in it: PKCE sends the challenge only)
    redirect_uri: str
    state: str
    issuer: str
    params: dict[str, str] = field(default_factory=dict)


class Authorizer(Protocol):
    def redirect_uri(self, default: str) -> str:
        """The redirect URI this authorizer can receive (registered with the AS)."""

    async def authorize(self, request: AuthorizationRequest, recorder: Recorder) -> dict[str, str]:
        """The authorization response's parameters (code, state, iss or error...)."""


def callback_params(location: str, redirect_uri: str) -> dict[str, str] | None:
    """The query of a redirect to our redirect URI, or None when it goes elsewhere."""
    got, want = urlsplit(location), urlsplit(redirect_uri)
    if (got.scheme, got.netloc, got.path) != (want.scheme, want.netloc, want.path):
        return None
    return dict(parse_qsl(got.query, keep_blank_values=True))


class HeadlessAuthorizer:
    """GET the authorization URL without following redirects and read `Location`."""

    def __init__(self, redirect_uri: str | None = None) -> None:
        self._redirect_uri = redirect_uri

    def redirect_uri(self, default: str) -> str:
        return self._redirect_uri or default

    async def authorize(self, request: AuthorizationRequest, recorder: Recorder) -> dict[str, str]:
        ex = await recorder.send("authorization-request", "GET", request.url, headers={"Accept": "text/html"})
        if ex.error:
            raise AuthorizationAborted(f"the authorization endpoint could not be reached: {ex.error}")
        location = ex.headers.get("location")
        if ex.status not in (301, 302, 303, 307, 308) or not location:
            raise AuthorizationAborted(
                f"the authorization endpoint answered HTTP {ex.status} without a redirect: it wants a person "
                f"(log in, consent). Open the authorization URL in a browser, or use the page."
            )
        params = callback_params(location, request.redirect_uri)
        if params is None:
            raise AuthorizationAborted(
                f"the authorization endpoint redirected to {mask_url(location)}, not to our "
                f"redirect URI {request.redirect_uri} (a login page?)"
            )
        return params
