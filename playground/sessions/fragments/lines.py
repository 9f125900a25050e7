"""The transcript line: built in Python, not a template, and the fragments that carry lines.

A flood sends thousands of lines a second; through Django's template engine (an include per
line, a variable lookup per field) a line cost ~90 µs, most of the worker process's time.
Autoescaping is kept by hand: every value that comes from an event goes through `esc`, and
only the markup written here is unescaped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString

from playground.mcp import jsontext
from playground.mcp.apps import LANE
from playground.mcp.events import CONNECTION, ON_PURPOSE
from playground.mcp.lint import spec_sections

from .html import esc as _e
from .html import latency_ms, oob

ARROWS = {"send": "→", "recv": "←", "stderr": "⚠", "note": "•"}
PREVIEW_CHARS = 160
# Characters of pretty JSON and of raw text shown in one transcript line (the tap caps what is
# recorded at 1 MB; the export has it all). A line must fit in one websocket message (1 MiB in
# daphne) even after escaping.
PRETTY_LIMIT = 64 * 1024
RAW_LIMIT = 64 * 1024
FRAME_BUDGET = 256 * 1024  # characters of lines per transcript fragment (UTF-8: up to 3 bytes each)
CHUNK_CHARS = 2 * 1024 * 1024  # characters of lines in one chunk the page loads (at least one line)


def line(row: Mapping[str, Any], *, owner: bool = False) -> dict[str, Any]:
    """A transcript event as the template needs it (label, preview, pretty JSON). `owner`: for
    the owner's page, where a request the client sent has "Edit and resend" (never on a share page)."""
    message = row.get("message")
    label, rpc_id, preview, pretty = "", None, "", ""
    is_error = False
    progress = None
    if isinstance(message, dict):
        rpc_id = message.get("id")
        if isinstance(message.get("method"), str):
            label = message["method"]
            body = message.get("params")
            if type(body) is dict:
                progress = _progress_token(label, body)
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
            row.get("kind") == "auth" and (row.get("data") or {}).get("status") in ("failed", "refused")
        )
        if row.get("data") or row.get("http"):
            pretty = json.dumps({k: row[k] for k in ("data", "http") if row.get(k)}, indent=2, ensure_ascii=False)[
                :PRETTY_LIMIT
            ]
    elif row["dir"] == "stderr":
        label, preview = "stderr", row.get("text") or ""
    else:
        # A frame cut at the recording cap was parsed (and delivered) whole: say "truncated".
        label = "truncated" if row.get("truncated") and not row.get("parse_error") else "unparsed"
        preview = (row.get("raw") or "")[:PREVIEW_CHARS]
        is_error = True
    problems = list(row.get("problems") or [])
    if len(preview) > RAW_LIMIT:  # a note or stderr line quoting megabytes a server sent
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
    http = row.get("http")
    data = row.get("data")
    lane = data.get(CONNECTION) if isinstance(data, dict) and data.get(CONNECTION) == LANE else None
    return {
        "lane": lane,
        "seq": row["seq"],
        "t_ms": f"{row['t'] * 1000:.1f}",
        "dir": row["dir"],
        "arrow": ARROWS.get(row["dir"], "?"),
        "label": label,
        "rpc_id": rpc_id,
        "preview": preview,
        "pretty": pretty,
        "raw": raw,
        "latency": row.get("latency_ms"),
        "reply_to": row.get("reply_to"),
        "problems": problems,
        "is_error": is_error or bool(problems),
        "http": http,
        "sse_id": row.get("sse_id"),
        "kind": row.get("kind") or "",
        "progress": progress,
        "request": bool(http) and is_request(row),
        "resend": owner
        and lane is None
        and row["dir"] == "send"
        and isinstance(message, dict)
        and "id" in message
        and isinstance(message.get("method"), str),
        "schema_problems": row.get("schema_problems"),
        "schema_lint": row.get("schema_lint"),
    }


def _progress_token(method: str, params: dict[str, Any]) -> str | int | None:
    """The progress token a request asks progress under, or a progress notification reports
    for: the page's filter shows a request's progress with it."""
    if method == "notifications/progress":
        token = params.get("progressToken")
    else:
        meta = params.get("_meta")
        token = meta.get("progressToken") if type(meta) is dict else None
    return token if type(token) in (str, int) else None


def is_request(row: Mapping[str, Any]) -> bool:
    """Whether the row records an HTTP request the playground sent: a POSTed frame, or the note
    that opens another exchange (a GET stream, DELETE, an OAuth exchange); the events of a POST's
    response carry its facts too, and are not."""
    http = row.get("http")
    if not isinstance(http, dict) or not isinstance(http.get("method"), str):
        return False
    if row["dir"] == "send":
        return True
    return "request_headers" in http and (http["method"] != "POST" or bool((row.get("data") or {}).get("auth_step")))


def _headers(headers: Any) -> str:
    return "\n".join(f"{k}: {v}" for k, v in headers.items()) if isinstance(headers, dict) else ""


def transcript_lines(rows: Sequence[Mapping[str, Any]], owner: bool = False) -> str:
    """Saved rows as transcript lines."""
    return lines_html([line(r, owner=owner) for r in rows])


def bounded_lines(
    rows: Sequence[Mapping[str, Any]],
    owner: bool = False,
    *,
    from_end: bool = False,
    centre: int | None = None,
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
    budget: int = CHUNK_CHARS,
) -> tuple[str, int, int]:
    """The rows' lines, at most about `budget` characters of them (at least one line): from the
    first row on, `from_end` the last ones (the rows nearest where the page scrolls), or growing
    out from the row at `centre` (the one the page opens, always kept). The HTML and the range of
    rows it holds (start, stop): the page asks again for the rest. `prepare`: each row as shown
    (a share's masking), applied to the rows rendered only."""

    def html_of(i: int) -> str:
        row = rows[i] if prepare is None else prepare(rows[i])
        return lines_html([line(row, owner=owner)])

    if not rows:
        return "", 0, 0
    grow_after, grow_before = centre is not None or not from_end, centre is not None or from_end
    if centre is None:
        centre = len(rows) - 1 if from_end else 0
    centre = min(max(centre, 0), len(rows) - 1)
    start, stop = centre, centre + 1
    parts: dict[int, str] = {centre: html_of(centre)}
    size = len(parts[centre])
    while grow_before or grow_after:
        for side in ("after", "before"):
            if side == "after" and grow_after:
                if stop >= len(rows):
                    grow_after = False
                    continue
                html = html_of(stop)
                if size + len(html) > budget:
                    grow_after = False
                    continue
                parts[stop], size, stop = html, size + len(html), stop + 1
            elif side == "before" and grow_before:
                if start <= 0:
                    grow_before = False
                    continue
                html = html_of(start - 1)
                if size + len(html) > budget:
                    grow_before = False
                    continue
                start -= 1
                parts[start], size = html, size + len(html)
    return "".join(parts[i] for i in range(start, stop)), start, stop


def transcript_replace_frames(
    rows: Sequence[Mapping[str, Any]],
    total: int,
    session_id: int,
    window: Any = None,
    *,
    owner: bool = False,
    export_url: str | None = None,
) -> list[str]:
    """The replay on (re)connect: the first fragment replaces the lines, the others append the
    rest, each under FRAME_BUDGET (1,000 lines of a few KB each were one 3 MB message, which
    closed the socket on every connect, and htmx reconnected in a loop). `window`
    (sessions/transcript_window.py) says so when the lines are around an older event, not the latest.
    `owner`: lines for the owner's page (see `line`). `export_url`: where "Export all" points
    (a share page's own export; the owner's by default)."""
    chunks = _line_chunks(rows, owner) or [""]
    first = oob(
        "transcript-lines",
        "innerHTML",
        render_to_string(
            "sessions/_transcript_replace.html",
            {
                "first": SafeString(chunks[0]),
                "total": total,
                "shown": len(rows),
                "session_id": session_id,
                "window": window,
                "export_url": export_url,
            },
        ),
    )
    return [first] + [_append(chunk) for chunk in chunks[1:]]


def transcript_append(rows: Sequence[Mapping[str, Any]], owner: bool = False) -> str:
    """The fragment sent for every batch of events: no template (see lines.py)."""
    return _append(transcript_lines(rows, owner))


def _append(html: str) -> str:
    return oob("transcript-lines", "beforeend", html)


def _line_chunks(rows: Sequence[Mapping[str, Any]], owner: bool = False) -> list[str]:
    """The rows' lines, joined in chunks of at most FRAME_BUDGET characters (a line more if one
    is larger; a line is capped well under the limit)."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for row in rows:
        html = lines_html([line(row, owner=owner)])
        if current and size + len(html) > FRAME_BUDGET:
            chunks.append("".join(current))
            current, size = [], 0
        current.append(html)
        size += len(html)
    if current:
        chunks.append("".join(current))
    return chunks


def transcript_append_frames(rows: Sequence[Mapping[str, Any]], owner: bool = False) -> list[str]:
    """The batch as appends of at most FRAME_BUDGET characters of lines each: a websocket
    message over 1 MiB would close the page's socket."""
    return [_append(chunk) for chunk in _line_chunks(rows, owner)]


def skipped(session_id: int, count: int, export_url: str | None = None) -> str:
    """The marker for lines a flood left out of the page (the export has them; `export_url` as
    in transcript_replace_frames)."""
    href = export_url or reverse("sessions:export_jsonl", args=[session_id])
    return _append(
        f'<p class="older ev-skipped" data-skipped="{count}">{count} more event{"" if count == 1 else "s"} '
        f'(see <a href="{_e(href)}">export</a>)</p>'
    )


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
    if line.get("lane"):
        classes += " ev-lane-app"
    schema = schema_badge(line.get("schema_problems"), line.get("schema_lint"))
    if schema and schema[0]:
        # (The frame breaks the MCP schema — or was sent so on purpose: for filters and styles.)
        lint = line.get("schema_lint")
        classes += " ev-schema-on-purpose" if isinstance(lint, dict) and lint.get(ON_PURPOSE) else " ev-schema"
    out = [f'<details class="{classes}" id="ev-{_e(line["seq"])}" data-dir="{dir_}" data-method="{label}"']
    if reply_to:
        out.append(f' data-reply-to="{_e(reply_to)}"')
    if line.get("progress") is not None:
        out.append(f' data-progress="{_e(line["progress"])}"')
    t_ms = _e(line["t_ms"])
    # Copy (static/copy.js): the pretty JSON, else the raw text, else the line's text. No text in
    # the button (its name is its label): the transcript's text filter must not find "Copy" in every line.
    # The time as recorded (ms since the session started); the page shows it as the time of day.
    source = "pre.json" if line.get("pretty") else "details.raw pre" if line.get("raw") is not None else ".preview"
    out.append(
        f'>\n  <summary><button type="button" class="copy" aria-label="Copy" data-copy="closest:.ev {source}">'
        f'</button><span class="arrow" aria-label="{dir_}">{_e(line["arrow"])}</span>'
        f'<span class="t" data-ms="{t_ms}">{t_ms}</span><span class="seq" title="event {_e(line["seq"])}">'
        f"{_e(line['seq'])}</span>"
        + (
            '<span class="lane" title="the MCP App bridge: host ↔ app (postMessage)">app</span>'
            if line.get("lane")
            else ""
        )
        + f'<span class="label">{label}</span>'
    )
    # One numbering everywhere: a line shows its event number (what a check row, a search result,
    # "answers event N" and the exports cite); the JSON-RPC id is the message's own, said as such.
    if line.get("rpc_id") is not None:
        out.append(f'<span class="rid" title="JSON-RPC id">id {_e(line["rpc_id"])}</span>')
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
        facts = f"{_e(http.get('method', ''))} {_e(http.get('url', ''))}"
        if status:
            facts += f" → {_e(status)}"
        if line.get("sse_id"):
            facts += f" · SSE id {_e(line['sse_id'])}"
        if line.get("request"):
            facts += (
                f' <button type="button" class="small curl" data-copy-fetch="{_e(line["seq"])}">Copy as curl</button>'
            )
        out.append(f'<div class="httpfacts">{facts}</div>')
        if line["dir"] == "send":
            out.append(f'<pre class="headers" aria-label="Request headers">{_e(_headers(http.get("headers")))}</pre>')
        elif line["dir"] == "recv" and status:
            if http.get("request_headers"):
                out.append(
                    '<details class="hdrs"><summary>request headers, as sent</summary><pre class="headers">'
                    f"{_e(_headers(http['request_headers']))}</pre></details>"
                )
            out.append(
                f'<details class="hdrs"><summary>response headers</summary><pre class="headers">'
                f"{_e(_headers(http.get('headers')))}</pre></details>"
            )
    out.append("\n  ")
    if line.get("raw") is not None:
        out.append(f'<details class="raw"><summary>raw</summary><pre>{_e(line["raw"])}</pre></details>')
    if line.get("resend"):
        # Relative to the owner's session page (/sessions/<pk>/): the composer, prefilled from this event.
        out.append(
            f'<button type="button" class="small resend" data-open="raw/?from_seq={_e(line["seq"])}">'
            "Edit and resend</button>"
        )
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
    said = "schema problem" if count == 1 else f"{count} schema problems"
    on_purpose = info.get(ON_PURPOSE)
    flag = (
        f'<span class="schema-flag on-purpose">{said}, sent on purpose</span>'
        if on_purpose
        else f'<span class="schema-flag">{said}</span>'
    )
    items = []
    for problem in problems:
        problem = problem if isinstance(problem, dict) else {"message": str(problem)}
        items.append(
            f'<li><code class="pointer">{_e(problem.get("pointer") or "(the message)")}</code> '
            f'{_e(problem.get("message", ""))} <span class="schema-path">{_e(problem.get("schema_path", ""))}</span></li>'
        )
    if info.get("more"):
        items.append("<li>more problems were found than are listed</li>")
    spec = info.get("spec")
    definition, version = _e(info.get("definition", "")), _e(info.get("version", ""))
    against = f"{definition} of MCP {version}" if definition else "the MCP schema"
    if isinstance(spec, str) and spec.startswith(spec_sections.BASE + "/"):
        against += (
            f' · <a href="{_e(spec)}" target="_blank" rel="noopener noreferrer">spec: '
            f"{_e(spec_sections.title(spec))}</a>"
        )
    why = (
        (
            f'<p class="schema-on-purpose">Sent invalid on purpose ({_e(on_purpose)}): not counted among the '
            "session's schema problems.</p>"
        )
        if on_purpose
        else ""
    )
    body = (
        f'<div class="schema-problems" role="group" aria-label="schema problem"><p>Breaks {against}</p>'
        f"{why}<ul>{''.join(items)}</ul></div>"
    )
    return flag, body


def lines_html(lines: list[dict[str, Any]]) -> SafeString:
    """Lines for a template (`{{ lines|transcript_lines }}`): safe because every value was escaped."""
    return SafeString("".join(line_html(line) for line in lines))
