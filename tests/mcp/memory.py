"""An in-memory transport for unit tests of the client: the test plays the server.

Only for protocol logic (id correlation, rounds, timeouts); every behaviour is also
tested against real servers elsewhere."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from playground.mcp import jsonrpc
from playground.mcp.transports.base import Transport, TransportError

Handler = Callable[["MemoryTransport", dict[str, Any]], Awaitable[None] | None]


class MemoryTransport(Transport):
    name = "memory"

    def __init__(self, tap, handler: Handler) -> None:
        super().__init__(tap)
        self.handler = handler
        self.sent: list[Any] = []
        self.sent_headers: list[dict[str, str] | None] = []
        self.closed = False
        self._sent_changed = asyncio.Event()

    async def wait_sent(self, count: int) -> None:
        """Until at least `count` frames were sent."""
        while len(self.sent) < count:
            self._sent_changed.clear()
            await self._sent_changed.wait()

    async def start(self) -> None:
        self.tap.note("connected", "memory transport")

    async def send(self, frame, *, headers=None) -> None:
        if self.closed:
            raise TransportError("closed")
        raw = frame if isinstance(frame, str) else jsonrpc.encode(frame)
        _, parsed = self.tap.send(raw)
        self.sent.append(parsed)
        self.sent_headers.append(headers)
        self._sent_changed.set()
        if isinstance(parsed, dict):
            result = self.handler(self, parsed)
            if asyncio.iscoroutine(result):
                asyncio.get_running_loop().create_task(result)

    def deliver(self, message: Any) -> None:
        """The 'server' sends a frame."""
        _, parsed = self.tap.recv(message if isinstance(message, str) else json.dumps(message))
        if parsed is not None:
            self._on_message(parsed)

    def reply(self, request: dict[str, Any], result: Any) -> None:
        self.deliver({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def error(self, request: dict[str, Any], code: int, message: str, data: Any = None) -> None:
        self.deliver(jsonrpc.error_response(request["id"], code, message, data))

    def drop(self, reason: str) -> None:
        self.closed = True
        self._on_closed(reason)

    async def close(self) -> None:
        self.closed = True
