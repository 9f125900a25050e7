"""The Result region and its content blocks, built in Python: sent once for every call, on the
path a person waits on. Through Django's templates (an include per content block, a lookup
per field) the Result of a one-line echo cost ~0.6 ms, a third of the relay's time in the
process. As in lines.py, every value that comes from a server goes through `_e`; only the
markup written here is unescaped. Input is `results.describe_result`'s dict.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from playground.transcripts.storable import without_surrogates

from .html import esc as _e
from .html import latency_ms as _latency_ms
from .html import oob


COPY = '<button type="button" class="copy" data-copy="closest:.copyable pre">Copy</button>'


def _more(more: dict[str, Any] | None) -> str:
    """Where the rest of a long text is appended, piece by piece, in a closed <details>."""
    if not more:
        return ""
    return (f'<details class="more"><summary>{_e(more["chars"])} more characters</summary>'
            f'<pre class="text" id="{_e(more["id"])}"></pre></details>')


def _copyable(css: str, text: str, more: dict[str, Any] | None = None, dom_id: str = "") -> str:
    """A block of text or JSON with its Copy button (static/copy.js), which copies all of it,
    the rest appended in pieces (`_more`) included."""
    attrs = f' id="{dom_id}"' if dom_id else ""
    if more:
        attrs += f' data-copy-more="{_e(more["id"])}"'
    return f'<div class="copyable">{COPY}<pre class="{css}"{attrs}>{_e(text)}</pre>{_more(more)}</div>'


def _resource_link(uri: str) -> str:
    """A resource a result links to, opened in the workspace (read there) by a click (`data-open`,
    static/workspace.js). The URL is relative to the session page, the only page that shows a Result.
    An unpaired surrogate ("\\ud800" in a server's JSON) cannot be URL-encoded: the link reads the
    URI as the page shows it, U+FFFD in its place (rendering raised, on every reconnect too)."""
    try:
        query = quote(uri, safe="")
    except UnicodeEncodeError:
        query = quote(without_surrogates(uri), safe="")
    url = _e("resource/?uri=" + query)
    return f'<a class="mono" href="{url}" data-open="{url}">{_e(uri)}</a>'


def content_html(item: dict[str, Any]) -> str:
    """One content block (`results.content_item`): text, media only from checked data URLs."""
    kind = item.get("kind")
    out = [f'<div class="content content-{_e(kind)}">\n']
    if kind == "text":
        out.append(_copyable("text", item["text"], item.get("text_more")))
    elif kind == "image":
        out.append(f'<img src="{_e(item["src"])}" alt="image ({_e(item["mime"])})">')
    elif kind == "audio":
        out.append(f'<audio controls src="{_e(item["src"])}"></audio>')
    elif kind == "resource_link":
        out.append(f'<div class="resource-link">🔗 {_resource_link(item["uri"])} {_e(item["name"])} '
                   f'{_e(item["mime"])} <span class="dim">{_e(item["description"])}</span></div>')
    elif kind == "resource_text":
        out.append(f'<div class="mono dim">{_e(item["uri"])} {_e(item["mime"])}</div>'
                   + _copyable("text", item["text"], item.get("text_more")))
    elif kind == "resource_blob":
        out.append(f'<div class="mono dim">{_e(item["uri"])} {_e(item["mime"])} (blob, {_e(item["size"])} bytes)</div>\n  ')
        preview = item.get("preview")
        if preview == "image":
            out.append(f'<img src="{_e(item["media"])}" alt="blob preview ({_e(item["mime"])})">')
        elif preview == "audio":
            out.append(f'<audio controls src="{_e(item["media"])}"></audio>')
        elif preview == "text":
            out.append(_copyable("text blob-text", item["text"]))
            if item.get("cut"):
                out.append('<p class="dim">preview cut; download for the whole blob</p>')
        elif item.get("why"):
            out.append(f'<p class="dim">{_e(item["why"])}</p>')
        if item.get("src"):
            out.append(f'\n  <a href="{_e(item["src"])}" download="{_e(item["filename"])}">Download</a>')
    elif kind == "blocked":
        out.append(f'<p class="dim">{_e(item["why"])} ({_e(item["mime"])})</p>')
    else:
        out.append(_copyable("json", item.get("json", "")))
    out.append("\n</div>\n")
    return "".join(out)


def content_block(item: dict[str, Any]) -> SafeString:
    """For templates (the sampling card shows messages the same way): every value was escaped."""
    return SafeString(content_html(item))


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


def _latency(outcome: dict[str, Any], rounds: bool) -> str:
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
            row += (f' <a href="{_e(e["url"])}" target="_blank" rel="noopener noreferrer" class="button small">'
                    "Open in a new tab</a>")
        if e.get("id"):
            row += f' <span class="dim">elicitationId {_e(e["id"])}</span>'
        rows.append(row + "</div>")
    return (f'  <div class="url-elicitations" role="group" aria-label="URL elicitations required">\n'
            f"    <p>The server needs you to open {these} first (nothing is opened unless you click), then call again:</p>\n"
            f'    {"".join(rows)}\n  </div>\n')


def _rounds(rounds: list[dict[str, Any]]) -> str:
    if not rounds:
        return ""
    items = []
    for r in rounds:
        keys = ", ".join(f"<code>{_e(k)}</code>" for k in r.get("keys") or []) or "nothing"
        state = ""
        if r.get("request_state") is not None:
            state = (f'<details><summary>requestState ({_e(r.get("state_size"))} characters, sent back unchanged)'
                     f'</summary>{_copyable("json state", r["request_state"])}</details>')
        items.append(f"<li>input_required round {_e(r.get('round'))}: {_e(r.get('method'))} asked for {keys}; "
                     f"answered and retried{state}</li>")
    return f'<ol class="rounds" aria-label="Input rounds">{"".join(items)}</ol>'


def _task(task: dict[str, Any] | None, created: bool) -> str:
    """A task in a Result (a CreateTaskResult, a tasks/get or tasks/cancel answer); its card, above,
    follows it and has its actions."""
    if not task:
        return ""
    poll = f' <span class="dim">poll every {_e(task["poll"])} ms</span>' if task.get("poll") else ""
    where = ('\n    <p class="dim">Its card above follows it (tasks/get at the server\'s pace) and fetches its '
             "result when it needs input or ends.</p>") if created else ""
    return (f'<div class="task" role="group" aria-label="Task">\n    <p>task <code>{_e(task["id"])}</code> '
            f'<span class="badge task-{_e(task["status"])}">{_e(task["status"])}</span> {_e(task["message"])}{poll}'
            f"</p>{where}\n  </div>")


def _structured(d: dict[str, Any]) -> str:
    if not d.get("has_structured"):
        return ""
    check = ""
    found = d.get("structured_errors") or []
    if d.get("has_output_schema"):
        if found and all(e.get("keyword") == "not-checked" for e in found):
            check = '<span class="badge warn">not checked against outputSchema</span>'
        else:
            check = ('<span class="badge bad">does not match outputSchema</span>' if found
                     else '<span class="badge ok">matches outputSchema</span>')
    errors = ""
    if d.get("structured_errors"):
        errors = '<ul class="problems">' + "".join(
            f'<li><code>{_e(e.get("path") or "/")}</code> {_e(e.get("message"))}</li>'
            for e in d["structured_errors"]) + "</ul>"
    return (f"\n  <h4>structuredContent {check}</h4>\n  {errors}\n  "
            + _copyable("json", d.get("structured") or "", d.get("structured_more")))


def result_html(outcome: dict[str, Any], d: dict[str, Any]) -> str:
    """The Result region (an out-of-band swap); it also removes the call's in-flight card, if
    the page was shown one."""
    error, is_error = d.get("error"), d.get("is_error")
    out = []
    out.append(f'<section id="result" role="region" aria-label="Result" '
               f'class="result{" result-error" if error or is_error else ""}">\n'
               f'  <header><strong>{_e(outcome.get("command"))}</strong> {_e(outcome.get("name"))} '
               f'{_badges(error, bool(is_error))}{_latency(outcome, bool(d.get("rounds")))}'
               '<button type="button" class="copy" data-copy="#result-raw" title="Copy the result (raw JSON)">Copy</button>'
               '</header>\n')
    if error:
        out.append(f'  <p class="error-message">{_e(error.get("message"))}</p>\n')
    if d.get("too_large"):
        out.append(f'  <p class="error-message">This result is too large to show here ({_e(d["too_large"])} bytes of '
                   "HTML); the transcript and the export have the whole frame.</p>\n")
    out.append(_url_elicitations(d.get("url_elicitations") or []))
    if d.get("description"):
        out.append(f'  <p class="desc">{_e(d["description"])}</p>\n')
    out.append(f"  {_rounds(d.get('rounds') or [])}{_task(d.get('task'), outcome.get('command') == 'call_tool')}\n  ")
    out.extend(content_html(item) for item in d.get("items") or [])
    out.extend(content_html(item) for item in d.get("contents") or [])
    out.extend(f'<div class="prompt-message"><span class="role">{_e(m["role"])}</span>{content_html(m["item"])}</div>'
               for m in d.get("messages") or [])
    out.append(_structured(d))
    # Open when it is all there is to see (a ping, a raw request, an error with data).
    alone = not (d.get("items") or d.get("contents") or d.get("messages") or d.get("has_structured")
                 or d.get("task") or d.get("url_elicitations")) and (not error or error.get("data"))
    out.append(f'\n  <details class="raw"{" open" if alone else ""}><summary>raw JSON</summary>'
               f'{_copyable("json", d.get("raw") or "", d.get("raw_more"), "result-raw")}</details>\n</section>')
    region = oob("result", "outerHTML", "".join(out))
    if outcome.get("announced", True):
        return oob(f"call-{outcome.get('call_id')}", "delete") + "\n" + region
    return region


def piece_html(dom_id: str, text: str) -> str:
    """A further piece of a long text, appended where `_more` made room for it."""
    return oob(dom_id, "beforeend", _e(text))
