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
    """At most `size` values keyed by schema (the oldest goes first). The same schema object asked
    again is found by identity, without its key (the canonical JSON: a sorted encoding of the whole
    schema on every call of a tool); schemas are read here, never changed in place (a server's
    lists are replaced when fetched again, not edited)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.values: dict[str, Any] = {}
        self._seen: dict[int, tuple[Any, Any]] = {}  # id(schema) -> (the schema, kept alive; its value)

    def get(self, schema: Any, make: Callable[[], T]) -> T:
        seen = self._seen.get(id(schema))
        if seen is not None and seen[0] is schema:
            return seen[1]
        key = schema_key(schema)
        if key is None:
            return make()
        if key in self.values:
            value = self.values[key]
        else:
            value = make()
            _keep(self.values, key, value, self.size)
        _keep(self._seen, id(schema), (schema, value), self.size)
        return value


def _keep(cache: dict[Any, Any], key: Any, value: Any, size: int) -> None:
    if key not in cache and len(cache) >= size:
        cache.pop(next(iter(cache)))
    cache[key] = value
