"""The MCP Apps sandbox origin: served by the same ASGI application, answering only the sandbox
page there.

An app's document is a server's HTML and script. The page frames it on another origin — by
default another host name for the same port (the page on 127.0.0.1:8000, the sandbox on
localhost:8000: another site, so the playground's cookies are not sent to it, and the app's
document cannot reach the page's). Cookies ignore ports, and the same process answers both
names, so this wrapper stands in front of everything: a request whose Host is the sandbox's
gets the sandbox proxy page, its script, or a redirect to the playground — never Django, never a
cookie read or set, never a websocket.

The proxy page (`/sandbox/proxy?host=<the page's origin>&csp=<the resource's _meta.ui.csp>`)
carries the app's policy as its header (`mcp.apps.app_policy`: `connect-src 'none'` unless the
resource names domains, `object-src 'none'`, framed only by `host`, which must be one of the
playground's hosts); the app's document, its `srcdoc` frame, inherits it. The page follows the
spec's handshake (`ui/notifications/sandbox-proxy-ready`, then `sandbox-resource-ready` with the
HTML): static/apps-sandbox.js.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from playground.mcp.apps import PERMISSIONS, app_policy, browser_origin
from playground.mcp.apps import sandbox_origin as apps_sandbox_origin

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

STATIC = Path(__file__).resolve().parent.parent.parent / "static"
SCRIPTS = {"/sandbox/proxy.js": STATIC / "apps-sandbox.js", "/sandbox/token-bucket.js": STATIC / "token-bucket.js"}
PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>MCP App sandbox</title>'
    "<style>html,body{margin:0;height:100%;overflow:hidden;background:transparent}"
    "iframe{border:0;width:100%;height:100%;display:block}</style></head>"
    '<body data-permissions="{permissions}"><script src="/sandbox/token-bucket.js"></script><script src="/sandbox/proxy.js"></script></body></html>'
).replace("{permissions}", html.escape(json.dumps(PERMISSIONS)))  # (the one map: `mcp.apps.policy`)
MAX_QUERY = 16_384  # bytes of the proxy page's query (the csp's domain lists are cut to 32 each anyway)
COMMON = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-resource-policy", b"cross-origin"),
]


def configured() -> str:
    return str(getattr(settings, "PLAYGROUND_APPS_SANDBOX", "") or "").strip()


SAFE = "/%:@!$&'()*+,;=-._~"  # what stays as it is in a redirect's path (RFC 3986's pchar, and "/")


def sandbox_origin(scheme: str, host: str) -> str | None:
    """The sandbox's origin for a page served at `scheme://host` (None: apps are off), exactly as
    the browser will name it (`mcp.apps.sandbox_origin`: the one place it is computed)."""
    return apps_sandbox_origin(configured(), scheme, host)


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers") or []:
        if key == name:
            return bytes(value).decode("latin-1")
    return ""


def is_sandbox_request(scope: Scope) -> bool:
    """Whether this request is addressed to the sandbox origin (by its Host)."""
    value = configured()
    host = _header(scope, b"host").lower()
    if not value or not host:
        return False
    if "://" in value:
        scheme = urlsplit(value).scheme
        return browser_origin(scheme, host) == sandbox_origin(scheme, host)
    domain, _port = split_domain_port(host)
    return domain == value.lower()


def frame_ancestor(host_param: str) -> str | None:
    """The page origin the proxy may be framed by: one of the playground's own (its host among
    ALLOWED_HOSTS, or a trusted origin), never the sandbox's."""
    split = urlsplit(host_param)
    if split.scheme not in ("http", "https") or not split.netloc or split.path or split.query or split.fragment:
        return None
    origin = f"{split.scheme}://{split.netloc}".lower()
    if is_sandbox_request({"headers": [(b"host", split.netloc.encode("latin-1", "replace"))]}):
        return None
    trusted = [o.rstrip("/").lower() for o in getattr(settings, "PLAYGROUND_TRUSTED_ORIGINS", [])]
    domain, _port = split_domain_port(split.netloc.lower())
    if origin in trusted or (domain and validate_host(domain, settings.ALLOWED_HOSTS)):
        return origin
    return None


@functools.cache
def _script(path: str) -> bytes:
    return SCRIPTS[path].read_bytes()


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [*COMMON, *headers]})
    await send({"type": "http.response.body", "body": body})


def _playground_host(scope: Scope) -> str | None:
    """Where a stray visit to the sandbox name goes: the same port on the playground's name."""
    _domain, port = split_domain_port(_header(scope, b"host").lower())
    sandbox = configured().lower()
    name = next((h for h in settings.ALLOWED_HOSTS if h.lower() not in ("*", sandbox) and not h.startswith(".")), None)
    return None if name is None else name + (f":{port}" if port else "")


def _request_target(scope: Scope) -> str:
    """The path and query as the request wrote them: `path` is percent-decoded (`/a%2Fb` and
    `/a/b` alike), so the raw path is kept, re-quoted where anything in it is not URL-safe."""
    raw = scope.get("raw_path")
    path = quote(bytes(raw) if raw else scope.get("path") or "/", safe=SAFE)
    query = quote(bytes(scope.get("query_string") or b""), safe=SAFE + "?")
    return path + (f"?{query}" if query else "")


async def serve(scope: Scope, receive: Receive, send: Send) -> None:
    """A request on the sandbox origin."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 4403})
        return
    path, method = scope.get("path") or "", scope.get("method") or "GET"
    text = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-security-policy", b"default-src 'none'")]
    if method not in ("GET", "HEAD"):
        await _respond(send, 405, b"the sandbox origin serves the sandbox page only\n", text)
        return
    if path in SCRIPTS:
        await _respond(
            send,
            200,
            _script(path),
            [(b"content-type", b"text/javascript; charset=utf-8"), (b"content-security-policy", b"default-src 'none'")],
        )
        return
    if path == "/sandbox/proxy":
        query_bytes = bytes(scope.get("query_string") or b"")
        query = parse_qs(query_bytes[:MAX_QUERY].decode("utf-8", "replace"))
        ancestor = frame_ancestor((query.get("host") or [""])[0])
        if ancestor is None:
            await _respond(send, 400, b"host: not one of the playground's origins\n", text)
            return
        try:
            csp = json.loads((query.get("csp") or ["{}"])[0])
        except ValueError:
            csp = {}
        policy = app_policy(csp, ancestor)
        await _respond(
            send,
            200,
            PAGE.encode(),
            [(b"content-type", b"text/html; charset=utf-8"), (b"content-security-policy", policy.encode("latin-1"))],
        )
        return
    target = _playground_host(scope) if "://" not in configured() else None
    if target is None:
        await _respond(send, 404, b"the sandbox origin serves the sandbox page only\n", text)
        return
    scheme = "https" if scope.get("scheme") == "https" else "http"
    location = f"{scheme}://{target}{_request_target(scope)}"
    await _respond(send, 302, b"", [(b"location", location.encode("latin-1", "replace")), *text])


class SandboxHost:
    """ASGI wrapper: requests addressed to the sandbox origin never reach the application."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and is_sandbox_request(scope):
            await serve(scope, receive, send)
            return
        await self.app(scope, receive, send)
