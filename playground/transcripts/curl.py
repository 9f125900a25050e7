"""One recorded HTTP request as a curl command line: method, URL, the headers the playground
set (MCP-Protocol-Version, Mcp-Session-Id, Accept, Content-Type, the server's own headers, the
OAuth token's Authorization) and the exact body, quoted for a POSIX shell.

A row is what the transcript saved: its secrets are already masked (`••••`), and the caller
may give the real values (`unmask`) to put back. Headers a client library adds by itself
(Host, Content-Length, Connection, Accept-Encoding) are left to curl.

The command is pasted into a shell, and a server, an imported file or an old row decides much
of its text (issue 30): no value may end a line or a quote. Notes are comment lines with every
control or line-separating character escaped; each argument is one shell word, single-quoted,
with control characters (which a terminal acts on when pasted: ^C drops the quoted text typed
so far) written as `$'\\xNN'`; a header that could never have been sent (a name that is not an
HTTP token, a value with CR, LF or NUL) is left out and said so; a NUL elsewhere is refused.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from playground.mcp.secrets import MASK
from playground.mcp.transports.http_common import header_problem

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
            notes.append(
                f"the frame was recorded cut at {len(row.get('raw') or '')} of {row.get('size')} bytes: "
                "this body is its head"
            )
        return row.get("raw") or "", notes
    data = row.get("data") or {}
    shown = data.get("request_body")
    if not isinstance(shown, str):
        return None, []
    notes = ["the authorization flow's body was recorded with its secrets masked (they are not kept)"]
    request_type = {k.lower(): v for k, v in (http.get("request_headers") or {}).items()}.get("content-type", "")
    if is_form(request_type):
        return form_body(shown), notes  # recorded one field a line: back to a form
    return shown, notes


def _headers(row: dict[str, Any]) -> dict[str, str]:
    http = row["http"]
    recorded = http.get("headers") if row["dir"] == "send" else http.get("request_headers")
    if not isinstance(recorded, dict):
        return {}
    return {str(k): str(v) for k, v in recorded.items() if str(k).lower() not in LEFT_TO_CURL}


# C0 and C1 controls but LF (a newline inside quotes is only text to every shell), and DEL.
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]+")
# Unicode categories a note shows escaped: controls, format characters, surrogates, line and
# paragraph separators.
_ESCAPED_IN_NOTES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# What $'…' quoting is said to need, once, when a command uses it.
ANSI_C_NOTE = "control characters are written as $'\\xNN' (bash, zsh, ksh, POSIX.1-2024 sh)"


def _one_line(text: str) -> str:
    """A note as one comment line: every control, format or line/paragraph separator character
    (LF, CR, NEL, U+2028, a terminal escape, a bidi override) as a Python escape, so nothing a
    value holds can end the comment or hide what follows it."""
    return "".join(repr(c)[1:-1] if unicodedata.category(c) in _ESCAPED_IN_NOTES else c for c in text)


def _word(text: str, what: str) -> str:
    """One shell word holding exactly `text`: shlex.quote's single quotes, and each run of control
    characters as a $'\\xNN' piece joined on (its UTF-8 bytes; no `\\'` inside, which bash's
    history expansion would read as the quote's end). A NUL no argument can carry: refused."""
    if "\0" in text:
        raise NotARequest(f"{what} holds NUL characters, which no shell argument can carry")
    pieces: list[str] = []
    at = 0
    for run in _CONTROLS.finditer(text):
        if run.start() > at:
            pieces.append(shlex.quote(text[at : run.start()]))
        pieces.append("$'" + "".join(f"\\x{b:02x}" for b in run.group().encode("utf-8")) + "'")
        at = run.end()
    if at < len(text) or not pieces:
        pieces.append(shlex.quote(text[at:]))
    return "".join(pieces)


def command(
    row: dict[str, Any],
    unmask: Callable[[str, str], str] | None = None,
    real_url: str | None = None,
    notes: Sequence[str] = (),
) -> str:
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
    for name, value in list(headers.items()):
        problem = header_problem(name, value)  # recorded before names were checked, or uploaded
        if problem is not None:
            notes.append(f"left out: {problem}")
            del headers[name]
    masked = [name for name, value in headers.items() if MASK in value]
    if MASK in url:
        masked.append("the URL")
    if masked:
        notes.append(f"masked ({MASK}): {', '.join(masked)}")
    head = ["curl", "-sS"]
    accept = {k.lower(): v for k, v in headers.items()}.get("accept", "")
    if "text/event-stream" in accept:
        head.append("-N")  # an SSE stream: show events as they come
    if (body is None and method != "GET") or (body is not None and method != "POST"):
        head += ["-X", _word(method, "the method")]
    head.append(_word(url, "the URL"))
    parts = [" ".join(head)]
    lines = [f"{name}: {value}" for name, value in headers.items()]
    parts += [f"-H {_word(line, 'a header')}" for line in lines]
    if body is not None:
        parts.append(f"--data-raw {_word(body, 'the body')}")
    if any(_CONTROLS.search(text) for text in (method, url, *lines, body or "")):
        notes.append(ANSI_C_NOTE)
    return "".join(f"# {_one_line(note)}\n" for note in notes) + " \\\n  ".join(parts) + "\n"
