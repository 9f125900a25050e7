"""A session's HTTP traffic as an HTTP Archive (HAR 1.2), the format browsers' DevTools import.

One entry per HTTP exchange: a POSTed frame and its answer (a JSON body, or an SSE stream as its
event text), each GET stream, the DELETE that ends a session, each exchange of the OAuth flow.
Transcript events carry `http.exchange` (the tap numbers exchanges); sessions recorded before it
are grouped by what their events say (a response by the request it answers, a stream's events by
their shared facts). Secrets are masked as in the rows given (the caller redacts them first).

Times: `startedDateTime` is the session's start plus the event's time; `wait` is the time to the
response's headers (`http.wait_ms`, else to its first event), `receive` until its last event.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

CREATOR = {"name": "MCP Playground", "version": "0.1.0"}
URL_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


@dataclass
class Exchange:
    method: str = ""
    url: str = ""
    sent_headers: dict[str, str] | None = None      # what the playground set (a POST's frame event)
    request_headers: dict[str, str] | None = None   # as sent (the first response event)
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


def _key(row: dict[str, Any], http: dict[str, Any], sends: set[int]) -> tuple[Any, ...]:
    if isinstance(http.get("exchange"), int):
        return ("x", http["exchange"])
    if row["dir"] == "send":
        return ("s", row["seq"])
    if row.get("reply_to") in sends:
        return ("s", row["reply_to"])
    return ("h", http.get("method"), http.get("url"), http.get("status"), json.dumps(http.get("headers"), sort_keys=True))


def _sse_text(row: dict[str, Any]) -> str:
    head = f"id: {row['sse_id']}\n" if row.get("sse_id") is not None else ""
    return head + "".join(f"data: {line}\n" for line in (row.get("raw") or "").split("\n")) + "\n"


def exchanges(rows: Iterable[dict[str, Any]]) -> list[Exchange]:
    found: dict[tuple[Any, ...], Exchange] = {}
    sends: set[int] = set()
    for row in rows:
        http = row.get("http")
        if not isinstance(http, dict) or not isinstance(http.get("method"), str):
            continue
        key = _key(row, http, sends)
        ex = found.setdefault(key, Exchange())
        ex.seqs.append(row["seq"])
        ex.method = ex.method or http["method"]
        ex.url = ex.url or str(http.get("url", ""))
        data = row.get("data") if isinstance(row.get("data"), dict) else {}
        if row["dir"] == "send":
            sends.add(row["seq"])
            ex.sent_headers = http.get("headers") if isinstance(http.get("headers"), dict) else {}
            ex.body, ex.t_request = row.get("raw") or "", row["t"]
            ex.body_type = next((v for k, v in ex.sent_headers.items() if k.lower() == "content-type"), "")
            continue
        if isinstance(http.get("request_headers"), dict) and ex.request_headers is None:
            ex.request_headers = http["request_headers"]
        if isinstance(http.get("wait_ms"), (int, float)) and ex.wait_ms is None:
            ex.wait_ms = float(http["wait_ms"])
        if isinstance(http.get("status"), int):
            ex.status = http["status"]
            ex.headers = http.get("headers") if isinstance(http.get("headers"), dict) else {}
            ex.content_type = str(http.get("content_type") or "")
        ex.t_first = row["t"] if ex.t_first is None else ex.t_first
        ex.t_last = row["t"]
        if row["dir"] == "recv":
            ex.texts.append(_sse_text(row) if ex.content_type == "text/event-stream" else (row.get("raw") or ""))
        elif isinstance(data.get("request_body"), str) or isinstance(data.get("response_body"), str):
            if isinstance(data.get("request_body"), str):          # an OAuth exchange: one note holds it all
                ex.body = data["request_body"]
                ex.body_type = next((v for k, v in (ex.request_headers or {}).items() if k.lower() == "content-type"), "")
            if isinstance(data.get("response_body"), str):
                ex.texts.append(data["response_body"])
        if isinstance(data.get("error"), str):
            ex.error = data["error"]
        elif row["dir"] == "note" and row.get("kind") in ("error", "timeout") and row.get("text"):
            ex.notes.append(str(row["text"]))
    return list(found.values())


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
        "method": ex.method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _pairs(ex.request_headers if ex.request_headers is not None else ex.sent_headers),
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)],
        "headersSize": -1, "bodySize": len(ex.body.encode("utf-8")) if ex.body is not None else 0,
    }
    if ex.body is not None:
        request["postData"] = {"mimeType": ex.body_type or "application/octet-stream", "text": ex.body}
    text = "".join(ex.texts)
    mime = next((v for k, v in ex.headers.items() if k.lower() == "content-type"), ex.content_type)
    response: dict[str, Any] = {
        "status": ex.status or 0, "statusText": _phrase(ex.status), "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _pairs(ex.headers),
        "content": {"size": len(text.encode("utf-8")), "mimeType": mime or "x-unknown", "text": text},
        "redirectURL": next((v for k, v in ex.headers.items() if k.lower() == "location"), ""),
        "headersSize": -1, "bodySize": -1,
    }
    if ex.error or (ex.status is None and ex.notes):
        response["_error"] = ex.error or ex.notes[0]
    out: dict[str, Any] = {
        "startedDateTime": (started_at + timedelta(seconds=max(0.0, t_start))).isoformat(timespec="milliseconds"),
        "time": round(wait + receive, 3), "request": request, "response": response, "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": round(wait, 3),
                    "receive": round(receive, 3)},
        "_transcriptSeq": ex.seqs,
    }
    if ex.content_type == "text/event-stream":
        out["comment"] = f"SSE stream: {len(ex.texts)} event(s) with data, as their event text"
    if ex.notes:
        out["comment"] = "; ".join([*([out["comment"]] if "comment" in out else []), *ex.notes])[:2000]
    return out


def document(rows: Iterable[dict[str, Any]], started_at: datetime, comment: str = "") -> Iterator[str]:
    """The HAR file, in pieces (the exchanges are gathered first: a stream's events may be
    spread over the whole session)."""
    if started_at.tzinfo is None:
        started_at = started_at.replace(tzinfo=timezone.utc)
    entries = sorted((entry(ex, started_at) for ex in exchanges(rows)), key=lambda e: e["startedDateTime"])
    log = {"version": "1.2", "creator": CREATOR, "pages": [], "comment": comment}
    yield '{"log": ' + json.dumps(log, ensure_ascii=False)[:-1] + ', "entries": ['
    for i, item in enumerate(entries):
        yield ("," if i else "") + "\n" + json.dumps(item, ensure_ascii=False)
    yield "\n]}}\n"
