"""Values a server sent, made storable in PostgreSQL (and sendable through Redis).

PostgreSQL stores neither U+0000 (in text or jsonb) nor unpaired surrogates (in jsonb), and a
server may send both: JSON escapes such as "\\u0000" and "\\ud800" parse into them, and a raw
NUL byte is kept in the frame's text. One such frame made every transcript write of its
batch fail, again and again: nothing after it was saved. There they become U+FFFD and the
event says so; SQLite stores them as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.db import connection

from playground.mcp import jsontext

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATES = re.compile("[\ud800-\udfff]")
# In json.dumps text (ASCII escapes): \u0000 or any surrogate escape (valid pairs too: checked after).
_ESCAPED = re.compile(r"\\u(?:0000|d[89a-f])", re.IGNORECASE)
PROBLEM = "U+0000 or unpaired surrogate characters replaced by U+FFFD: PostgreSQL cannot store them"


def _clean(value: Any, chars: re.Pattern[str] = _UNSTORABLE) -> tuple[Any, bool]:
    """`value` with every one of `chars` replaced by U+FFFD; whether anything was."""
    if isinstance(value, str):
        cleaned = chars.sub("\ufffd", value)
        return cleaned, cleaned != value
    if isinstance(value, (list, tuple)):
        pairs = [_clean(v, chars) for v in value]
        return [v for v, _ in pairs], any(c for _, c in pairs)
    if isinstance(value, dict):
        out, changed = {}, False
        for key, item in value.items():
            new_key, key_changed = _clean(key, chars)
            out[new_key], item_changed = _clean(item, chars)
            changed = changed or key_changed or item_changed
        return out, changed
    return value, False


def without_surrogates(value: Any) -> Any:
    """A channel-layer message as Redis's msgpack can encode it (it refuses unpaired surrogates,
    which the in-memory layer passes along)."""
    return _clean(value, _SURROGATES)[0]


def needs_cleaning() -> bool:
    return connection.vendor == "postgresql"


def storable(value: Any) -> Any:
    """A fact (server info, instructions, catalogue, a reason) as the database can store it."""
    return _clean(value)[0] if needs_cleaning() else value


def storable_row(row: Mapping[str, Any], text: str) -> tuple[Mapping[str, Any], str]:
    """A transcript row and its JSON text (`jsontext.dumps(row)`: NUL and lone surrogates come out
    escaped), cleaned if they must be, with a problem on the event saying so. Cheap for the usual
    row: a search of the text."""
    if not _ESCAPED.search(text):
        return row, text
    cleaned, changed = _clean(row)
    if not changed:
        return row, text
    cleaned["problems"] = [*(cleaned.get("problems") or []), PROBLEM]
    return cleaned, jsontext.dumps(cleaned)
