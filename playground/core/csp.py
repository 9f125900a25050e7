"""Content-Security-Policy on every response: the app's own scripts and styles only, no inline
script or style, nothing loaded from elsewhere, no framing. A server's output reaches the
pages escaped (sessions/fragments/html.py); this is the second wall should anything slip through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

from .sandbox import sandbox_origin

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:; "
    "font-src 'self'; frame-src 'self'{frames}; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'; "
    "connect-src 'self'{sockets}"
)


def policy(request: HttpRequest) -> str:
    """The policy; connect-src names the page's own websocket origin (older browsers do not
    count ws: as 'self'); frame-src the MCP Apps sandbox origin (core/sandbox.py), the one
    other origin a page may frame."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return POLICY.format(sockets="", frames="")
    sandbox = sandbox_origin(request.scheme or "http", host)
    return POLICY.format(sockets=f" ws://{host} wss://{host}", frames=f" {sandbox}" if sandbox else "")


class ContentSecurityPolicyMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return self._add(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        response = await self.get_response(request)
        return self._add(request, response)

    @staticmethod
    def _add(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy(request)
        return response


__all__ = ["ContentSecurityPolicyMiddleware", "policy"]
