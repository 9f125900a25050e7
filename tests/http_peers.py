"""Helpers for tests against HTTP peers (the transports', the sessions', the security tests'): real
peers on loopback, a recorder, and a tiny scripted HTTP server for faults no real peer will produce
on demand (cut streams, trickles). The peers themselves are fixtures in tests/conftest.py."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playground.mcp.events import Tap, TranscriptEvent

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """Block until the port accepts connections (or the process died / time ran out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"peer exited with {proc.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"peer did not listen on {port} within {timeout} s")


def start_peer(cmd: list[str], port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    try:
        wait_port(port, proc)
    except Exception:
        stop_peer(proc)
        raise
    return proc


def stop_peer(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as in /proc/net/tcp*) with a socket listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


@dataclass
class Recorder:
    """Collects events, delivered messages, failures and closes; waits on conditions."""

    tap: Tap = field(default_factory=Tap)
    events: list[TranscriptEvent] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    failed: list[tuple[Any, Exception]] = field(default_factory=list)
    closed: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.changed = asyncio.Event()
        self.tap.subscribe(self._event)

    def _event(self, event: TranscriptEvent) -> None:
        self.events.append(event)
        self.changed.set()

    def bind(self, transport: Any) -> Any:
        def on_message(m: Any) -> None:
            self.messages.append(m)
            self.changed.set()

        def on_failed(request_id: Any, exc: Exception) -> None:
            self.failed.append((request_id, exc))
            self.changed.set()

        def on_closed(reason: str | None) -> None:
            self.closed.append(reason)
            self.changed.set()

        transport.bind(on_message, on_closed, on_failed)
        return transport

    async def until(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        async with asyncio.timeout(timeout):
            while not (value := predicate()):
                self.changed.clear()
                await self.changed.wait()
        return value

    def response(self, request_id: Any) -> dict[str, Any] | None:
        return next(
            (
                m
                for m in self.messages
                if isinstance(m, dict) and m.get("id") == request_id and ("result" in m or "error" in m)
            ),
            None,
        )

    async def answer(self, request_id: Any, timeout: float = 10.0) -> dict[str, Any]:
        return await self.until(lambda: self.response(request_id), timeout)

    def notes(self, kind: str | None = None) -> list[TranscriptEvent]:
        return [e for e in self.events if e.dir == "note" and (kind is None or e.kind == kind)]

    def dump(self) -> str:
        return json.dumps([e.to_dict() for e in self.events], ensure_ascii=False)


def initialize(request_id: int = 1, version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "playground-tests", "version": "0"},
        },
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def modern_meta(version: str = "2026-07-28") -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "playground-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


# --- a scripted HTTP/1.1 server for faults ------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Handler = Callable[[Request, asyncio.StreamWriter], Awaitable[None]]


class FaultServer:
    """One response per connection (`Connection: close`), written by the test's handler."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.arrived = asyncio.Event()
        self._server: asyncio.base_events.Server | None = None
        self._conns: set[asyncio.Task[Any]] = set()

    async def __aenter__(self) -> FaultServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._conns):
            task.cancel()
        await asyncio.gather(*self._conns, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conns.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            request = Request(method, path, headers, body)
            self.requests.append(request)
            self.arrived.set()
            await self.handler(request, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._conns.discard(task)
            writer.close()


def head(status: str, content_type: str | None, extra: str = "") -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()
