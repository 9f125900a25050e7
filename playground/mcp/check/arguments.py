"""Arguments for a tool call, made from its `inputSchema`: a small valid instance, and one that
breaks the schema on purpose (the invalid-params check).

Built on playground.schema's field tree (the one the tool forms use: `$ref`s, `allOf`, choices, its
bounds against hostile and recursive schemas), then checked with the same validator: what is
sent is known to be valid (or invalid) by the schema, not guessed.
"""

from __future__ import annotations

import math
from typing import Any

from playground.budget import ARGUMENTS, Budget, OverBudget
from playground.mcp import jsontext
from playground.schema import MISSING, Field, PatternNotChecked, build_fields, regex_search, validate_arguments

# Tried in turn against a `pattern` the first guess does not match (in RE2: linear time).
PATTERN_TRIES = (
    "0",
    "1",
    "a",
    "A",
    "abc",
    "ABC",
    "a1",
    "test",
    "x-y",
    "x_y",
    "2025-01-01",
    "user@example.com",
    "https://example.com/",
    "00000000-0000-4000-8000-000000000000",
)
MAX_ITEMS = 5  # array items made to meet a minItems
MAX_STRING = 1000  # characters made to meet a minLength

# Sample strings for formats (JSON Schema 2020-12 format vocabulary), valid by the format checker.
FORMATS = {
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri-reference": "https://example.com/",
    "url": "https://example.com/",
    "date": "2025-01-01",
    "date-time": "2025-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "duration": "P1D",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "json-pointer": "/a",
    "regex": "a",
    "relative-json-pointer": "0",
    "uri-template": "https://example.com/{id}",
}


def example(schema: Any) -> tuple[Any, list[str]]:
    """A small instance of `schema` and what the validator says of it ([] when it is valid)."""
    if schema is None:
        return {}, ["the tool has no inputSchema (required)"]
    if not isinstance(schema, dict):
        return {}, [f"the inputSchema is {type(schema).__name__}, not an object"]
    root = build_fields(schema)
    if root.over_budget:
        return {}, [f"no arguments could be made: {root.json_fallback}"]
    try:
        value = _value(root, ARGUMENTS.budget())
    except OverBudget as exc:  # twelve nested arrays of minItems 5 ask for 5^12 values
        return {}, [f"no arguments could be made: the instance is {exc.reason}"]
    if value is MISSING:
        value = {}
    problems = [f"{e['pointer'] or '/'}: {e['message']}" for e in validate_arguments(schema, value)]
    return value, problems


def broken(schema: Any, valid: Any) -> tuple[Any, str] | None:
    """`valid` with one property given a value of the wrong type (or a required one left out),
    checked invalid by the schema; None when no such instance can be made."""
    if not isinstance(schema, dict) or not isinstance(valid, dict):
        return None
    root = build_fields(schema)
    if root.kind != "object":
        return None
    for child in root.children:
        wrong = _wrong_type(child)
        if wrong is not MISSING and child.key is not None:
            candidate = {**valid, child.key: wrong}
            if validate_arguments(schema, candidate):
                return candidate, f"{child.key!r} given {type(wrong).__name__} {wrong!r}"
    for child in root.children:
        if child.required and child.key in valid:
            candidate = {k: v for k, v in valid.items() if k != child.key}
            if validate_arguments(schema, candidate):
                return candidate, f"required {child.key!r} left out"
    return None


def _wrong_type(f: Field) -> Any:
    if f.kind in ("string", "enum", "const"):
        return 12345
    if f.kind in ("number", "integer"):
        return "not a number"
    if f.kind == "boolean":
        return "not a boolean"
    if f.kind in ("object", "array", "multiselect"):
        return "not a structure"
    return MISSING


def _value(f: Field, budget: Budget) -> Any:
    """A value for one field: its default, an example, a constant or the first choice, else by type."""
    budget.spend()
    schema = f.schema if isinstance(f.schema, dict) else {}
    if f.default is not MISSING:
        return _kept(f.default, budget)
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return _kept(examples[0], budget)
    if f.kind == "const":
        return f.const
    if f.kind == "enum":
        return f.options[0].value if f.options else MISSING
    if f.kind == "choice":
        return _value(f.branches[0].field, budget) if f.branches else MISSING
    if f.kind == "object":
        out = {}
        for child in f.children:
            if child.required:
                value = _value(child, budget)
                out[child.key] = None if value is MISSING else value
        return out
    if f.kind in ("array", "multiselect"):
        return _array(f, schema, budget)
    if f.kind == "string":
        text = _string(schema)
        budget.emit(len(text))
        return text
    if f.kind in ("number", "integer"):
        return _number(schema, f.kind == "integer")
    if f.kind == "boolean":
        return False
    if f.kind == "null":
        return None
    return _json(schema)


def _kept(value: Any, budget: Budget) -> Any:
    """A value of the schema's, as it is: written out each time the instance holds it."""
    budget.emit(len(jsontext.dumps(value)) if isinstance(value, (dict, list, str)) else 8)
    return value


def _json(schema: dict[str, Any]) -> Any:
    """A subtree the form shows as JSON (any value, free-form keys, a tuple...): its kind's empty value."""
    kind = schema.get("type")
    if kind == "object" or "properties" in schema or "additionalProperties" in schema:
        return {}
    if kind == "array":
        return []
    if kind == "string":
        return _string(schema)
    return None


def _array(f: Field, schema: dict[str, Any], budget: Budget) -> list[Any]:
    low = schema.get("minItems")
    count = min(low, MAX_ITEMS) if isinstance(low, int) and not isinstance(low, bool) and low > 0 else 0
    if f.kind == "multiselect":
        return [o.value for o in f.options[:count]]
    if count == 0 or f.item is None:
        return []
    items = []
    for i in range(count):
        value = _value(f.item, budget)
        if f.item.kind in ("string",) and schema.get("uniqueItems") is True and isinstance(value, str):
            value = f"{value}{i}"
        elif (
            f.item.kind in ("integer", "number")
            and schema.get("uniqueItems") is True
            and isinstance(value, (int, float))
        ):
            value = value + i
        items.append(None if value is MISSING else value)
    return items


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    text = FORMATS.get(fmt, "example") if isinstance(fmt, str) else "example"
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and not isinstance(low, bool) and len(text) < low:
        text = text + "x" * (min(low, MAX_STRING) - len(text))
    if isinstance(high, int) and not isinstance(high, bool) and high >= 0 and len(text) > high:
        text = text[:high]
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and not _matches(pattern, text):
        text = next((c for c in PATTERN_TRIES if _matches(pattern, c)), text)
    return text


def _matches(pattern: str, text: str) -> bool:
    try:
        return regex_search(pattern, text) is not None
    except PatternNotChecked:
        return False


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    def num(key: str) -> float | None:
        v = schema.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None

    low, high = num("minimum"), num("maximum")
    xlow, xhigh = num("exclusiveMinimum"), num("exclusiveMaximum")
    step = num("multipleOf")
    value = 1.0
    if low is not None:
        value = max(value, low) if high is None or high >= 1 else low
    if xlow is not None and value <= xlow:
        value = xlow + (step or 1.0)
    if high is not None and value > high:
        value = high
    if xhigh is not None and value >= xhigh:
        value = xhigh - (step or 1.0)
    if step and step > 0:
        # A hostile step (5e-324, or 1e308 over 1e-10) makes the quotient infinite: no multiple is
        # made then, and the validator says the value misses it.
        steps = value / step
        if math.isfinite(steps) and math.isfinite(multiple := math.ceil(steps) * step):
            value = multiple
    if integer:
        value = float(math.ceil(value))
    return int(value) if value.is_integer() else value
