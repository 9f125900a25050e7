"""The tap: every frame, stderr line and note becomes a TranscriptEvent, before any validation.

A debugger shows what went over the wire, including what is wrong, so events are made
from the exact raw text first; parsing is attempted afterwards and its failure is a fact
of the event, never an exception.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Required, TypedDict

from . import jsonrpc, jsontext

Direction = Literal["send", "recv", "stderr", "note"]

# Frames larger than this are recorded truncated (with their real size); delivery is unaffected.
DEFAULT_MAX_RAW = 1_000_000
INVALID_UTF8 = "invalid UTF-8 (shown with replacement characters)"
TOO_DEEP = (
    f"nested deeper than {jsontext.MAX_DEPTH} levels: the parsed message is cut there (what the client "
    "and the page use); the raw text is whole"
)


class EventRow(TypedDict, total=False):
    """A TranscriptEvent as its JSONL line (`to_dict`): the export format, the `data` of its
    database row, what the pages' lines are rendered from."""

    seq: Required[int]
    t: Required[float]
    dir: Required[Direction]
    raw: str | None
    message: Any
    parse_error: str
    problems: list[str]
    kind: str
    text: str
    http: dict[str, Any]
    sse_id: str
    sse_event: str
    reply_to: int
    latency_ms: float
    size: int
    data: dict[str, Any]
    truncated: bool
    schema_problems: list[dict[str, str]]
    schema_lint: dict[str, Any]


@dataclass(slots=True)
class TranscriptEvent:
    seq: int
    t: float  # seconds since the tap started (monotonic)
    dir: Direction
    raw: str | None = None  # exact text; None for notes
    message: Any = None  # parsed JSON, or None
    parse_error: str | None = None
    problems: list[str] | None = None  # JSON-RPC departures seen in a parsed frame
    kind: str | None = None  # notes: connected, era, closed, error, timeout, http, ...
    text: str | None = None  # notes and stderr: the human text
    http: dict[str, Any] | None = None  # method, url, status, headers (masked), content_type
    sse_id: str | None = None
    reply_to: int | None = None  # seq of the request event this response answers
    latency_ms: float | None = None
    size: int | None = None  # size in bytes of the frame as received/sent
    truncated: bool = False
    data: dict[str, Any] | None = None  # extra structured facts (era evidence, ...)
    schema_problems: list[dict[str, str]] | None = None  # where the frame breaks the MCP schema (lint/)
    schema_lint: dict[str, Any] | None = None  # what it was checked against: version, definition, spec
    sse_event: str | None = None  # the SSE event's `event:` line, when it had one

    @property
    def method(self) -> str | None:
        m = self.message
        return m.get("method") if isinstance(m, dict) and isinstance(m.get("method"), str) else None

    @property
    def rpc_id(self) -> Any:
        m = self.message
        return m.get("id") if isinstance(m, dict) else None

    def to_dict(self) -> EventRow:
        """The JSONL line shared by the CLI and exports: seq, t, dir, raw (not for notes), message."""
        out: EventRow = {"seq": self.seq, "t": round(self.t, 6), "dir": self.dir}
        if self.dir != "note":
            out["raw"] = self.raw
        out["message"] = self.message
        # Unrolled (once per event on the way to the database): the fields that are set, in this order.
        if self.parse_error is not None:
            out["parse_error"] = self.parse_error
        if self.problems is not None:
            out["problems"] = self.problems
        if self.kind is not None:
            out["kind"] = self.kind
        if self.text is not None:
            out["text"] = self.text
        if self.http is not None:
            out["http"] = self.http
        if self.sse_id is not None:
            out["sse_id"] = self.sse_id
        if self.sse_event is not None:
            out["sse_event"] = self.sse_event
        if self.reply_to is not None:
            out["reply_to"] = self.reply_to
        if self.latency_ms is not None:
            out["latency_ms"] = self.latency_ms
        if self.size is not None:
            out["size"] = self.size
        if self.data is not None:
            out["data"] = self.data
        if self.truncated:
            out["truncated"] = True
        if self.schema_problems is not None:
            out["schema_problems"] = self.schema_problems
        if self.schema_lint is not None:
            out["schema_lint"] = self.schema_lint
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TranscriptEvent:
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: v for k, v in d.items() if k in names})


Listener = Callable[[TranscriptEvent], None]

# `data` member marking the events of another connection on a session's tap (the server check's
# version probes): one transcript, one numbering, but not the session's own traffic.
CONNECTION = "connection"
# `data` member marking a frame sent invalid on purpose (the server check's probes: an unknown
# method, a tools/call without a name...), saying why: the schema lint shows its problems on its
# line without counting them. Set around the sending of one request (`McpClient.request`'s
# `on_purpose`), read as its frame is recorded.
ON_PURPOSE = "on_purpose"
SENT_ON_PURPOSE: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_sent_on_purpose", default=None)


@dataclass
class Tap:
    """Numbers events, pairs responses with their requests, and hands each event to listeners."""

    max_raw: int = DEFAULT_MAX_RAW
    clock: Callable[[], float] = time.monotonic
    listeners: list[Listener] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.start = self.clock()
        # The wall-clock time (Unix seconds) at which `t` is 0: events carry monotonic `t` (immune
        # to clock changes); a page shows `epoch + t` as the time of day, in the viewer's zone.
        self.epoch = time.time()
        self.seq = 0
        # (direction the request went, id key) -> (seq, time) of the request event.
        self._open: dict[tuple[str, str], tuple[int, float]] = {}
        self._gate = asyncio.Event()
        self._gate.set()
        self.exchanges = 0

    def exchange(self) -> int:
        """A new HTTP exchange's number: its request's and its response's events carry it (`http.exchange`)."""
        self.exchanges += 1
        return self.exchanges

    # Back-pressure: a listener that cannot keep up (the worker saving to a database) pauses the
    # tap; transports that support it stop reading until it resumes, so a flooding server blocks
    # on its own full pipe instead of every event piling up in memory here.

    def pause(self) -> None:
        self._gate.clear()

    def resume(self) -> None:
        self._gate.set()

    @property
    def paused(self) -> bool:
        return not self._gate.is_set()

    async def ready(self) -> None:
        """Return once the tap is not paused (at once, usually)."""
        if not self._gate.is_set():
            await self._gate.wait()

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def _emit(self, event: TranscriptEvent) -> TranscriptEvent:
        for listener in list(self.listeners):
            listener(event)
        return event

    def _new(self, dir: Direction, **kw: Any) -> TranscriptEvent:
        self.seq += 1
        return TranscriptEvent(seq=self.seq, t=self.clock() - self.start, dir=dir, **kw)

    # Frames -----------------------------------------------------------------

    def frame(self, dir: Literal["send", "recv"], raw: str | bytes, **facts: Any) -> tuple[TranscriptEvent, Any]:
        """Record one frame; return the event and the parsed message (None if unparsable).

        The parsed message is returned separately because a truncated event does not keep it.
        """
        utf8: bytes | None = None  # the text's own UTF-8, when it is what was read
        if isinstance(raw, bytes):
            size = len(raw)
            text = raw.decode("utf-8", errors="replace")
            if "\ufffd" not in text:
                utf8 = raw
            elif b"\xef\xbf\xbd" not in raw:
                facts.setdefault("problems", []).append(INVALID_UTF8)
        else:
            text = raw
            size = len(raw.encode("utf-8", errors="replace"))
        message: Any = None
        parse_error = None
        try:
            message = jsontext.loads(text, utf8)
        except (ValueError, RecursionError) as exc:
            parse_error = str(exc)
        problems = jsonrpc.problems(message) if parse_error is None else None
        if parse_error is None and jsontext.too_deep(message, text):
            message = jsontext.cut_deep(message)
            problems = [*(problems or []), TOO_DEEP]
        if facts:
            given = facts.pop("problems", None)
            if given:
                problems = given + (problems or [])
        self.seq += 1
        # Positional (the frame's usual fields): a flood makes one of these per message, and the
        # keyword call into a 17-field dataclass was a sixth of the reader's time.
        event = TranscriptEvent(
            self.seq,
            self.clock() - self.start,
            dir,
            text,
            message,
            parse_error,
            problems or None,
            None,
            None,
            None,
            None,
            None,
            None,
            size,
        )
        if facts:
            for name, value in facts.items():
                setattr(event, name, value)
        if size > self.max_raw:
            event.raw = text[: self.max_raw]
            event.message = None
            event.truncated = True
        self._pair(event, message)
        return self._emit(event), message

    def send(self, raw: str | bytes, **facts: Any) -> tuple[TranscriptEvent, Any]:
        why = SENT_ON_PURPOSE.get()
        if why is not None:
            facts["data"] = {**(facts.get("data") or {}), ON_PURPOSE: why}
        return self.frame("send", raw, **facts)

    def recv(self, raw: str | bytes, **facts: Any) -> tuple[TranscriptEvent, Any]:
        return self.frame("recv", raw, **facts)

    def _pair(self, event: TranscriptEvent, message: Any) -> None:
        # (Notifications, most frames of a flood, have no id: nothing to pair.)
        if type(message) is not dict or "id" not in message or not isinstance(message["id"], (str, int)):
            return
        kind = jsonrpc.classify(message)
        if kind == "request":
            self._open[(event.dir, jsonrpc.id_key(message["id"]))] = (event.seq, event.t)
        elif kind in ("response", "error"):
            other = "send" if event.dir == "recv" else "recv"
            opened = self._open.pop((other, jsonrpc.id_key(message["id"])), None)
            if opened:
                event.reply_to = opened[0]
                event.latency_ms = round((event.t - opened[1]) * 1000, 3)

    def open_requests(self) -> list[tuple[str, str, int, float]]:
        """The requests not yet answered (direction, id key, seq, t): what pairs a later response,
        kept by a recording that is applied in parts (a capture's uploads)."""
        return [(dir, key, seq, t) for (dir, key), (seq, t) in self._open.items()]

    def resume_from(self, seq: int, open_requests: list[tuple[str, str, int, float]]) -> None:
        """Go on numbering after `seq`, pairing responses with `open_requests` (open_requests())."""
        self.seq = seq
        self._open = {(dir, key): (number, t) for dir, key, number, t in open_requests}

    # Everything else ----------------------------------------------------------

    def stderr(self, line: str | bytes) -> TranscriptEvent:
        text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
        size = len(text)
        event = self._new(
            "stderr", raw=text[: self.max_raw], text=text[: self.max_raw], size=size, truncated=size > self.max_raw
        )
        return self._emit(event)

    def note(self, kind: str, text: str, **data: Any) -> TranscriptEvent:
        http = data.pop("http", None)
        return self._emit(self._new("note", kind=kind, text=text, http=http, data=data or None))

    def connection(self, label: str) -> Tap:
        """A tap for another connection to the same server, feeding this one's transcript: its
        events are numbered with this tap's and heard by its listeners, each marked
        `data["connection"] = label`; its responses are paired with its own requests only."""
        return _ConnectionTap(self, label)


class _ConnectionTap(Tap):
    def __init__(self, parent: Tap, label: str) -> None:
        super().__init__(max_raw=parent.max_raw, clock=parent.clock, listeners=parent.listeners)
        self.parent, self.label = parent, label
        self.start, self.epoch = parent.start, parent.epoch
        self._gate = parent._gate  # paused with the session (back-pressure)

    def connection(self, label: str) -> Tap:
        return self.parent.connection(label)

    def exchange(self) -> int:
        return self.parent.exchange()

    def frame(self, dir: Literal["send", "recv"], raw: str | bytes, **facts: Any) -> tuple[TranscriptEvent, Any]:
        facts["data"] = {**(facts.get("data") or {}), CONNECTION: self.label}
        self.seq = self.parent.seq
        return super().frame(dir, raw, **facts)

    def _new(self, dir: Direction, **kw: Any) -> TranscriptEvent:
        kw["data"] = {**(kw.get("data") or {}), CONNECTION: self.label}
        self.seq = self.parent.seq
        return super()._new(dir, **kw)

    def _emit(self, event: TranscriptEvent) -> TranscriptEvent:
        self.parent.seq = self.seq  # numbered: the parent goes on from here
        return super()._emit(event)
