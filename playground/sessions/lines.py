"""The transcript line: built in Python, not a template, and the fragments that carry lines.

A flood sends thousands of lines a second; through Django's template engine (an include per
line, a variable lookup per field) a line cost ~90 µs, most of the worker process's time.
Autoescaping is kept by hand: every value that comes from an event goes through `esc`, and
only the markup written here is unescaped.
"""
from __future__ import annotations

import json
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from playground.mcp import jsontext, spec_sections

from .html import esc as _e
from .html import latency_ms, oob

ARROWS = {"send": "→", "recv": "←", "stderr": "⚠", "note": "•"}
PREVIEW_CHARS = 160
# Characters of pretty JSON and of raw text shown in one transcript line (the tap caps what is
# recorded at 1 MB; the export has it all). A line must fit in one websocket message (1 MiB in
# daphne) even after escaping.
PRETTY_LIMIT = 64 * 1024
RAW_LIMIT = 64 * 1024
FRAME_BUDGET = 256 * 1024   # characters of lines per transcript fragment (UTF-8: up to 3 bytes each)


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
        "schema_problems": row.get("schema_problems"), "schema_lint": row.get("schema_lint"),
    }


def transcript_lines(rows: list[dict[str, Any]]) -> str:
    """Saved rows as transcript lines."""
    return lines_html([line(r) for r in rows])


def transcript_replace_frames(rows: list[dict[str, Any]], total: int, session_id: int) -> list[str]:
    """The replay on (re)connect: the first fragment replaces the lines, the others append the
    rest, each under FRAME_BUDGET (1,000 lines of a few KB each were one 3 MB message, which
    closed the socket on every connect, and htmx reconnected in a loop)."""
    chunks = _line_chunks(rows) or [""]
    first = oob("transcript-lines", "innerHTML", render_to_string("sessions/_transcript_replace.html", {
        "first": SafeString(chunks[0]), "total": total, "shown": len(rows), "session_id": session_id}))
    return [first] + [_append(chunk) for chunk in chunks[1:]]


def transcript_append(rows: list[dict[str, Any]]) -> str:
    """The fragment sent for every batch of events: no template (see lines.py)."""
    return _append(transcript_lines(rows))


def _append(html: str) -> str:
    return oob("transcript-lines", "beforeend", html)


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
    return _append(render_to_string("sessions/_skipped.html", {"session_id": session_id, "count": count}))


def line_html(line: dict[str, Any]) -> str:
    """One `<details class="ev">` line from `line(row)`'s dict."""
    dir_ = _e(line["dir"])
    label = _e(line["label"])
    reply_to = line.get("reply_to")
    http = line.get("http") if isinstance(line.get("http"), dict) else None
    status = http.get("status") if http else None
    classes = f"ev ev-{dir_}"
    if line.get("is_error"):
        classes += " ev-bad"
    if line.get("kind"):
        classes += f" kind-{_e(line['kind'])}"
    schema = schema_badge(line.get("schema_problems"), line.get("schema_lint"))
    if schema and schema[0]:
        classes += " ev-schema"             # (the frame breaks the MCP schema: for filters and styles)
    out = [f'<details class="{classes}" id="ev-{_e(line["seq"])}" data-dir="{dir_}" data-method="{label}"']
    if reply_to:
        out.append(f' data-reply-to="{_e(reply_to)}"')
    out.append(f'>\n  <summary><span class="arrow" aria-label="{dir_}">{_e(line["arrow"])}</span>'
               f'<span class="t">{_e(line["t_ms"])}</span><span class="label">{label}</span>')
    if line.get("rpc_id") is not None:
        out.append(f'<span class="rid">#{_e(line["rpc_id"])}</span>')
    if line.get("latency") is not None:
        out.append(f'<span class="lat">{latency_ms(line["latency"])} ms</span>')
    if status:
        out.append(f'<span class="http">HTTP {_e(status)}</span>')
    if schema and schema[0]:
        out.append(schema[0])
    out.append(f'<span class="preview">{_e(line["preview"])}</span></summary>\n  ')
    if line.get("problems"):
        out.append('<ul class="problems">' + "".join(f"<li>{_e(p)}</li>" for p in line["problems"]) + "</ul>")
    if schema:
        out.append(schema[1])
    out.append("\n  ")
    if reply_to:
        out.append(f'<div class="pair">answers <a href="#ev-{_e(reply_to)}">event {_e(reply_to)}</a></div>')
    out.append("\n  ")
    if line.get("pretty"):
        out.append(f'<pre class="json">{_e(line["pretty"])}</pre>')
    out.append("\n  ")
    if http:
        facts = f'{_e(http.get("method", ""))} {_e(http.get("url", ""))}'
        if status:
            facts += f" → {_e(status)}"
        if line.get("sse_id"):
            facts += f" · SSE id {_e(line['sse_id'])}"
        out.append(f'<div class="httpfacts">{facts}</div>')
    out.append("\n  ")
    if line.get("raw") is not None:
        out.append(f'<details class="raw"><summary>raw</summary><pre>{_e(line["raw"])}</pre></details>')
    out.append("\n</details>")
    return "".join(out)


def schema_badge(problems: Any, info: Any) -> tuple[str, str] | None:
    """A line's schema problems: the flag in its summary, and the list in its body — each
    problem's JSON pointer, the schema's message and where in the schema, under a link to the
    spec section of the message type; or why the frame was not checked. None for a line
    without either. (Rows come from the database: every value is escaped, and the link must be
    the spec's own.)"""
    info = info if isinstance(info, dict) else {}
    if not isinstance(problems, list) or not problems:
        unchecked = info.get("unchecked")
        return ("", f'<div class="schema-unchecked">schema: not checked ({_e(unchecked)})</div>') if unchecked else None
    count = len(problems)
    flag = f'<span class="schema-flag">{"schema problem" if count == 1 else f"{count} schema problems"}</span>'
    items = []
    for problem in problems:
        problem = problem if isinstance(problem, dict) else {"message": str(problem)}
        items.append(f'<li><code class="pointer">{_e(problem.get("pointer") or "(the message)")}</code> '
                     f'{_e(problem.get("message", ""))} <span class="schema-path">{_e(problem.get("schema_path", ""))}</span></li>')
    if info.get("more"):
        items.append("<li>more problems were found than are listed</li>")
    spec = info.get("spec")
    definition, version = _e(info.get("definition", "")), _e(info.get("version", ""))
    against = f"{definition} of MCP {version}" if definition else "the MCP schema"
    if isinstance(spec, str) and spec.startswith(spec_sections.BASE + "/"):
        against += (f' · <a href="{_e(spec)}" target="_blank" rel="noopener noreferrer">spec: '
                    f"{_e(spec_sections.title(spec))}</a>")
    body = (f'<div class="schema-problems" role="group" aria-label="schema problem"><p>Breaks {against}</p>'
            f'<ul>{"".join(items)}</ul></div>')
    return flag, body


def lines_html(lines: list[dict[str, Any]]) -> SafeString:
    """Lines for a template (`{{ lines|transcript_lines }}`): safe because every value was escaped."""
    return SafeString("".join(line_html(line) for line in lines))
