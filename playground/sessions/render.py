"""HTML fragments the consumer sends over the websocket: explicit htmx out-of-band swaps.

Everything a server sent is untrusted: it only ever reaches HTML through Django's
autoescaping templates, or lines.py's explicit escaping for the transcript line (no `|safe`
on server data anywhere).
"""
from __future__ import annotations

import json
import re
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from playground.mcp import jsontext

from .lines import lines_html
from .result_html import piece_html, result_html

ARROWS = {"send": "→", "recv": "←", "stderr": "⚠", "note": "•"}
PREVIEW_CHARS = 160
# Characters of pretty JSON and of raw text shown in one transcript line (the tap caps what is
# recorded at 1 MB; the export has it all). A line must fit in one websocket message (1 MiB in
# daphne) even after escaping.
PRETTY_LIMIT = 64 * 1024
RAW_LIMIT = 64 * 1024
FRAME_BUDGET = 256 * 1024   # characters of lines per transcript fragment (UTF-8: up to 3 bytes each)
# daphne closes the page's socket rather than send a websocket message over 1 MiB
# (`websocket_max_message_size`): no fragment may be larger, whatever a server sent.
WS_MESSAGE_LIMIT = 1024 * 1024
# Characters of a server-controlled text in the state strip (instructions, server name).
STATE_TEXT_LIMIT = 16 * 1024


def line(row: dict[str, Any]) -> dict[str, Any]:
    """A transcript event as the template needs it (label, preview, pretty JSON)."""
    message = row.get("message")
    label, rpc_id, preview, pretty = "", None, "", ""
    is_error = False
    if isinstance(message, dict):
        rpc_id = message.get("id")
        if isinstance(message.get("method"), str):
            label = message["method"]
            body = message.get("params")
        elif "error" in message:
            label, body, is_error = "error", message.get("error"), True
        else:
            label, body = "result", message.get("result")
            if isinstance(body, dict) and body.get("isError") is True:
                is_error = True
        preview = json.dumps(body, ensure_ascii=False)[:PREVIEW_CHARS] if body is not None else ""
        pretty = jsontext.pretty(message, row.get("raw") or "")[:PRETTY_LIMIT]
    elif row["dir"] == "note":
        label, preview = row.get("kind") or "note", row.get("text") or ""
        is_error = row.get("kind") in ("error", "timeout") or (
            row.get("kind") == "auth" and (row.get("data") or {}).get("status") in ("failed", "refused"))
        if row.get("data") or row.get("http"):
            pretty = json.dumps({k: row[k] for k in ("data", "http") if row.get(k)}, indent=2,
                                ensure_ascii=False)[:PRETTY_LIMIT]
    elif row["dir"] == "stderr":
        label, preview = "stderr", row.get("text") or ""
    else:
        # A frame cut at the recording cap was parsed (and delivered) whole: say "truncated".
        label = "truncated" if row.get("truncated") and not row.get("parse_error") else "unparsed"
        preview = (row.get("raw") or "")[:PREVIEW_CHARS]
        is_error = True
    problems = list(row.get("problems") or [])
    if len(preview) > RAW_LIMIT:      # a note or stderr line quoting megabytes a server sent
        preview = preview[:RAW_LIMIT]
        problems.append(f"text shown up to {RAW_LIMIT} characters (the export has all of it)")
    raw = row.get("raw")
    if isinstance(raw, str) and len(raw) > RAW_LIMIT:
        raw = raw[:RAW_LIMIT]
        problems.append(f"raw text shown up to {RAW_LIMIT} characters (the export has all of it)")
    if row.get("parse_error"):
        problems.insert(0, f"not JSON: {row['parse_error']}")
    if row.get("truncated"):
        problems.append(f"truncated: {row.get('size')} bytes, shown up to the cap")
    return {
        "seq": row["seq"], "t_ms": f"{row['t'] * 1000:.1f}", "dir": row["dir"], "arrow": ARROWS.get(row["dir"], "?"),
        "label": label, "rpc_id": rpc_id, "preview": preview, "pretty": pretty, "raw": raw,
        "latency": row.get("latency_ms"), "reply_to": row.get("reply_to"), "problems": problems,
        "is_error": is_error or bool(problems), "http": row.get("http"), "sse_id": row.get("sse_id"),
        "kind": row.get("kind") or "",
    }


def transcript_lines(rows: list[dict[str, Any]]) -> str:
    return lines_html([line(r) for r in rows])


def transcript_replace_frames(rows: list[dict[str, Any]], total: int, session_id: int) -> list[str]:
    """The replay on (re)connect: the first fragment replaces the lines, the others append the
    rest, each under FRAME_BUDGET (1,000 lines of a few KB each were one 3 MB message, which
    closed the socket on every connect, and htmx reconnected in a loop)."""
    chunks = _line_chunks(rows) or [""]
    first = render_to_string("sessions/_transcript_replace.html", {
        "first": SafeString(chunks[0]), "total": total, "shown": len(rows), "session_id": session_id})
    return [first] + [_append(chunk) for chunk in chunks[1:]]


def transcript_append(rows: list[dict[str, Any]]) -> str:
    """The fragment sent for every batch of events: no template (see lines.py)."""
    return _append(transcript_lines(rows))


def _append(html: str) -> str:
    return f'<div id="transcript-lines" hx-swap-oob="beforeend">{html}</div>'


def _line_chunks(rows: list[dict[str, Any]]) -> list[str]:
    """The rows' lines, joined in chunks of at most FRAME_BUDGET characters (a line more if one
    is larger; a line is capped well under the limit)."""
    chunks, current, size = [], [], 0
    for row in rows:
        html = lines_html([line(row)])
        if current and size + len(html) > FRAME_BUDGET:
            chunks.append("".join(current))
            current, size = [], 0
        current.append(html)
        size += len(html)
    if current:
        chunks.append("".join(current))
    return chunks


def transcript_append_frames(rows: list[dict[str, Any]]) -> list[str]:
    """The batch as appends of at most FRAME_BUDGET characters of lines each: a websocket
    message over 1 MiB would close the page's socket."""
    return [_append(chunk) for chunk in _line_chunks(rows)]


def skipped(session_id: int, count: int) -> str:
    """The marker for lines a flood left out of the page (the export has them)."""
    return render_to_string("sessions/_skipped.html", {"session_id": session_id, "count": count})


def state(state: dict[str, Any]) -> str:
    """The state strip. Texts a server chose (instructions, name, version) are cut to
    STATE_TEXT_LIMIT: the strip carries the session's status and must always reach the page."""
    return render_to_string("sessions/_state.html", {"state": capped_state(state), "oob": True})


def capped_state(state: dict[str, Any]) -> dict[str, Any]:
    def cut(text: Any) -> Any:
        if isinstance(text, str) and len(text) > STATE_TEXT_LIMIT:
            return f"{text[:STATE_TEXT_LIMIT]}… ({len(text)} characters; the transcript has all of it)"
        return text
    info = state.get("server_info")
    return {**state, "instructions": cut(state.get("instructions")), "end_reason": cut(state.get("end_reason")),
            "server_info": {k: cut(v) for k, v in info.items()} if isinstance(info, dict) else info}


def too_large(fragment: str, size: int) -> str:
    """What the page gets instead of a fragment over WS_MESSAGE_LIMIT: a notice naming the region."""
    target = re.search(r'\bid="([^"]{1,80})"', fragment[:300])
    where = f"#{target.group(1)}" if target else "the page"
    return notice(f"An update for {where} ({size} bytes) was too large to show here and was left out; "
                  "the transcript export has everything the server sent.")


def catalogue(session_id: int, catalogue: dict[str, Any]) -> str:
    return render_to_string("sessions/_catalogue.html", {"session_id": session_id, "catalogue": catalogue,
                                                          "oob": True})


def call_started(message: dict[str, Any]) -> str:
    started = message.get("started")
    call = {**message, "started": int(started * 1000) if isinstance(started, (int, float)) else ""}
    return render_to_string("sessions/_call_started.html", {"call": call})


def progress(call_id: str, params: dict[str, Any]) -> str:
    total = params.get("total")
    value = params.get("progress")
    percent = None
    if isinstance(total, (int, float)) and total > 0 and isinstance(value, (int, float)):
        percent = max(0, min(100, round(100 * value / total)))
    return render_to_string("sessions/_progress.html", {"call_id": call_id, "params": params, "percent": percent,
                                                        "value": value, "total": total})


# daphne refuses to send a websocket message over 1 MiB (and closes the socket). A character
# takes at most 6 bytes once escaped (" -> &quot;), so the Result region carries at most
# RESULT_FIRST characters of its long texts; the rest of each follows in pieces of RESULT_PIECE,
# appended by fragments of their own into a closed <details> after the first part: the page
# lays a 10 MB text out only if the person opens it (appending to a shown <pre> piece by piece
# took Chromium most of a minute).
RESULT_FIRST = 96 * 1024
RESULT_PIECE = 128 * 1024
# Inline media (data: URLs of images, audio, blob downloads) one Result fragment may carry.
MEDIA_BUDGET = 512 * 1024


def _fit_media(items: list[dict[str, Any]]) -> None:
    """Keep inline media within MEDIA_BUDGET; what does not fit says so (the export has it)."""
    room = MEDIA_BUDGET
    for item in items:
        for key in ("media", "src"):
            value = item.get(key)
            if not isinstance(value, str) or not value.startswith("data:"):
                continue
            if len(value) <= room:
                room -= len(value)
                continue
            item[key] = ""
            if key == "media":
                item["preview"] = ""
            item["why"] = (f"{len(value) * 3 // 4} bytes: too large to show in the page; "
                           "the session's export has the whole frame")
            if item.get("kind") in ("image", "audio"):
                item["kind"] = "blocked"


def result_frames(outcome: dict[str, Any], catalogue: dict[str, Any]) -> list[str]:
    """The Result region, then the appends that complete its long texts."""
    from .results import describe_result
    described = describe_result(outcome, catalogue)
    described["has_structured"] = bool(described.get("structured"))   # even if all of it comes in pieces
    fields: list[tuple[dict[str, Any], str, str]] = []       # (holder, key, dom id of the rest)
    items = described["items"] + described["contents"] + [m["item"] for m in described["messages"]]
    _fit_media(items)
    for index, item in enumerate(items):
        if item.get("kind") in ("text", "resource_text"):
            fields.append((item, "text", f"result-text-{index}-more"))
    fields += [(described, "structured", "result-structured-more"), (described, "raw", "result-raw-more")]
    room = RESULT_FIRST
    rest: list[tuple[str, str]] = []
    for holder, key, dom_id in fields:
        text = holder.get(key) or ""
        if len(text) > room:
            holder[key], tail = text[:room], text[room:]
            holder[f"{key}_more"] = {"id": dom_id, "chars": len(tail)}
            rest += [(dom_id, tail[i:i + RESULT_PIECE]) for i in range(0, len(tail), RESULT_PIECE)]
        room -= len(holder[key] or "")
    first = result_html(outcome, described)
    size = len(first.encode("utf-8", "surrogatepass"))
    if size > WS_MESSAGE_LIMIT:
        # Many big fields at once (a server's descriptions, names, URIs): show that there was a
        # result, and end the call's in-flight card, rather than lose the whole fragment.
        first = result_html(outcome, {"error": described["error"], "too_large": size})
        rest = []
    return [first] + [piece_html(dom_id, piece) for dom_id, piece in rest]


def result(outcome: dict[str, Any], catalogue: dict[str, Any]) -> str:
    """The whole Result region in one fragment (for small results and tests)."""
    return "".join(result_frames(outcome, catalogue))


def server_request(message: dict[str, Any]) -> str:
    from .results import describe_server_request
    return render_to_string("sessions/_server_request.html", describe_server_request(message))


def server_request_done(key: str) -> str:
    return f'<div id="server-request-{key}" hx-swap-oob="delete"></div>'


def notice(text: str) -> str:
    return render_to_string("sessions/_notice.html", {"text": text})


def form_errors(errors: list[dict[str, Any]]) -> str:
    return render_to_string("sessions/_form_errors.html", {"errors": errors})


def raw_errors(errors: list[str]) -> str:
    return render_to_string("sessions/_raw_errors.html", {"errors": errors})


def feed(entries: list[dict[str, Any]], *, replace: bool = False, skipped: int = 0) -> str:
    """Server notifications: log messages to the Log panel, the rest to Notifications; `skipped`
    (a burst's older ones, left out) is said where the burst's latest went."""
    logs = [e for e in entries if e.get("kind") == "log"]
    return render_to_string("sessions/_feed.html", {
        "logs": logs, "notes": [e for e in entries if e.get("kind") != "log"],
        "skipped": skipped, "skipped_in_logs": bool(logs),
        "swap": "innerHTML" if replace else "beforeend", "replace": replace})


def panels(panels: dict[str, Any]) -> str:
    from .features import LISTEN_FLAGS
    caps = json.dumps(panels.get("client_capabilities") or {}, ensure_ascii=False)
    return render_to_string("sessions/_panels.html", {"p": panels, "flags": LISTEN_FLAGS, "caps_json": caps})


def completion(message: dict[str, Any]) -> str:
    """Suggestions for one field, as buttons that fill it (values are untrusted text)."""
    return render_to_string("sessions/_completion.html", {"c": message})
