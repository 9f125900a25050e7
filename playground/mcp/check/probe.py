"""Asking a server one thing and keeping what it answered, with the transcript lines that show it.

`Trace` listens to the tap (before the session connects, so the handshake is in it) and keeps a
small index of frames: which request went out at which seq, which response answered it, the
notes. `ask()` sends one request through a client and returns an `Answer` (result, error,
timeout or lost connection — never an exception for what the server did) with its seqs.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ..client import McpClient, ProtocolError, RequestTimeout, ignore_progress
from ..events import Tap, TranscriptEvent
from ..jsonrpc import JsonRpcError
from ..transports.base import HttpStatusError, TransportError
from .result import clip
from .wire import Wire

MAX_FRAMES = 20_000  # index entries kept (a flooding server's notifications are not indexed)


@dataclass(slots=True)
class Frame:
    seq: int
    dir: str
    method: str | None
    reply_to: int | None
    latency_ms: float | None
    kind: str | None  # notes


class Trace:
    """The seqs of the requests the check makes and of their answers (with their latencies), and
    what every frame the server sent was as a frame (`wire`)."""

    def __init__(self, tap: Tap) -> None:
        self.tap = tap
        self.frames: list[Frame] = []
        self.stderr: list[int] = []  # the server's stderr lines (a crash's traceback)
        self.wire = Wire()
        tap.subscribe(self._on_event)

    def _on_event(self, event: TranscriptEvent) -> None:
        if event.dir == "recv":
            self.wire.see(event)
        elif event.dir == "stderr":
            if len(self.stderr) < MAX_FRAMES:
                self.stderr.append(event.seq)
            return
        if len(self.frames) >= MAX_FRAMES:
            return
        message = event.message
        if event.dir == "recv" and event.reply_to is None and event.kind is None:
            return  # notifications and server requests: not what a row cites
        method = event.method if isinstance(message, dict) else None
        self.frames.append(Frame(event.seq, event.dir, method, event.reply_to, event.latency_ms, event.kind))

    def mark(self) -> int:
        return self.tap.seq

    def stderr_since(self, since: int, last: int = 50) -> list[int]:
        """The server's last `last` stderr lines after `since` (what a crash printed)."""
        return [seq for seq in self.stderr if seq > since][-last:]

    def seqs(self, since: int, methods: tuple[str, ...] | None = None, until: int | None = None) -> list[int]:
        """Requests sent after `since` (of `methods`, if given), their answers, and the notes between."""
        until = self.tap.seq if until is None else until
        window = [f for f in self.frames if since < f.seq <= until]
        sent = {f.seq for f in window if f.dir == "send" and (methods is None or f.method in methods)}
        return [f.seq for f in window if f.seq in sent or f.reply_to in sent or f.dir == "note"]


@dataclass
class Answer:
    """What one request got."""

    method: str
    result: Any = None
    error: JsonRpcError | None = None
    http_status: int | None = None
    timed_out: bool = False
    lost: str | None = None  # the connection failed (text), or the client gave up
    seqs: list[int] = field(default_factory=list)
    timeout: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.lost is None

    @property
    def code(self) -> int | None:
        return self.error.code if self.error is not None else None

    @property
    def is_error_result(self) -> bool:
        return self.ok and isinstance(self.result, dict) and self.result.get("isError") is True

    def describe(self) -> str:
        """The answer in a few words, for a reason."""
        if self.timed_out:
            return f"no answer within {self.timeout:g} s"
        if self.lost is not None:
            return f"no answer: {clip(self.lost)}"
        if self.error is not None:
            http = f" (HTTP {self.http_status})" if self.http_status else ""
            return f"error {self.error.code}{http}: {clip(self.error.message, 120)}"
        if self.is_error_result:
            return "a result with isError: true"
        return "a result"


def error_from(exc: HttpStatusError) -> JsonRpcError | None:
    """The JSON-RPC error in an HTTP error's body, if it carries one (modern servers do)."""
    body = exc.json
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return JsonRpcError.from_error(body["error"])
    return None


async def ask(
    client: McpClient,
    trace: Trace,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    timeout: float,
    progress: bool = False,
    on_purpose: str | None = None,
) -> Answer:
    """Send one request and wait for its answer (at most `timeout`, reset by progress if asked).
    `on_purpose`: why the request is invalid on purpose (its line is marked, its schema problems
    not counted)."""
    answer = Answer(method=method, timeout=timeout)
    since = trace.mark()
    try:
        answer.result = await client.request(
            method, params, timeout=timeout, on_progress=ignore_progress if progress else None, on_purpose=on_purpose
        )
    except JsonRpcError as exc:
        answer.error = exc
    except RequestTimeout:
        answer.timed_out = True
    except HttpStatusError as exc:
        answer.http_status = exc.status
        answer.error = error_from(exc)
        if answer.error is None:
            answer.lost = str(exc)
    except TransportError as exc:
        answer.lost = str(exc) or "the connection closed"
    except ProtocolError as exc:
        answer.lost = str(exc)
    except asyncio.CancelledError:
        raise
    answer.seqs = trace.seqs(since, (method,))
    return answer
