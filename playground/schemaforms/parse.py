"""Submitted form data + schema -> the arguments object, with correct JSON types.

It walks the same Field tree the renderer drew, so names line up by construction. The rules
(mirrored by `collect()` in static/schemaforms.js; keep them in step):

- a checked `<name>.~null` box gives null;
- strings: "" is kept for a required field, omitted for an optional one; a datetime-local value
  becomes RFC 3339 in UTC (":00" seconds and "Z" added), a time gets its seconds;
- numbers/integers: the JSON/HTML number grammar; "" is omitted; anything else is an error;
- booleans: checked is true; unchecked is false only if `<name>.~present` shows it was rendered;
- enums: the option token (or the raw JSON) maps back to the typed value; "" is omitted;
- const: always the constant;
- objects: children by property; an optional object nobody touched is omitted;
- arrays: items by index (`<name>.<i>...`), in index order; empty: [] if required, else omitted;
- choices: the branch from `<name>.~branch`;
- JSON fallbacks: the textarea parsed as strict JSON; a parse error is reported for that field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from playground.schema import MISSING, Field, build_fields

NUMBER_RE = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
LOCAL_DATETIME_RE = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2})(:[0-9]{2}(\.[0-9]+)?)?$")
SHORT_TIME_RE = re.compile(r"^[0-9]{2}:[0-9]{2}$")
INDEX_RE = re.compile(r"^[0-9]{1,9}$")
TRUE_WORDS = {"true", "on", "1", "yes"}


class FormData:
    """A read view over a QueryDict or a flat {name: value | [values]} dict: the values named
    `prefix` or under it (the form's other values, such as a tab's `headers`, are never read)."""

    def __init__(self, data: Any, prefix: str):
        self.values: dict[str, list[str]] = {}
        if data is None:
            return
        if hasattr(data, "lists"):
            items: Iterable = data.lists()
        elif isinstance(data, dict):
            items = data.items()
        else:
            items = []
        under = prefix + "."
        for key, raw in items:
            if not isinstance(key, str) or not (key == prefix or key.startswith(under)):
                continue
            raw_list = raw if isinstance(raw, (list, tuple)) else [raw]
            texts = [_as_text(v) for v in raw_list]
            self.values[key] = [t for t in texts if t is not None]

    def get(self, name: str) -> str | None:
        values = self.values.get(name)
        return values[-1] if values else None

    def getlist(self, name: str) -> list[str]:
        return self.values.get(name, [])

    def has(self, name: str) -> bool:
        return bool(self.values.get(name))

    def indices(self, base: str) -> list[int]:
        """The array indices submitted under `base` (`base.3`, `base.3.qty`, ...), in order."""
        start = base + "."
        found = set()
        for key in self.values:
            if key.startswith(start):
                head = key[len(start) :].split(".", 1)[0]
                if INDEX_RE.fullmatch(head):
                    found.add(int(head))
        return sorted(found)


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


# A submission's size, in fields and characters: beyond that it is refused as a whole, with a
# clear error, before any parsing (the page's forms are far smaller; the socket takes 1 MiB).
MAX_FORM_FIELDS = 2000
MAX_FORM_CHARS = 512 * 1024


def form_too_large(data: Any, prefix: str) -> str | None:
    """Why a submission is too large to parse, or None."""
    if not isinstance(data, dict):
        return None
    mark = prefix + "."
    fields = [k for k in data if isinstance(k, str) and k.startswith(mark)]
    if len(fields) > MAX_FORM_FIELDS:
        return f"the form has {len(fields)} fields; at most {MAX_FORM_FIELDS} are accepted"
    size = sum(len(k) + len(str(data[k])) for k in fields)
    if size > MAX_FORM_CHARS:
        return f"the form holds {size} characters; at most {MAX_FORM_CHARS} are accepted (use JSON mode for more)"
    return None


def parse_form(schema: Any, data: Any, *, prefix: str = "args") -> tuple[Any, list[str]]:
    """(arguments, errors). Errors are "<field name>: <message>" strings for display."""
    too_large = form_too_large(data, prefix)
    if too_large is not None:
        return {}, [too_large]
    root = build_fields(schema)  # (kept per schema: the renderer's tree; parsing reads it, never changes it)
    errors: list[str] = []
    value, _ = _parse(root, prefix, FormData(data, prefix), errors)
    if value is MISSING:
        value = {} if root.kind == "object" else None
    return value, errors


def parse_number(text: str, integer: bool) -> int | float:
    """The number grammar shared with the JS side; raises ValueError with a readable message."""
    text = text.strip()
    if not NUMBER_RE.fullmatch(text):
        raise ValueError(f"not a number: {text!r}")
    result = float(text)  # first, so that "1e999999" is refused before any exact arithmetic
    if not math.isfinite(result):
        raise ValueError(f"number out of range: {text!r}")
    number = Decimal(text)
    if number == number.to_integral_value():
        return int(number)
    if integer:
        raise ValueError(f"not an integer: {text!r}")
    return result


def normalize_string(text: str, fmt: str) -> str:
    """Browser date/time inputs -> RFC 3339 (UTC for date-time, as the form says)."""
    if fmt == "date-time":
        match = LOCAL_DATETIME_RE.fullmatch(text)
        if match:
            return match.group(1) + (match.group(2) or ":00") + "Z"
    elif fmt == "time" and SHORT_TIME_RE.fullmatch(text):
        return text + ":00"
    return text


def _strict_json(text: str) -> Any:
    def reject(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=reject)


def _parse(f: Field, name: str, data: FormData, errors: list[str]) -> tuple[Any, bool]:
    """(value or MISSING, touched). `touched` means the user gave something beyond the blanks."""
    if f.nullable and data.get(name + ".~null") in TRUE_WORDS:
        return None, True
    kind = f.kind
    if kind == "string":
        text = data.get(name)
        if text is None:
            return MISSING, False
        if text == "":
            return ("" if f.required else MISSING), False
        return normalize_string(text, f.format), True
    if kind in ("number", "integer"):
        text = data.get(name)
        if text is None or text.strip() == "":
            return MISSING, False
        try:
            return parse_number(text, kind == "integer"), True
        except (ValueError, InvalidOperation) as exc:
            errors.append(f"{name}: {exc}")
            return MISSING, False
    if kind == "boolean":
        text = data.get(name)
        if text is not None:
            checked = text.strip().lower() in TRUE_WORDS
            return checked, checked
        return (False, False) if data.has(name + ".~present") else (MISSING, False)
    if kind == "null":
        return (None, True) if data.has(name) else (MISSING, False)
    if kind == "const":
        return f.const, False
    if kind == "enum":
        token = data.get(name)
        if token is None or token == "":
            return MISSING, False
        option = f.option_for_token(token)
        if option is None:
            errors.append(f"{name}: {token!r} is not one of the choices")
            return MISSING, False
        return option.value, True
    if kind == "multiselect":
        tokens = data.getlist(name)
        picked = []
        for token in tokens:
            option = f.option_for_token(token)
            if option is None:
                errors.append(f"{name}: {token!r} is not one of the choices")
            elif option not in picked:
                picked.append(option)
        if picked:
            order = {id(o): i for i, o in enumerate(f.options)}
            return [o.value for o in sorted(picked, key=lambda o: order[id(o)])], True
        return ([] if f.required else MISSING), False
    if kind == "object":
        out: dict[str, Any] = {}
        touched = False
        for child in f.children:
            value, child_touched = _parse(child, f"{name}.{child.seg}", data, errors)
            if value is not MISSING:
                out[child.key] = value  # type: ignore[index]
            touched = touched or child_touched
        if not touched and not f.required:
            return MISSING, False
        return out, touched
    if kind == "array":
        assert f.item is not None
        items = []
        for index in data.indices(name):
            value, _ = _parse(f.item, f"{name}.{index}", data, errors)
            if value is MISSING:
                errors.append(f"{name}.{index}: this item is empty")
                continue
            items.append(value)
        if items:
            return items, True
        return ([] if f.required else MISSING), False
    if kind == "choice":
        token = data.get(name + ".~branch")
        if token is not None and INDEX_RE.fullmatch(token) and int(token) < len(f.branches):
            return _parse(f.branches[int(token)].field, name, data, errors)
        if token is not None:
            errors.append(f"{name}: unknown variant {token!r}")
        for branch in f.branches:  # no selector sent: the first branch that got anything
            trial: list[str] = []
            value, touched = _parse(branch.field, name, data, trial)
            if touched:
                errors.extend(trial)
                return value, touched
        return MISSING, False
    if kind == "json":
        text = data.get(name)
        if text is None or text.strip() == "":
            return MISSING, False
        try:
            return _strict_json(text), True
        except ValueError as exc:
            errors.append(f"{name}: invalid JSON: {exc}")
            return MISSING, False
    errors.append(f"{name}: cannot read a {kind!r} field")
    return MISSING, False
