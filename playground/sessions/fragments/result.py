"""The Result region of the session page, the one renderer of a call's end: its outcome
described (`describe_result`), built in Python (`result_html`), cut into fragments a tab's socket
can carry (`result_frames`); and the call's in-flight card and progress bar.

Built in Python, not with Django's templates: sent once for every call, on the path a person
waits on, where an include per content block and a lookup per field made the Result of a
one-line echo cost ~0.6 ms, a third of the relay's time in the process. As in lines.py, every
value that comes from a server goes through `_e`; only the markup written here is unescaped.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from playground.mcp import jsontext

from ..protocol import CallStarted, Outcome
from .content import content_html, content_item, copyable, url_parts
from .html import esc as _e
from .html import latency_ms as _latency_ms
from .html import oob
from .regions import WS_MESSAGE_LIMIT

TERMINAL_TASK_STATES = frozenset({"completed", "failed", "cancelled"})
URL_ELICITATION_REQUIRED = -32042
ERROR_CHARS = 4000  # characters of an error message shown above the raw JSON


def describe_task(task: Any) -> dict[str, Any] | None:
    """A task (CreateTaskResult's `task`, or a tasks/get result) with what can be done next."""
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        return None
    status = str(task.get("status") or "")
    return {
        "id": task["taskId"],
        "status": status,
        "message": str(task.get("statusMessage") or ""),
        "ttl": task.get("ttl"),
        "poll": task.get("pollInterval"),
        "created": str(task.get("createdAt") or ""),
        "terminal": status in TERMINAL_TASK_STATES,
    }


def _error(error: Any) -> Any:
    """The error as shown: a server's message is cut at ERROR_CHARS (the raw JSON has more)."""
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str) and len(message) > ERROR_CHARS:
        return {**error, "message": f"{message[:ERROR_CHARS]}… ({len(message)} characters in all)"}
    return error


# What the page calls a call: the protocol's method, not the internal command's name ("call_tool"
# showed above every result).
LABELS = {
    "call_tool": "tools/call",
    "read_resource": "resources/read",
    "get_prompt": "prompts/get",
    "ping": "ping",
    "task_get": "tasks/get",
    "task_result": "tasks/result",
    "task_cancel": "tasks/cancel",
    "raw": "request",
}


def label(command: Any) -> str:
    return LABELS.get(str(command), str(command))


def describe_result(outcome: Outcome) -> dict[str, Any]:
    result = outcome.get("result")
    described: dict[str, Any] = {
        "error": _error(outcome.get("error")),
        "raw": jsontext.pretty(outcome.get("error", result))[:500_000],
        "items": [],
        "is_error": False,
        "structured": None,
        "structured_errors": [],
        "has_output_schema": False,
        "messages": [],
        "contents": [],
        "task": None,
        "rounds": outcome.get("rounds") or [],
        "url_elicitations": url_elicitations(outcome.get("error")),
        "description": "",
    }
    if not isinstance(result, dict):
        return described
    command = outcome.get("command")
    if command == "call_tool" and isinstance(result.get("task"), dict):
        described["task"] = describe_task(result["task"])
    elif command in ("task_get", "task_cancel"):
        described["task"] = describe_task(result)
    if command in ("call_tool", "task_result"):
        described["is_error"] = result.get("isError") is True
        described["items"] = [content_item(c) for c in result.get("content") or [] if True]
        if "structuredContent" in result:
            described["structured"] = jsontext.pretty(result["structuredContent"])
            if "structured_errors" in outcome:
                described["has_output_schema"] = True
                described["structured_errors"] = outcome["structured_errors"]
    elif command == "read_resource":
        for entry in result.get("contents") or []:
            if isinstance(entry, dict):
                described["contents"].append(content_item({"type": "resource", "resource": entry}))
    elif command == "get_prompt":
        described["description"] = str(result.get("description") or "")
        for message in result.get("messages") or []:
            if isinstance(message, dict):
                described["messages"].append(
                    {"role": str(message.get("role", "")), "item": content_item(message.get("content"))}
                )
    return described


def url_elicitations(error: Any) -> list[dict[str, Any]]:
    """The URL elicitations a -32042 error (URLElicitationRequiredError) asks for, to show on the page."""
    if not isinstance(error, dict) or error.get("code") != URL_ELICITATION_REQUIRED:
        return []
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    out = []
    for item in data.get("elicitations") or []:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            out.append(
                {
                    "url": item["url"],
                    "parts": url_parts(item["url"]),
                    "message": str(item.get("message") or ""),
                    "id": str(item.get("elicitationId") or ""),
                }
            )
    return out[:20]


# The Result as HTML ----------------------------------------------------------------------


def _badges(error: dict[str, Any] | None, is_error: bool) -> str:
    """Whose error it was: the server's (JSON-RPC, with its code), the transport's, or ours."""
    out = ""
    if error:
        if error.get("cancelled"):
            what = "cancelled"
        elif error.get("timeout"):
            what = "timed out"
        elif error.get("kind") == "ended":
            what = "session ended"
        elif error.get("kind") == "transport":
            what = "transport error"
        elif error.get("kind") == "client":
            what = "client error"
        else:
            code = error.get("code")
            what = "JSON-RPC error" + (f" {_e(code)}" if code is not None else "")
        out += f'<span class="badge bad">{what}</span>'
        if error.get("http"):
            out += f' <span class="badge">HTTP {_e(error["http"])}</span>'
        out += " "
    if is_error:
        out += '<span class="badge bad">isError: true</span> '
    return out


def _latency(outcome: Outcome, rounds: bool) -> str:
    if outcome.get("latency_ms") is None:
        return ""
    title = "from sending the request to its answer" + (", input rounds included" if rounds else "")
    return f'<span class="dim latency" title="{title}">{_latency_ms(outcome["latency_ms"])} ms</span> '


def _url_elicitations(elicitations: list[dict[str, Any]]) -> str:
    """A -32042 error's URLs: shown whole, host stressed (the `_url.html` the server-request card
    uses too); linked only when http(s), opened only if the person clicks."""
    if not elicitations:
        return ""
    these = "these URLs" if len(elicitations) > 1 else "this URL"
    rows = []
    for e in elicitations:
        row = '<div class="url-elicitation">' + (f"<p>{_e(e['message'])}</p>" if e.get("message") else "")
        row += render_to_string("sessions/_url.html", {"parts": e["parts"], "url": e["url"]})
        if e["parts"].get("openable"):
            row += (
                f' <a href="{_e(e["url"])}" target="_blank" rel="noopener noreferrer" class="button small">'
                "Open in a new tab</a>"
            )
        if e.get("id"):
            row += f' <span class="dim">elicitationId {_e(e["id"])}</span>'
        rows.append(row + "</div>")
    return (
        f'  <div class="url-elicitations" role="group" aria-label="URL elicitations required">\n'
        f"    <p>The server needs you to open {these} first (nothing is opened unless you click), then call again:</p>\n"
        f"    {''.join(rows)}\n  </div>\n"
    )


def _rounds(rounds: list[dict[str, Any]]) -> str:
    if not rounds:
        return ""
    items = []
    for r in rounds:
        keys = ", ".join(f"<code>{_e(k)}</code>" for k in r.get("keys") or []) or "nothing"
        state = ""
        if r.get("request_state") is not None:
            state = (
                f"<details><summary>requestState ({_e(r.get('state_size'))} characters, sent back unchanged)"
                f"</summary>{copyable('json state', r['request_state'])}</details>"
            )
        items.append(
            f"<li>input_required round {_e(r.get('round'))}: {_e(r.get('method'))} asked for {keys}; "
            f"answered and retried{state}</li>"
        )
    return f'<ol class="rounds" aria-label="Input rounds">{"".join(items)}</ol>'


def _task(task: dict[str, Any] | None, created: bool) -> str:
    """A task in a Result (a CreateTaskResult, a tasks/get or tasks/cancel answer); its card, above,
    follows it and has its actions."""
    if not task:
        return ""
    poll = f' <span class="dim">poll every {_e(task["poll"])} ms</span>' if task.get("poll") else ""
    where = (
        (
            '\n    <p class="dim">Its card above follows it (tasks/get at the server\'s pace) and fetches its '
            "result when it needs input or ends.</p>"
        )
        if created
        else ""
    )
    return (
        f'<div class="task" role="group" aria-label="Task">\n    <p>task <code>{_e(task["id"])}</code> '
        f'<span class="badge task-{_e(task["status"])}">{_e(task["status"])}</span> {_e(task["message"])}{poll}'
        f"</p>{where}\n  </div>"
    )


def _structured(d: dict[str, Any]) -> str:
    if not d.get("has_structured"):
        return ""
    check = ""
    found = d.get("structured_errors") or []
    if d.get("has_output_schema"):
        if found and all(e.get("keyword") == "not-checked" for e in found):
            check = '<span class="badge warn">not checked against outputSchema</span>'
        else:
            check = (
                '<span class="badge bad">does not match outputSchema</span>'
                if found
                else '<span class="badge ok">matches outputSchema</span>'
            )
    errors = ""
    if d.get("structured_errors"):
        errors = (
            '<ul class="problems">'
            + "".join(
                f"<li><code>{_e(e.get('path') or '/')}</code> {_e(e.get('message'))}</li>"
                for e in d["structured_errors"]
            )
            + "</ul>"
        )
    return f"\n  <h4>structuredContent {check}</h4>\n  {errors}\n  " + copyable(
        "json", d.get("structured") or "", d.get("structured_more")
    )


def _app(outcome: Outcome) -> str:
    """The place of the tool's MCP App, below the Result: static/apps-host.js opens it (on the
    sandbox origin), and tears it down when this Result is replaced."""
    app = outcome.get("app")
    if not isinstance(app, dict) or outcome.get("error"):
        return ""
    call_id, uri = _e(outcome.get("call_id")), _e(app.get("uri"))
    return (
        f'  <section class="app-view" aria-label="MCP App" data-app-call="{call_id}" data-app-uri="{uri}">'
        f'<header><strong>App</strong> <code>{uri}</code> <span class="app-status dim">opening…</span>'
        '<span class="app-counts dim"></span></header>'
        '<div class="app-ask" hidden></div><div class="app-slot"></div>'
        '<ol class="app-said" aria-label="What the app said"></ol></section>\n'
    )


def result_html(outcome: Outcome, d: dict[str, Any]) -> str:
    """The Result region (an out-of-band swap); it also removes the call's in-flight card, if
    the page was shown one."""
    error, is_error = d.get("error"), d.get("is_error")
    out = []
    out.append(
        f'<section id="result" role="region" aria-label="Result" '
        f'class="result{" result-error" if error or is_error else ""}">\n'
        f"  <header><strong>{_e(label(outcome.get('command')))}</strong> {_e(outcome.get('name'))} "
        f"{_badges(error, bool(is_error))}{_latency(outcome, bool(d.get('rounds')))}"
        '<button type="button" class="copy" data-copy="#result-raw" title="Copy the result (raw JSON)">Copy</button>'
        "</header>\n"
    )
    if error:
        out.append(f'  <p class="error-message">{_e(error.get("message"))}</p>\n')
    if d.get("too_large"):
        out.append(
            f'  <p class="error-message">This result is too large to show here ({_e(d["too_large"])} bytes of '
            "HTML); the transcript and the export have the whole frame.</p>\n"
        )
    out.append(_url_elicitations(d.get("url_elicitations") or []))
    if d.get("description"):
        out.append(f'  <p class="desc">{_e(d["description"])}</p>\n')
    out.append(f"  {_rounds(d.get('rounds') or [])}{_task(d.get('task'), outcome.get('command') == 'call_tool')}\n  ")
    out.extend(content_html(item) for item in d.get("items") or [])
    out.extend(content_html(item) for item in d.get("contents") or [])
    out.extend(
        f'<div class="prompt-message"><span class="role">{_e(m["role"])}</span>{content_html(m["item"])}</div>'
        for m in d.get("messages") or []
    )
    out.append(_structured(d))
    # Open when it is all there is to see (a ping, a raw request, an error with data).
    alone = not (
        d.get("items")
        or d.get("contents")
        or d.get("messages")
        or d.get("has_structured")
        or d.get("task")
        or d.get("url_elicitations")
    ) and (not error or error.get("data"))
    out.append(
        f'\n  <details class="raw"{" open" if alone else ""}><summary>raw JSON</summary>'
        f"{copyable('json', d.get('raw') or '', d.get('raw_more'), 'result-raw')}</details>\n"
        f"{_app(outcome)}</section>"
    )
    region = oob("result", "outerHTML", "".join(out))
    if outcome.get("announced", True):
        return oob(f"call-{outcome.get('call_id')}", "delete") + "\n" + region
    return region


def piece_html(dom_id: str, text: str) -> str:
    """A further piece of a long text, appended where `_more` made room for it."""
    return oob(dom_id, "beforeend", _e(text))


# The Result as fragments -----------------------------------------------------------------

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
            item["why"] = (
                f"{len(value) * 3 // 4} bytes: too large to show in the page; the session's export has the whole frame"
            )
            if item.get("kind") in ("image", "audio"):
                item["kind"] = "blocked"


def result_frames(outcome: Outcome) -> list[str]:
    """The Result region, then the appends that complete its long texts."""
    described = describe_result(outcome)
    described["has_structured"] = bool(described.get("structured"))  # even if all of it comes in pieces
    fields: list[tuple[dict[str, Any], str, str]] = []  # (holder, key, dom id of the rest)
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
            rest += [(dom_id, tail[i : i + RESULT_PIECE]) for i in range(0, len(tail), RESULT_PIECE)]
        room -= len(holder[key] or "")
    first = result_html(outcome, described)
    size = len(first.encode("utf-8", "surrogatepass"))
    if size > WS_MESSAGE_LIMIT:
        # Many big fields at once (a server's descriptions, names, URIs): show that there was a
        # result, and end the call's in-flight card, rather than lose the whole fragment.
        first = result_html(outcome, {"error": described["error"], "too_large": size})
        rest = []
    return [first] + [piece_html(dom_id, piece) for dom_id, piece in rest]


def result(outcome: Outcome) -> str:
    """The whole Result region in one fragment (for small results and tests)."""
    return "".join(result_frames(outcome))


# A call in flight ------------------------------------------------------------------------


def call_started(message: CallStarted) -> str:
    started = message.get("started")
    call = {
        **message,
        "started": int(started * 1000) if isinstance(started, (int, float)) else "",
        "command": label(message.get("command")),
    }
    return oob("inflight", "beforeend", render_to_string("sessions/_call_started.html", {"call": call}))


def progress(call_id: str, params: dict[str, Any]) -> str:
    total = params.get("total")
    value = params.get("progress")
    percent = None
    if isinstance(total, (int, float)) and total > 0 and isinstance(value, (int, float)):
        percent = max(0, min(100, round(100 * value / total)))
    return oob(
        f"progress-{call_id}",
        "outerHTML",
        render_to_string(
            "sessions/_progress.html",
            {"call_id": call_id, "params": params, "percent": percent, "value": value, "total": total},
        ),
    )
