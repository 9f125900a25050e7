"""A recorded session read back as what its client did: the plan a replay follows.

The input is a transcript as exported (the JSONL lines of a session's export or of the CLI's
`--transcript`, or the JSON export's `events`): every frame both ways, in order. Out of it come

- the client's requests in order, each with the response it finally got (a modern
  `input_required` round's retries belong to the request they retry), whether it asked for
  progress, when the client cancelled it, and the server's notifications and requests that
  came while it was in flight;
- the client's own notifications (`notifications/roots/list_changed`, hand-made ones);
- the server's requests (legacy server→client requests, modern input requests) with the
  answers the client gave, to answer them the same way when they come again.

The handshake (`initialize`, `notifications/initialized`, `server/discover`) is left out: the
target's era does its own. The recording may have been redacted (exports mask secrets): what
is there is replayed. Nothing here talks to a server (`replayer` does).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import jsonrpc, jsontext
from ..client import META_CAPS, META_INFO, META_VERSION
from ..events import CONNECTION
from ..secrets import NO_SECRETS, Redactor

HANDSHAKE_REQUESTS = frozenset({"initialize", "server/discover"})
HANDSHAKE_NOTIFICATIONS = frozenset({"notifications/initialized"})
# What the client adds to a request's `_meta` itself: the replaying client adds its own.
CLIENT_META = frozenset({META_VERSION, META_CAPS, META_INFO, "progressToken"})
RAW_KEPT = 64 * 1024  # characters of a recorded frame kept for showing side by side
MAX_ROWS = 1_000_000  # transcript lines read from one file


class RecordingError(ValueError):
    """The file is not a transcript (or holds nothing to replay)."""


@dataclass(slots=True)
class Seen:
    """A server notification or request, as seen while a request was in flight."""

    seq: int
    method: str


@dataclass
class Exchange:
    """One request of the client and what became of it in the recording."""

    seq: int  # the request's event
    method: str
    params: Any  # as the client's user gave them (client-added _meta left out)
    t: float
    progress: bool = False  # it asked for progress (a token, renumbered on replay)
    response: dict[str, Any] | None = None  # the final response ({"result"} or {"error"}), None if none came
    response_seq: int | None = None
    response_raw: str = ""
    response_truncated: bool = False  # a response came, too large to have been recorded whole
    cancel_after: float | None = None  # seconds after sending when the client cancelled it
    notifications: list[Seen] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    _inputs: dict[str, Any] | None = None  # the input requests of a pending input_required round
    _state: Any = None  # that round's requestState (None: it had none)

    @property
    def name(self) -> str:
        return request_name(self.method, self.params)

    @property
    def answered(self) -> bool:
        """A response came (the replay waits for it; a request without one runs alongside)."""
        return self.response is not None or self.response_truncated


@dataclass
class Notify:
    """A notification of the client's, sent again in its place."""

    seq: int
    method: str
    params: Any


@dataclass
class ClientAnswer:
    """A server request and the client's answer to it."""

    seq: int
    method: str
    params: Any
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass
class Recording:
    steps: list[Exchange | Notify] = field(default_factory=list)
    answers: list[ClientAnswer] = field(default_factory=list)
    capabilities: dict[str, Any] = field(default_factory=dict)  # what the recorded client declared
    skipped: list[str] = field(default_factory=list)  # frames not replayed, and why
    unsolicited: int = 0  # server notifications and requests while no request was in flight

    @property
    def exchanges(self) -> list[Exchange]:
        return [s for s in self.steps if isinstance(s, Exchange)]


def request_name(method: str, params: Any) -> str:
    """What a request is about, for people: the tool, prompt, resource or task."""
    if not isinstance(params, dict):
        return ""
    for key in ("name", "uri", "taskId"):
        if isinstance(params.get(key), str):
            return params[key]
    ref = params.get("ref")
    if isinstance(ref, dict):
        return str(ref.get("name") or ref.get("uri") or "")
    return ""


def user_params(params: Any) -> Any:
    """Params without what the client adds itself (modern `_meta` facts, the progress token)."""
    if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
        return params
    meta = {k: v for k, v in params["_meta"].items() if k not in CLIENT_META}
    out = {k: v for k, v in params.items() if k != "_meta"}
    if meta:
        out["_meta"] = meta
    return out


def read_rows(text: str) -> list[dict[str, Any]]:
    """Transcript lines from a JSONL export or `--transcript` file, or a JSON export document
    (one object with `events`, on one line)."""
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), "")
    try:
        head = jsontext.loads(first) if first.lstrip().startswith('{"session"') else None
    except (ValueError, RecursionError):
        head = None
    if isinstance(head, dict) and isinstance(head.get("events"), list):
        return _checked([r for r in head["events"] if isinstance(r, dict)])
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if len(rows) >= MAX_ROWS:
            raise RecordingError(f"more than {MAX_ROWS} lines")
        try:
            row = jsontext.loads(line)
        except (ValueError, RecursionError) as exc:
            raise RecordingError(f"line {number} is not JSON: {exc}") from None
        if not isinstance(row, dict):
            raise RecordingError(f"line {number} is not a transcript line (an object)")
        rows.append(row)
    return _checked(rows)


def _checked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines, each with the fields a plan reads of the types the export writes (or a
    RecordingError naming the first that has not), in seq order."""
    for row in rows:
        seq = row.get("seq")
        if type(seq) is not int or row.get("dir") not in ("send", "recv", "stderr", "note"):
            raise RecordingError(
                "not a transcript: every line needs seq (an integer) and dir (send, recv, stderr, note)"
            )
        t = row.get("t")
        if t is not None and (type(t) not in (int, float) or not math.isfinite(t)):
            raise RecordingError(f"event {seq}: t is {_shown(t)}, not a number of seconds")
        reply_to = row.get("reply_to")
        if reply_to is not None and type(reply_to) is not int:
            raise RecordingError(f"event {seq}: reply_to is {_shown(reply_to)}, not an event number")
    return sorted(rows, key=lambda r: r["seq"])


def _shown(value: Any) -> str:
    text = jsontext.dumps(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _id(message: dict[str, Any]) -> str:
    return jsonrpc.id_key(message.get("id"))


def _time(row: dict[str, Any]) -> float:
    return float(row.get("t") or 0)  # (a number or absent: _checked)


def recording(rows: Iterable[dict[str, Any]], secrets: Redactor = NO_SECRETS) -> Recording:
    """The plan out of a transcript's lines (in seq order). A response's raw text is kept cut
    to RAW_KEPT by `secrets` (the values the replay's pages mask: a secret's head at the cut too)."""
    rec = Recording()
    by_seq: dict[int, Exchange] = {}  # request event (first or retry) -> its exchange
    open_ids: dict[str, Exchange] = {}  # id of a request of ours still open -> its exchange
    awaiting_retry: dict[str, list[Exchange]] = {}  # method -> exchanges with an input round pending
    asked: dict[str, tuple[int, str, Any]] = {}  # id of a server request -> (seq, method, params)
    heard: list[tuple[int, str, bool]] = []  # server notifications and requests: (seq, method, request?)
    # Recorded before what they answer (captures made before the capture recorded a chunk before
    # passing it on): held until it turns up.
    early_answers: dict[str, dict[str, Any]] = {}  # id -> the client's answer to a server request
    early_responses: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}  # id -> (row, server response)
    other_lanes = 0  # frames of another connection: an MCP App's bridge, a check's probes
    for row in rows:
        direction, seq, message = row.get("dir"), row["seq"], row.get("message")
        if direction not in ("send", "recv"):
            continue
        data = row.get("data")
        if isinstance(data, dict) and CONNECTION in data:
            other_lanes += 1
            continue
        if not isinstance(message, dict):
            if direction == "send":
                why = (
                    "a batch"
                    if isinstance(message, list)
                    else ("truncated at recording" if row.get("truncated") else "not JSON")
                )
                rec.skipped.append(f"event {seq}: a frame the client sent ({why}) was not replayed")
            elif row.get("truncated") and row.get("reply_to") in by_seq:
                by_seq[row["reply_to"]].response_truncated = True  # a response too large to record
            continue
        kind = jsonrpc.classify(message)
        method = message.get("method")
        if direction == "send":
            if kind == "request" and isinstance(method, str):
                params = message.get("params")
                if method in HANDSHAKE_REQUESTS:
                    _capabilities(rec, method, params)
                    continue
                if not rec.capabilities and isinstance(params, dict):
                    meta = params.get("_meta")
                    if isinstance(meta, dict) and isinstance(meta.get(META_CAPS), dict):
                        rec.capabilities = meta[META_CAPS]
                retried = _retry_of(awaiting_retry, method, params)
                if retried is not None:
                    _inputs_answered(rec, retried, params)
                    exchange = retried
                else:
                    meta = params.get("_meta") if isinstance(params, dict) else None
                    exchange = Exchange(
                        seq=seq,
                        method=method,
                        params=user_params(params),
                        t=_time(row),
                        progress=isinstance(meta, dict) and "progressToken" in meta,
                    )
                    rec.steps.append(exchange)
                by_seq[seq] = exchange
                open_ids[_id(message)] = exchange
                early = early_responses.pop(_id(message), None)
                if early is not None:
                    _responded(exchange, *early, secrets, awaiting_retry)
                    open_ids.pop(_id(message), None)
            elif kind == "notification" and isinstance(method, str):
                params = message.get("params")
                if method in HANDSHAKE_NOTIFICATIONS:
                    continue
                if method == "notifications/cancelled" and isinstance(params, dict):
                    cancelled = open_ids.get(jsonrpc.id_key(params.get("requestId")))
                    if cancelled is not None and cancelled.cancel_after is None:
                        cancelled.cancel_after = max(0.0, _time(row) - cancelled.t)
                    continue
                rec.steps.append(Notify(seq=seq, method=method, params=user_params(params)))
            elif kind in ("response", "error"):
                question = asked.pop(_id(message), None)
                if question is not None:
                    rec.answers.append(_answer(question, message))
                elif row.get("reply_to") is None:
                    early_answers[_id(message)] = message
            else:
                rec.skipped.append(
                    f"event {seq}: a frame the client sent (not a JSON-RPC request, "
                    "notification or response) was not replayed"
                )
        else:
            if kind in ("response", "error"):
                reply_to = row.get("reply_to")
                answered = by_seq.get(reply_to) if isinstance(reply_to, int) else open_ids.get(_id(message))
                if answered is None:
                    if reply_to is None:  # (one the tap paired answers a request not replayed)
                        early_responses[_id(message)] = (row, message)
                    continue
                open_ids.pop(_id(message), None)
                _responded(answered, row, message, secrets, awaiting_retry)
            elif kind == "request" and isinstance(method, str):
                heard.append((seq, method, True))
                answer = early_answers.pop(_id(message), None)
                if answer is not None:
                    rec.answers.append(_answer((seq, method, message.get("params")), answer))
                else:
                    asked[_id(message)] = (seq, method, message.get("params"))
            elif kind == "notification" and isinstance(method, str):
                heard.append((seq, method, False))
    if other_lanes:
        rec.skipped.append(
            f"{other_lanes} frames of another lane (an MCP App's bridge, a server check's probes) were not replayed"
        )
    _attribute(rec, heard)
    return rec


def _responded(
    exchange: Exchange,
    row: dict[str, Any],
    message: dict[str, Any],
    secrets: Redactor,
    awaiting_retry: dict[str, list[Exchange]],
) -> None:
    """The server's response to `exchange` (an `input_required` result waits for its retry)."""
    exchange.response = {k: message[k] for k in ("result", "error") if k in message}
    exchange.response_seq = row["seq"]
    raw = row.get("raw")
    exchange.response_raw = secrets.cut(raw, RAW_KEPT) if isinstance(raw, str) else ""
    result = message.get("result")
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        inputs = result.get("inputRequests")
        exchange._inputs = inputs if isinstance(inputs, dict) else {}
        exchange._state = result.get("requestState")
        exchange.requests += input_requests(row["seq"], exchange._inputs)
        awaiting_retry.setdefault(exchange.method, []).append(exchange)


def _answer(question: tuple[int, str, Any], message: dict[str, Any]) -> ClientAnswer:
    """The client's answer to a server request (seq, method, params)."""
    return ClientAnswer(
        seq=question[0],
        method=question[1],
        params=question[2],
        result=message.get("result"),
        error=message["error"] if isinstance(message.get("error"), dict) else None,
    )


def _capabilities(rec: Recording, method: str, params: Any) -> None:
    if method == "initialize" and isinstance(params, dict) and isinstance(params.get("capabilities"), dict):
        rec.capabilities = params["capabilities"]


def input_requests(seq: int, inputs: Any) -> list[Seen]:
    """The server requests an `input_required` result (event `seq`) asks through `inputRequests`."""
    if not isinstance(inputs, dict):
        return []
    return [
        Seen(seq, value["method"])
        for value in inputs.values()
        if isinstance(value, dict) and isinstance(value.get("method"), str)
    ]


def _retry_of(awaiting: dict[str, list[Exchange]], method: str, params: Any) -> Exchange | None:
    """The exchange a modern retry (with `inputResponses` or `requestState`) continues: the one
    whose input_required result gave the `requestState` it echoes (the client echoes it exactly);
    for a round without one, the latest such round of the same method."""
    if not isinstance(params, dict) or not ("inputResponses" in params or "requestState" in params):
        return None
    waiting = awaiting.get(method) or []
    state = params.get("requestState")
    for i in range(len(waiting) - 1, -1, -1):
        if waiting[i]._state == state and type(waiting[i]._state) is type(state):
            return waiting.pop(i)
    return None


def _inputs_answered(rec: Recording, exchange: Exchange, params: Any) -> None:
    """A modern round's input requests and the answers the retry carries."""
    given = params.get("inputResponses") if isinstance(params, dict) else None
    responses: dict[str, Any] = given if isinstance(given, dict) else {}
    for key, request in (exchange._inputs or {}).items():
        if isinstance(request, dict) and isinstance(request.get("method"), str) and key in responses:
            rec.answers.append(
                ClientAnswer(
                    seq=exchange.response_seq or exchange.seq,
                    method=request["method"],
                    params=request.get("params"),
                    result=responses[key],
                )
            )
    exchange._inputs = None
    exchange.response = None  # the retry's response is the final one
    exchange.response_seq = None
    exchange.response_raw = ""


def _attribute(rec: Recording, heard: list[tuple[int, str, bool]]) -> None:
    """Each server notification and request goes to the request in flight when it came (the
    latest sent of those that got their response); the rest were unsolicited."""
    spans = sorted(
        ((e.seq, e.response_seq or 0, e) for e in rec.exchanges if e.response_seq is not None), key=lambda s: s[0]
    )
    active: list[tuple[int, int, Exchange]] = []
    i = 0
    for seq, method, is_request in heard:
        while i < len(spans) and spans[i][0] < seq:
            active.append(spans[i])
            i += 1
        active = [s for s in active if s[1] > seq]
        if not active:
            rec.unsolicited += 1
            continue
        exchange = active[-1][2]
        (exchange.requests if is_request else exchange.notifications).append(Seen(seq, method))


def load(path: str) -> Recording:
    """The plan out of a file (see `read_rows`)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    rec = recording(read_rows(text))
    if not rec.steps:
        raise RecordingError(f"{path} holds no request of the client's to replay")
    return rec
