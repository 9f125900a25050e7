"""JSON Pointer (RFC 6901) segments, written once: `~` is `~0` and `/` is `~1` in a segment.

Django-free and dependency-free, below both the client core (a replay's diff paths, the schema
lint's pointers, the server check's) and the JSON Schema work in `playground.schema` (validation
errors, `$ref` fragments), which each import it: the client core imports `playground.schema`, so the
helper cannot live in either.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def escape(segment: Any) -> str:
    """One segment (a key, or an array index) as a pointer writes it."""
    return str(segment).replace("~", "~0").replace("/", "~1")


def unescape(segment: str) -> str:
    """One segment as a pointer writes it, back to the key (`~1` first: `~01` is `~1`, not `/`)."""
    return segment.replace("~1", "/").replace("~0", "~")


def join(parts: Iterable[Any]) -> str:
    """The pointer to a path of keys and indexes ("" for the whole document)."""
    return "".join("/" + escape(part) for part in parts)
