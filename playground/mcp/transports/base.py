"""What every transport offers the client: raw frames out, raw frames in, facts to the tap.

A transport moves frames; it does not interpret MCP beyond what its wire needs (HTTP
headers that mirror body fields, session ids). Frames it receives are recorded on the tap
first and then handed, parsed, to the client through `on_message`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

from ..events import Tap


class TransportError(Exception):
    """The transport could not carry a frame or lost its connection."""


class HttpStatusError(TransportError):
    """An HTTP error status for a POSTed request. `body` is the text, `json` its parse if any."""

    def __init__(self, status: int, body: str, json: Any = None, message: str | None = None) -> None:
        super().__init__(message or f"HTTP {status}" + (f": {body[:200]}" if body else ""))
        self.status = status
        self.body = body
        self.json = json


class SessionExpired(HttpStatusError):
    """The server answered 404 to a request carrying our Mcp-Session-Id: the session is gone."""


MessageHandler = Callable[[Any], None]
ClosedHandler = Callable[[str | None], None]
FailedHandler = Callable[[Any, Exception], None]


class Transport(abc.ABC):
    """Base class. The client calls `bind` then `start`, `send` any number of times, then `close`."""

    #: Name shown in notes and the UI ("stdio", "streamable-http", "sse").
    name = "transport"

    def __init__(self, tap: Tap) -> None:
        self.tap = tap
        # Set by the client: the era being spoken and the negotiated/selected protocol version.
        self.era: str = "legacy"
        self.protocol_version: str | None = None
        self._on_message: MessageHandler = lambda message: None
        self._on_closed: ClosedHandler = lambda reason: None
        self._on_failed: FailedHandler = lambda request_id, exc: None

    def bind(self, on_message: MessageHandler, on_closed: ClosedHandler, on_failed: FailedHandler) -> None:
        """on_message(parsed) for every parsed inbound frame; on_closed(reason) once when the
        connection ends on its own; on_failed(request_id, exc) when one request cannot get a response."""
        self._on_message, self._on_closed, self._on_failed = on_message, on_closed, on_failed

    @abc.abstractmethod
    async def start(self) -> None:
        """Open the connection (spawn the process, open the SSE stream, ...)."""

    @abc.abstractmethod
    async def send(self, frame: dict[str, Any] | str, *, headers: dict[str, str] | None = None) -> None:
        """Send one frame. A str is sent exactly as given (malformed on purpose is allowed).
        `headers` are extra HTTP headers for this frame (ignored by stdio)."""

    def waiting_on_user(self) -> bool:
        """True while a person is busy with something the transport needs (authorizing in a
        browser): request deadlines do not run out meanwhile."""
        return False

    def starting(self) -> bool:
        """True while the server is still starting (stdio: it has written nothing yet): the era
        probe's deadline does not run out meanwhile, within the transport's grace."""
        return False

    async def cancel(self, request_id: Any) -> bool:
        """Cancel at the transport level (modern HTTP closes the request's stream).
        Returns False when the client must send `notifications/cancelled` instead."""
        return False

    @abc.abstractmethod
    async def close(self) -> None:
        """Close and release everything; idempotent; never leaves a process or task behind."""
