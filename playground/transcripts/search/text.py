"""What of an event is searchable: the words a person looks for, not the JSON around them.

Per event: the text of a stderr line or note, then the string and number values of the
message in document order — the method, a tool's, resource's or prompt's name or URI, the
arguments, the result's text, an error's message — without the keys (every message has the
same ones), the top-level `jsonrpc` and `id`, `_meta` (progress tokens and other plumbing),
and values that are base64 blobs (an image's
`data`, a resource's `blob`); a frame that is not JSON (nor an object or array) by its raw
text. At most
TEXT_CAP characters an event: a 1 MB frame is searched by its first few thousand characters,
not indexed whole.

Both databases' indexes are filled from this function (search/sqlite.py, search/postgresql.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from playground.mcp import jsontext

TEXT_CAP = 4000
# A long value of the base64 alphabets only (line breaks allowed, no spaces) is data, not words.
BLOB_MIN = 256
_BLOB = re.compile(r"[A-Za-z0-9+/=_\-\r\n]{%d,}" % BLOB_MIN)
_TOP_LEVEL_SKIPPED = ("jsonrpc", "id", "_meta")


def is_blob(value: str) -> bool:
    return len(value) >= BLOB_MIN and _BLOB.fullmatch(value) is not None


def searchable_text(row: Mapping[str, Any], cap: int = TEXT_CAP) -> str:
    """The words of one transcript row (its JSONL line), at most `cap` characters."""
    parts: list[str] = []
    size = 0

    def add(value: str) -> None:
        nonlocal size
        part = value[: cap - size]
        parts.append(part)
        size += len(part) + 1

    text = row.get("text")
    if isinstance(text, str) and text:
        add(text)
    message = row.get("message")
    stack: list[Any]
    if isinstance(message, dict):
        stack = [value for key, value in reversed(message.items()) if key not in _TOP_LEVEL_SKIPPED]
    elif isinstance(message, list):
        stack = list(reversed(message))
    else:
        raw = row.get("raw")
        if isinstance(raw, str) and raw and not parts:  # (a stderr line's raw text is its text)
            add(raw)
        stack = []
    while stack and size < cap:
        value = stack.pop()
        if isinstance(value, str):
            if value and not is_blob(value):
                add(value)
        elif isinstance(value, dict):
            stack.extend(reversed([v for k, v in value.items() if k != "_meta"]))
        elif isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            add(str(value))
    out = " ".join(parts)[:cap]
    if not out.isascii():  # a lone surrogate (a server's "\ud800") cannot be stored in either database
        out = out.encode("utf-8", "replace").decode("utf-8")
    return out.replace("\x00", " ") if "\x00" in out else out  # nor NUL in PostgreSQL's text


def stored_text(data: Any) -> str:
    """`searchable_text` of an event's stored `data` (its JSON text, or parsed by the driver)."""
    try:
        row = jsontext.loads(data) if isinstance(data, (str, bytes)) else data
    except (ValueError, RecursionError):
        return ""
    return searchable_text(row) if isinstance(row, dict) else ""
