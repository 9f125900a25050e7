"""Validate arguments against a tool's schema with `jsonschema`.

The dialect comes from `$schema` (2020-12 when absent or unknown). Remote `$ref`s are never
fetched (jsonschema would, by default): only the bundled meta-schemas are available. Nothing here
raises on a weird schema; an invalid schema is reported as one error.

jsonschema is pure Python: ~40-100 µs to pass a tool's one-line arguments, on the path of every
call (the form's arguments, then the result's `structuredContent`). A compiled validator of the
same schema (`jsonschema_rs`, same draft) says "valid" first (~3 µs); anything else goes to
jsonschema, whose errors are the report. It screens only what the two give the same verdicts
on (`_screenable`, `_passes`): no `format` (asserted here, with what jsonschema has installed),
no `pattern` (RE2 here), no `multipleOf` (jsonschema's float arithmetic says 0.07 is no
multiple of 0.01), no reference, a schema nested at most SCREEN_DEPTH (jsonschema's recursion
stops long before jsonschema_rs's), no NaN or Infinity in the value. tests/schema/test_screen.py
holds the two to the same verdicts.
"""

from __future__ import annotations

import math
from typing import Any

import jsonschema
import jsonschema_rs
from jsonschema import validators
from jsonschema_specifications import REGISTRY as SPECIFICATIONS

from playground import jsonpointer

from ._cache import SchemaCache, schema_key
from ._linear_regex import PatternNotChecked, install

MAX_ERRORS = 100
# What the compiled screen is not asked about (see above): jsonschema decides alone.
UNSCREENED = ('"format"', '"pattern', '"multipleOf"', '"$ref"', '"$dynamicRef"', '"$recursiveRef"')
SCREEN_DEPTH = 32
install()


def validator_class(schema: Any) -> type:
    """The validator class for the schema's dialect (`$schema`), 2020-12 by default."""
    if isinstance(schema, dict) and isinstance(schema.get("$schema"), str):
        try:
            return validators.validator_for(schema, default=validators.Draft202012Validator)
        except Exception:
            return validators.Draft202012Validator
    return validators.Draft202012Validator


_VALIDATORS = SchemaCache()


def _checked_validator(schema: Any) -> tuple[Any, Any]:
    """(a validator for `schema`, or [error] when the schema itself is invalid; its compiled
    screen, or None), both cached."""
    return _VALIDATORS.get(schema, lambda: _check(schema))


def _check(schema: Any) -> tuple[Any, Any]:
    cls: Any = validator_class(schema)
    try:
        cls.check_schema(schema)
        validator = cls(schema, registry=SPECIFICATIONS, format_checker=cls.FORMAT_CHECKER)
    except jsonschema.SchemaError as exc:
        where = jsonpointer.join(exc.path)
        at = f" (at {where})" if where else ""
        return [_error([], f"The schema itself is invalid{at}: {exc.message}", "schema")], None
    except Exception as exc:
        return [_error([], f"The schema could not be checked: {exc}", "schema")], None
    return validator, _screen(cls, schema)


def _screenable(schema: Any) -> bool:
    key = schema_key(schema)
    return key is not None and not any(word in key for word in UNSCREENED) and not _beyond(schema, SCREEN_DEPTH)


def _screen(cls: Any, schema: Any) -> Any:
    """The compiled twin of jsonschema's validator of `schema`, or None (see above)."""
    compiled = getattr(jsonschema_rs, cls.__name__, None)  # (no Draft 3)
    if compiled is None or not _screenable(schema):
        return None
    try:
        return compiled(schema, validate_formats=False, offline=True)
    except Exception:
        return None


def _segment(part: Any) -> str:
    from ._field_tree import encode_segment

    return encode_segment(part if isinstance(part, (int, str)) else str(part))


def validate_arguments(schema: Any, arguments: Any) -> list[dict]:
    """Errors as [{path, pointer, message, keyword}]; [] when the arguments are valid.

    `path` uses the same dotted, encoded segments as the form's field names without the prefix
    (`address.city`, `items.1.qty`; "" for the whole object), so errors land next to their inputs.
    For a missing required property, the path is the missing property's own.
    """
    if not isinstance(schema, (dict, bool)):
        return [_error([], "The schema is not a JSON object, so nothing can be validated.", "schema")]
    checked, compiled = _checked_validator(schema)
    if isinstance(checked, list):
        return [dict(e) for e in checked]
    if compiled is not None and _passes(compiled, arguments):
        return []
    try:
        validator = checked
        found = []
        for error in validator.iter_errors(arguments):
            found.append(error)
            if len(found) >= MAX_ERRORS:
                break
    except PatternNotChecked as exc:
        return [_error([], f"The value was {exc}.", "not-checked")]
    except Exception as exc:
        return [_error([], f"The arguments could not be validated against this schema: {exc}", "schema")]
    out = []
    for error in found:
        parts = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = _missing_property(error)
            if missing is not None:
                parts.append(missing)
        out.append(_error(parts, error.message, str(error.validator)))
    out.sort(key=lambda e: (e["pointer"], e["message"]))
    return out


def _passes(compiled: Any, instance: Any) -> bool:
    if _beyond(instance):  # (NaN passes `maximum` there, and fails it here)
        return False
    try:
        return bool(compiled.is_valid(instance))
    except Exception:  # (a value it cannot take: jsonschema decides)
        return False


def _beyond(value: Any, depth: float = math.inf) -> bool:
    """Whether `value` nests deeper than `depth` or holds NaN or Infinity (json.loads reads them).
    Iterative: no recursion limit applies. (Here, not in playground.mcp.jsontext: the client core
    depends on this package, not the other way.)"""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, (dict, list)):
            if level > depth:
                return True
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def _missing_property(error: jsonschema.ValidationError) -> str | None:
    required = error.validator_value if isinstance(error.validator_value, list) else []
    for name in required:
        if isinstance(name, str) and name not in error.instance and error.message == f"{name!r} is a required property":
            return name
    return None


def _error(parts: list, message: str, keyword: str) -> dict:
    return {
        "path": ".".join(_segment(p) for p in parts),
        "pointer": jsonpointer.join(parts),
        "message": message,
        "keyword": keyword,
    }


def matches(root: Any, subschema: Any, instance: Any) -> bool:
    """Whether `instance` is valid against `subschema` (a part of `root`, whose $refs it may use)."""
    try:
        validator = validator_class(root)(root, registry=SPECIFICATIONS)
        return bool(validator.evolve(schema=subschema).is_valid(instance))
    except Exception:
        return False
