"""The transcript line, the one fragment sent for every event: built in Python, not a template.

A flood sends thousands of lines a second; through Django's template engine (an include per
line, a variable lookup per field) a line cost ~90 µs, most of the worker process's time.
Autoescaping is kept by hand: every value that comes from an event goes through `_e`
(`html.escape`, what Django's `escape` filter uses), and only the markup written here is
unescaped. The result is the same markup the `_line.html` template produced.
"""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from html import escape as _html_escape
from typing import Any

from django.utils.safestring import SafeString


def _e(value: Any) -> str:
    """Escape a value for HTML text and attributes (quotes too), as autoescaping does."""
    return _html_escape(value if isinstance(value, str) else str(value), quote=True)


def _latency(value: Any) -> str:
    """As `floatformat:1` shows it (half up: 1.25 -> 1.3)."""
    try:
        return str(Decimal(repr(float(value))).quantize(Decimal("0.1"), ROUND_HALF_UP))
    except (TypeError, ValueError, ArithmeticError):
        return ""


def line_html(line: dict[str, Any]) -> str:
    """One `<details class="ev">` line from `render.line(row)`'s dict."""
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
    out = [f'<details class="{classes}" id="ev-{_e(line["seq"])}" data-dir="{dir_}" data-method="{label}"']
    if reply_to:
        out.append(f' data-reply-to="{_e(reply_to)}"')
    out.append(f'>\n  <summary><span class="arrow" aria-label="{dir_}">{_e(line["arrow"])}</span>'
               f'<span class="t">{_e(line["t_ms"])}</span><span class="label">{label}</span>')
    if line.get("rpc_id") is not None:
        out.append(f'<span class="rid">#{_e(line["rpc_id"])}</span>')
    if line.get("latency") is not None:
        out.append(f'<span class="lat">{_latency(line["latency"])} ms</span>')
    if status:
        out.append(f'<span class="http">HTTP {_e(status)}</span>')
    out.append(f'<span class="preview">{_e(line["preview"])}</span></summary>\n  ')
    if line.get("problems"):
        out.append('<ul class="problems">' + "".join(f"<li>{_e(p)}</li>" for p in line["problems"]) + "</ul>")
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


def lines_html(lines: list[dict[str, Any]]) -> SafeString:
    """Lines for a template (`{{ lines|transcript_lines }}`): safe because every value was escaped."""
    return SafeString("".join(line_html(line) for line in lines))
