"""The server's frames as frames: every one it sent during the check (the session's and the
version probes'), judged as it came by what the tap found in it — not JSON, not UTF-8, not
JSON-RPC 2.0, a response to no request, a log message from a server that did not declare
`logging`, nested too deep or too large to keep whole.

2025-11-25 and 2026-07-28: "JSON-RPC messages MUST be UTF-8 encoded" and, over stdio, "The
server MUST NOT write anything to its stdout that is not a valid MCP message" (Transports);
"All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification" and
"Result responses MUST include the same ID as the request they correspond to" (Base Protocol);
"Servers that emit log message notifications MUST declare the logging capability" (Logging).
An error response without an id is allowed where the server could not read the request's
(a `warn`: ours were readable); so is anything in the body of an HTTP error status.

`Wire` is fed by the trace on every frame received (a flood's notifications too: a few
attribute reads each); `row` judges at the end, also when the battery was cut short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import jsonrpc
from ..events import CONNECTION, INVALID_UTF8, TOO_DEEP, TranscriptEvent
from .result import FAIL, PASS, SKIP, WARN, CheckResult, Status, clip, worst

if TYPE_CHECKING:
    from .context import CheckContext

SEQS_KEPT = 5  # seqs cited for each kind of finding

NOT_JSON, NOT_UTF8, NOT_JSONRPC, UNASKED, NO_ID, LOG, DEEP, CUT, OTHER = (
    "not-json",
    "not-utf8",
    "not-jsonrpc",
    "unasked",
    "no-id",
    "log",
    "deep",
    "cut",
    "other",
)
# Each finding: its status and how the row says it (count, an example); in the order a row lists them.
SAYS: dict[str, tuple[Status, str]] = {
    NOT_JSON: (
        FAIL,
        "{n} frame(s) are not JSON ({example}): a server MUST send only JSON-RPC messages "
        "(stdio: nothing else on stdout)",
    ),
    NOT_UTF8: (FAIL, "{n} frame(s) are not valid UTF-8: JSON-RPC messages MUST be UTF-8 encoded"),
    NOT_JSONRPC: (FAIL, "{n} frame(s) break JSON-RPC 2.0 ({example}): every message MUST follow it"),
    UNASKED: (
        FAIL,
        "{n} response(s) answer no request of ours (id {example}, unknown or already answered): a "
        "response MUST carry the id of the request it answers, once",
    ),
    LOG: (
        FAIL,
        "{n} notifications/message, but `logging` is not advertised: servers that emit log messages "
        "MUST declare the `logging` capability",
    ),
    NO_ID: (WARN, "{n} error response(s) without an id (allowed only when the request's id could not be read)"),
    DEEP: (WARN, "{n} frame(s) nested deeper than the playground reads (cut where shown)"),
    CUT: (WARN, "{n} frame(s) larger than the transcript keeps ({example} bytes): recorded cut"),
    OTHER: (WARN, "{n} frame(s) with another problem ({example})"),
}


@dataclass(slots=True)
class Finding:
    count: int = 0
    seqs: list[int] = field(default_factory=list)
    example: str = ""


class Wire:
    """What the server's frames were, as frames: counts and the first seqs of each finding."""

    def __init__(self) -> None:
        self.frames = 0
        self.found: dict[str, Finding] = {}

    def see(self, event: TranscriptEvent) -> None:
        """One frame received (`dir == "recv"`)."""
        self.frames += 1
        http = event.http
        if http is not None and (http.get("status") or 0) >= 400:
            return  # an HTTP error's body: "MAY comprise a JSON-RPC error response that has no id"
        if event.parse_error is not None:
            self._add(NOT_JSON, event, event.parse_error)
        if event.problems:
            self._problems(event)
        if event.truncated:
            self._add(CUT, event, f"{event.size:,}")
        message = event.message
        if type(message) is dict:
            if message.get("method") == "notifications/message":
                if event.data is None or CONNECTION not in event.data:  # the session's own connection
                    self._add(LOG, event)
            elif event.reply_to is None and ("result" in message or "error" in message):
                ident = message.get("id")
                if ident is None and "error" in message:
                    self._add(NO_ID, event)
                elif ident is not None:
                    self._add(UNASKED, event, clip(repr(ident), 40))

    def _problems(self, event: TranscriptEvent) -> None:
        """The tap's problems, told apart (rare: only frames that have some come here)."""
        departures = set(jsonrpc.problems(event.message)) if event.message is not None else set()
        for problem in event.problems or ():
            kind = (
                NOT_UTF8
                if problem == INVALID_UTF8
                else DEEP
                if problem == TOO_DEEP
                else NOT_JSONRPC
                if problem in departures
                else OTHER
            )
            self._add(kind, event, problem)

    def _add(self, kind: str, event: TranscriptEvent, example: str = "") -> None:
        found = self.found.get(kind)
        if found is None:
            found = self.found[kind] = Finding(example=clip(example, 80))
        found.count += 1
        if len(found.seqs) < SEQS_KEPT:
            found.seqs.append(event.seq)


def row(ctx: CheckContext) -> CheckResult:
    wire = ctx.trace.wire
    name = "wire: the server's frames"
    found = dict(wire.found)
    if LOG in found and ctx.advertised("logging"):
        del found[LOG]
    if not wire.frames:
        return CheckResult(name, SKIP, "the server sent no frame")
    if not found:
        return CheckResult(
            name, PASS, f"{wire.frames:,} frames: JSON-RPC 2.0 messages, each response answering a request of ours"
        )
    said = [
        (SAYS[k][0], SAYS[k][1].format(n=f"{found[k].count:,}", example=found[k].example)) for k in SAYS if k in found
    ]
    return CheckResult(
        name,
        worst(*(s for s, _ in said)),
        f"of {wire.frames:,} frames: " + "; ".join(t for _, t in said),
        [s for f in found.values() for s in f.seqs],
    )
