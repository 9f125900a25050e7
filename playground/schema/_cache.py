"""What is derived from a schema once, kept per schema: a page calls the same tool again and
again, and checking a schema (about a millisecond) or building its field tree (tens of µs)
each time sat on the path of every call."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

T = TypeVar("T")


def schema_key(schema: Any) -> str | None:
    """The schema's canonical JSON (sorted keys); None if it cannot be encoded."""
    try:
        return orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode()
    except (orjson.JSONEncodeError, TypeError):
        try:
            return json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError):
            return None


class SchemaCache:
    """At most `size` values keyed by schema (the oldest goes first)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.values: dict[str, Any] = {}

    def get(self, schema: Any, make: Callable[[], T]) -> T:
        key = schema_key(schema)
        if key is None:
            return make()
        if key in self.values:
            return self.values[key]
        value = make()
        if len(self.values) >= self.size:
            self.values.pop(next(iter(self.values)))
        self.values[key] = value
        return value
