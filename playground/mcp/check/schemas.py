"""Is a tool's `inputSchema`/`outputSchema` a valid JSON Schema of type object?

2025-11-25, Basic › JSON Schema Usage: a schema without `$schema` is JSON Schema 2020-12;
"Schemas MUST be valid according to their declared or default dialect". The tool definition
itself (schema.ts) requires `type: "object"` for both. Checked against the dialect's
meta-schema with jsonschema (playground.schema picks the dialect the tool forms use).
"""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema import validators

from playground import jsonpointer
from playground.schema import validator_class

from .result import FAIL, WARN, Status, clip


def problem(schema: Any, what: str) -> tuple[Status, str] | None:
    """What is wrong with one schema (None: nothing)."""
    if not isinstance(schema, dict):
        return FAIL, f"{what} is {type(schema).__name__}, not an object"
    if schema.get("type") != "object":
        return FAIL, f'{what} has type {clip(repr(schema.get("type")), 40)}; MCP requires type "object"'
    dialect = schema.get("$schema")
    cls: Any = validator_class(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = jsonpointer.join(exc.path)
        return (
            FAIL,
            f"{what} is not a valid JSON Schema ({_dialect(cls)}){' at ' + where if where else ''}: {clip(exc.message, 160)}",
        )
    except Exception as exc:
        return FAIL, f"{what} could not be checked: {clip(str(exc), 160)}"
    if isinstance(dialect, str) and validators.validator_for(schema, default=None) is None:
        return WARN, f"{what} declares an unknown dialect {clip(dialect, 80)!r}; checked as JSON Schema 2020-12"
    return None


def _dialect(cls: type) -> str:
    return {
        "Draft202012Validator": "2020-12",
        "Draft201909Validator": "2019-09",
        "Draft7Validator": "draft-07",
        "Draft6Validator": "draft-06",
        "Draft4Validator": "draft-04",
        "Draft3Validator": "draft-03",
    }.get(cls.__name__, cls.__name__)
