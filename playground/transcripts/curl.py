"""One recorded HTTP request as a curl command line: method, URL, the headers the playground
set (MCP-Protocol-Version, Mcp-Session-Id, Accept, Content-Type, the server's own headers, the
OAuth token's Authorization) and the exact body, quoted for a POSIX shell.

A row is what the transcript saved: its secrets are already masked (`••••`), and the caller
may give the real values (`unmask`) to put back. Headers a client library adds by itself
(Host, Content-Length, Connection, Accept-Encoding) are left to curl.
"""
from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

from playground.mcp.secrets import MASK

from .form_bodies import form_body, is_form

LEFT_TO_CURL = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})


class NotARequest(ValueError):
    """The row records no HTTP request curl could repeat."""


def _body(row: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The request body and notes about it (a cut frame, a body kept masked)."""
    http = row["http"]
    if row["dir"] == "send":
        notes = []
        if row.get("truncated"):
            notes.append(f"the frame was recorded cut at {len(row.get('raw') or '')} of {row.get('size')} bytes: "
                         "this body is its head")
        return row.get("raw") or "", notes
    data = row.get("data") or {}
    shown = data.get("request_body")
    if not isinstance(shown, str):
        return None, []
    notes = ["the authorization flow's body was recorded with its secrets masked (they are not kept)"]
    request_type = {k.lower(): v for k, v in (http.get("request_headers") or {}).items()}.get("content-type", "")
    if is_form(request_type):
        return form_body(shown), notes                     # recorded one field a line: back to a form
    return shown, notes


def _headers(row: dict[str, Any]) -> dict[str, str]:
    http = row["http"]
    recorded = http.get("headers") if row["dir"] == "send" else http.get("request_headers")
    if not isinstance(recorded, dict):
        return {}
    return {str(k): str(v) for k, v in recorded.items() if str(k).lower() not in LEFT_TO_CURL}


def command(row: dict[str, Any], unmask: Callable[[str, str], str] | None = None,
            real_url: str | None = None, notes: Sequence[str] = ()) -> str:
    """The curl command for a request row. `unmask(name, masked_value)` gives a header's real
    value (or the masked one back); `real_url` replaces a masked URL; `notes` come first (why
    a value stays masked)."""
    http = row.get("http")
    if not isinstance(http, dict) or not isinstance(http.get("method"), str) or not isinstance(http.get("url"), str):
        raise NotARequest("this event records no HTTP request")
    method, url = http["method"].upper(), real_url or http["url"]
    body, about_body = _body(row)
    notes = [*notes, *about_body]
    headers = _headers(row)
    if unmask is not None:
        headers = {name: unmask(name, value) if MASK in value else value for name, value in headers.items()}
    if body is not None and "\0" in body:
        raise NotARequest("the body holds NUL characters, which no shell argument can carry")
    masked = [name for name, value in headers.items() if MASK in value]
    if MASK in url:
        masked.append("the URL")
    if masked:
        notes.append(f"masked ({MASK}): {', '.join(masked)}")
    head = ["curl", "-sS"]
    accept = {k.lower(): v for k, v in headers.items()}.get("accept", "")
    if "text/event-stream" in accept:
        head.append("-N")                       # an SSE stream: show events as they come
    if (body is None and method != "GET") or (body is not None and method != "POST"):
        head += ["-X", shlex.quote(method)]
    head.append(shlex.quote(url))
    parts = [" ".join(head)]
    parts += [f"-H {shlex.quote(f'{name}: {value}')}" for name, value in headers.items()]
    if body is not None:
        parts.append(f"--data-raw {shlex.quote(body)}")
    return "".join(f"# {note}\n" for note in notes) + " \\\n  ".join(parts) + "\n"
