"""A session's HTTP traffic as an HTTP Archive (HAR 1.2), the format browsers' DevTools import.

One entry per HTTP exchange: a POSTed frame and its answer (a JSON body, or an SSE stream as its
event text), each GET stream, the DELETE that ends a session, each exchange of the OAuth flow.
Transcript events carry `http.exchange` (the tap numbers exchanges); sessions recorded before it
are grouped by what their events say (a response by the request it answers, a stream's events by
their shared facts). Secrets are masked as in the rows given (the caller redacts them first).

Streamed: an entry is written as soon as its exchange is complete (its response read whole, or
for a POST answered with an SSE stream, the responses to what it sent), so only open streams
are held — a standalone GET stream until the end. Entries are therefore in the order their
exchanges ended (HAR prefers, and does not require, start order; viewers sort by time).

Times: `startedDateTime` is the session's clock origin plus the event's time; `wait` is the time
to the response's headers (`http.wait_ms`, else to its first event), `receive` until its last event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from playground.budget import HAR_ENTRY, Budget, OverBudget

from .form_bodies import form_body, is_form

CREATOR = {"name": "MCP Playground", "version": "0.1.0"}
URL_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


@dataclass
class Exchange:
    method: str = ""
    url: str = ""
    sent_headers: dict[str, str] | None = None  # what the playground set (a POST's frame event)
    request_headers: dict[str, str] | None = None  # as sent (the first response event)
    body: str | None = None
    body_type: str = ""
    t_request: float | None = None
    t_first: float | None = None
    t_last: float | None = None
    wait_ms: float | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = ""
    texts: list[str] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    awaiting: int = 0  # responses the POSTed frame asks for
    answered: int = 0
    kept: Budget = field(default_factory=lambda: HAR_ENTRY.budget())  # the response text held for the entry
    left_out: int = 0  # events past it (in the JSONL export, whole)

    def add(self, text: str) -> None:
        """Another piece of the response, unless the entry already holds its budget: a stream
        is held until it ends, and a session may stream gigabytes on one GET."""
        if not self.left_out:
            try:
                self.kept.emit(len(text))
                self.texts.append(text)
                return
            except OverBudget:
                pass
        self.left_out += 1

    @property
    def complete(self) -> bool:
        """Nothing more will come: the response was read whole, or an SSE stream answering a
        POST carried the responses to every request in it (the server then closes it)."""
        if self.status is None:
            return False
        if self.content_type != "text/event-stream":
            return True
        return self.t_request is not None and self.awaiting > 0 and self.answered >= self.awaiting


def _requests_in(message: Any) -> int:
    """How many responses a sent frame asks for (a request, or a batch's requests)."""
    frames = message if isinstance(message, list) else [message]
    return sum(1 for m in frames if isinstance(m, dict) and "method" in m and m.get("id") is not None)


def _key(row: dict[str, Any], http: dict[str, Any], sends: set[int]) -> tuple[Any, ...]:
    if isinstance(http.get("exchange"), int):
        return ("x", http["exchange"])
    if row["dir"] == "send":
        return ("s", row["seq"])
    if row.get("reply_to") in sends:
        return ("s", row["reply_to"])
    return (
        "h",
        http.get("method"),
        http.get("url"),
        http.get("status"),
        json.dumps(http.get("headers"), sort_keys=True),
    )


def _sse_text(row: dict[str, Any], data: str | None = None) -> str:
    """An event as the stream carried it: its `event:` and `id:` lines, then its data's."""
    head = f"event: {row['sse_event']}\n" if row.get("sse_event") is not None else ""
    head += f"id: {row['sse_id']}\n" if row.get("sse_id") is not None else ""
    text = row.get("raw") or "" if data is None else data
    return head + "".join(f"data: {line}\n" for line in text.split("\n")) + "\n"


def exchanges(rows: Iterable[dict[str, Any]]) -> Iterator[Exchange]:
    """Each exchange once it is complete; those still open when the rows end, in start order."""
    found: dict[tuple[Any, ...], Exchange] = {}
    done: set[tuple[Any, ...]] = set()
    sends: set[int] = set()
    for row in rows:
        http = row.get("http")
        if not isinstance(http, dict) or not isinstance(http.get("method"), str):
            continue
        key = _key(row, http, sends)
        if key in done:
            continue  # (after its end: nothing an exchange is written with)
        ex = found.setdefault(key, Exchange())
        ex.seqs.append(row["seq"])
        ex.method = ex.method or http["method"]
        ex.url = ex.url or str(http.get("url", ""))
        data = row.get("data")
        if not isinstance(data, dict):
            data = {}
        if row["dir"] == "send":
            sends.add(row["seq"])
            sent_headers = http.get("headers")
            ex.sent_headers = sent_headers if isinstance(sent_headers, dict) else {}
            ex.body, ex.t_request = row.get("raw") or "", row["t"]
            ex.body_type = next((v for k, v in ex.sent_headers.items() if k.lower() == "content-type"), "")
            ex.awaiting = _requests_in(row.get("message"))
            continue
        if isinstance(http.get("request_headers"), dict) and ex.request_headers is None:
            ex.request_headers = http["request_headers"]
        if isinstance(http.get("wait_ms"), (int, float)) and ex.wait_ms is None:
            ex.wait_ms = float(http["wait_ms"])
        if isinstance(http.get("status"), int):
            ex.status = http["status"]
            headers = http.get("headers")
            ex.headers = headers if isinstance(headers, dict) else {}
            ex.content_type = str(http.get("content_type") or "")
        ex.t_first = row["t"] if ex.t_first is None else ex.t_first
        ex.t_last = row["t"]
        if row["dir"] == "recv":
            ex.add(_sse_text(row) if ex.content_type == "text/event-stream" else (row.get("raw") or ""))
            if row.get("reply_to") is not None and row.get("reply_to") in ex.seqs:
                ex.answered += 1
        elif isinstance(data.get("sse_event"), str) and isinstance(data.get("sse_data"), str):
            ex.add(_sse_text({"sse_event": data["sse_event"]}, data["sse_data"]))  # HTTP+SSE's `endpoint`
        elif isinstance(data.get("request_body"), str) or isinstance(data.get("response_body"), str):
            if isinstance(data.get("request_body"), str):  # an OAuth exchange: one note holds it all
                ex.body_type = next(
                    (v for k, v in (ex.request_headers or {}).items() if k.lower() == "content-type"), ""
                )
                ex.body = form_body(data["request_body"]) if is_form(ex.body_type) else data["request_body"]
            if isinstance(data.get("response_body"), str):
                ex.add(data["response_body"])
        if isinstance(data.get("error"), str):
            ex.error = data["error"]
        elif row["dir"] == "note" and row.get("kind") in ("error", "timeout") and row.get("text"):
            ex.notes.append(str(row["text"]))
        if ex.complete:
            done.add(key)
            yield found.pop(key)
    yield from found.values()


def _pairs(headers: dict[str, str] | None) -> list[dict[str, str]]:
    return [{"name": str(k), "value": str(v)} for k, v in (headers or {}).items()]


def _url(url: str) -> str:
    """A URI (the masks of a shown URL are not ASCII)."""
    return quote(url, safe=URL_SAFE)


def _phrase(status: int | None) -> str:
    try:
        return HTTPStatus(status).phrase if status else ""
    except ValueError:
        return ""


def entry(ex: Exchange, started_at: datetime) -> dict[str, Any]:
    t_start = ex.t_request
    if t_start is None:
        t_start = (ex.t_first or 0.0) - (ex.wait_ms or 0.0) / 1000
    if ex.wait_ms is not None:
        wait = ex.wait_ms
    elif ex.t_first is not None and ex.t_request is not None:
        wait = max(0.0, (ex.t_first - ex.t_request) * 1000)
    else:
        wait = 0.0
    receive = max(0.0, ((ex.t_last or 0.0) - (ex.t_first or 0.0)) * 1000) if ex.t_first is not None else 0.0
    url = _url(ex.url)
    request: dict[str, Any] = {
        "method": ex.method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _pairs(ex.request_headers if ex.request_headers is not None else ex.sent_headers),
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)],
        "headersSize": -1,
        "bodySize": len(ex.body.encode("utf-8")) if ex.body is not None else 0,
    }
    if ex.body is not None:
        request["postData"] = {"mimeType": ex.body_type or "application/octet-stream", "text": ex.body}
        if is_form(ex.body_type):
            request["postData"]["params"] = [
                {"name": k, "value": v} for k, v in parse_qsl(ex.body, keep_blank_values=True)
            ]
    text = "".join(ex.texts)
    mime = next((v for k, v in ex.headers.items() if k.lower() == "content-type"), ex.content_type)
    response: dict[str, Any] = {
        "status": ex.status or 0,
        "statusText": _phrase(ex.status),
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _pairs(ex.headers),
        "content": {"size": len(text.encode("utf-8")), "mimeType": mime or "x-unknown", "text": text},
        "redirectURL": next((v for k, v in ex.headers.items() if k.lower() == "location"), ""),
        "headersSize": -1,
        "bodySize": -1,
    }
    if ex.error or (ex.status is None and ex.notes):
        response["_error"] = ex.error or ex.notes[0]
    out: dict[str, Any] = {
        "startedDateTime": (started_at + timedelta(seconds=max(0.0, t_start))).isoformat(timespec="milliseconds"),
        "time": round(wait + receive, 3),
        "request": request,
        "response": response,
        "cache": {},
        "timings": {
            "blocked": -1,
            "dns": -1,
            "connect": -1,
            "ssl": -1,
            "send": 0,
            "wait": round(wait, 3),
            "receive": round(receive, 3),
        },
        "_transcriptSeq": ex.seqs,
    }
    if ex.content_type == "text/event-stream":
        out["comment"] = f"SSE stream: {len(ex.texts)} event(s) with data, as their event text"
    if ex.left_out:
        ex.notes.insert(
            0,
            f"{HAR_ENTRY.says}: the response's first {len(ex.texts)} event(s) are here, "
            f"the {ex.left_out} after them are left out (the JSONL export has every event)",
        )
    if ex.notes:
        out["comment"] = "; ".join([*([out["comment"]] if "comment" in out else []), *ex.notes])[:2000]
    return out


def document(rows: Iterable[dict[str, Any]], started_at: datetime, comment: str = "") -> Iterator[str]:
    """The HAR file, in pieces: an entry as soon as its exchange is complete. `started_at` is
    when the events' `t` was 0 (the session's clock origin)."""
    if started_at.tzinfo is None:
        started_at = started_at.replace(tzinfo=UTC)
    log = {"version": "1.2", "creator": CREATOR, "pages": [], "comment": comment}
    yield '{"log": ' + json.dumps(log, ensure_ascii=False)[:-1] + ', "entries": ['
    for i, ex in enumerate(exchanges(rows)):
        yield ("," if i else "") + "\n" + json.dumps(entry(ex, started_at), ensure_ascii=False)
    yield "\n]}}\n"
