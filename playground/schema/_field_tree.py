"""JSON Schema -> a tree of Field dataclasses.

The tree depends on the schema only (never on values), so the renderer and the parser walk the
very same structure: what was rendered is exactly what gets parsed back. Names in the HTML are
built from `Field.seg` (property names percent-encoded so that `.` and `~` stay separators and
reserved markers). Anything this module cannot turn into inputs becomes a `json` field (a JSON
textarea) for that subtree alone, with the reason in `json_fallback`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from typing import Any, TypeGuard

from playground import jsonpointer
from playground.budget import FORM, Budget, Limits, OverBudget

from ._cache import SchemaCache

# Bounds against hostile or recursive schemas: nesting depth of fields, how often one $ref may
# appear on the current path, and the total number of fields in one form.
MAX_DEPTH = 12
MAX_REF_REPEAT = 3
MAX_NODES = 2000
MAX_OPTIONS = 5000
MAX_TEXT = 2000
PATTERN_SHOWN = 300

SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
STRING_FORMATS = {
    "email": "email",
    "idn-email": "email",
    "uri": "url",
    "iri": "url",
    "date": "date",
    "date-time": "datetime-local",
    "time": "time",
}
SCALAR_KINDS = {"string", "number", "integer", "boolean", "null"}


class _Missing:
    """Sentinel for "no value" (distinct from JSON null)."""

    _instance = None

    def __new__(cls):  # a singleton, so `is MISSING` works after copies
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


def encode_segment(key: str | int) -> str:
    """One path segment for an HTML name: keeps [A-Za-z0-9_-], percent-encodes the rest."""
    if isinstance(key, int):
        return str(key)
    if key == "":
        return "~e"
    out = []
    for ch in key:
        if ch in SAFE_CHARS:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def canon(value: Any) -> str:
    """Canonical JSON text of a value: integral floats as ints, sorted keys (for comparisons)."""
    return json.dumps(_normalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _normalize(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {str(k): _normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalize(v) for v in value]
    return value


def json_type(value: Any) -> str:
    """The JSON Schema type name of a Python value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "unknown"


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    """Server text for display: strings only, capped (escaping happens in templates)."""
    if not isinstance(value, str):
        return ""
    return value if len(value) <= limit else value[:limit] + "…"


@dataclass
class Option:
    """One enum choice: the JSON value, its label, and the token used as the HTML value."""

    value: Any
    label: str
    token: str
    json: str  # canonical JSON of value (the JS side reads it from data-sf-json)


@dataclass
class Branch:
    """One oneOf/anyOf alternative, with the label of the branch selector."""

    label: str
    field: Field
    schema: Any
    discriminator_value: Any = MISSING


@dataclass
class Field:
    """A node of the form: one input (or group of inputs) for one place in the arguments."""

    kind: str  # string|number|integer|boolean|null|enum|const|object|array|multiselect|choice|json
    path: tuple  # schema path of keys; None stands for "any array index"
    key: str | None  # property name (None for the root and for array items)
    label: str  # accessible name: the exact property name (or the array's name for items)
    required: bool = False
    nullable: bool = False
    title: str = ""
    description: str = ""
    default: Any = MISSING
    input_type: str = "text"
    format: str = ""
    pattern: str = ""  # shown, not given to the browser (see `string`)
    attrs: dict[str, str] = dc_field(default_factory=dict)
    options: list[Option] = dc_field(default_factory=list)
    const: Any = MISSING
    children: list[Field] = dc_field(default_factory=list)
    branches: list[Branch] = dc_field(default_factory=list)
    discriminator: str | None = None
    item: Field | None = None
    is_item: bool = False
    json_fallback: str = ""
    schema: Any = None
    over_budget: bool = False  # the whole form is this one JSON field: the schema took its budget

    @property
    def seg(self) -> str:
        """This field's segment in HTML names ("" for the root and items: the caller adds it)."""
        return encode_segment(self.key) if self.key is not None else ""

    def option_for_token(self, token: str) -> Option | None:
        for option in self.options:
            if option.token == token:
                return option
        for option in self.options:  # a client may send the raw JSON instead of the token
            if option.json == token:
                return option
        return None


_TREES = SchemaCache(size=64)


def build_fields(schema: Any, *, label: str = "arguments", limits: Limits = FORM) -> Field:
    """The Field tree of a schema. Never raises: odd subtrees become JSON fallbacks, and a schema
    whose tree takes more than `limits` (a doubling `allOf`/`$ref` chain asks for 2^depth merges)
    becomes one JSON field saying so. Kept per schema: the renderer and the parser read one tree
    (they must agree on it even where the clock cut it), and a page asks for the same form again."""
    tree = _TREES.get({limits.name: schema}, lambda: _build(schema, "arguments", limits))
    return tree if label == tree.label else replace(tree, label=label)


def _build(schema: Any, label: str, limits: Limits) -> Field:
    builder = _Builder(schema, limits.budget())
    try:
        return builder.build(schema, path=(), key=None, label=label, required=True, depth=0, refs=())
    except RecursionError:
        return json_root(label, "schema too deeply nested")
    except OverBudget as exc:
        return json_root(label, f"the schema is {exc.reason}", over_budget=True)


def json_root(label: str, reason: str, *, over_budget: bool = False) -> Field:
    """A whole form as one JSON field, saying why."""
    return Field(
        kind="json", path=(), key=None, label=label, required=True, json_fallback=reason, over_budget=over_budget
    )


class _Builder:
    def __init__(self, root: Any, budget: Budget):
        self.root = root
        self.nodes = 0
        self.budget = budget

    # -- references -------------------------------------------------------------------------
    def resolve_pointer(self, ref: str) -> Any:
        """A local reference (`#`, `#/json/pointer`, or `#anchor`) within the root schema."""
        if not ref.startswith("#"):
            raise LookupError(f"non-local $ref {ref!r}")
        fragment = ref[1:]
        from urllib.parse import unquote

        fragment = unquote(fragment)
        if fragment == "":
            return self.root
        if not fragment.startswith("/"):
            found = self._find_anchor(self.root, fragment, 0)
            if found is None:
                raise LookupError(f"unknown anchor {ref!r}")
            return found
        node = self.root
        for part in fragment[1:].split("/"):
            part = jsonpointer.unescape(part)
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isascii() and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise LookupError(f"unresolvable $ref {ref!r}")
        return node

    def _find_anchor(self, node: Any, anchor: str, depth: int) -> Any:
        if depth > 50:
            return None
        self.budget.spend()
        if isinstance(node, dict):
            if node.get("$anchor") == anchor or node.get("$id") == "#" + anchor:
                return node
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            return None
        for child in children:
            found = self._find_anchor(child, anchor, depth + 1)
            if found is not None:
                return found
        return None

    def deref(self, schema: Any, refs: tuple) -> tuple[Any, tuple, str]:
        """Follow `$ref`s, merging sibling keywords over the target. Returns (schema, refs, error)."""
        hops = 0
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if refs.count(ref) >= MAX_REF_REPEAT:
                return schema, refs, f"recursive $ref {ref} beyond the depth limit"
            hops += 1
            if hops > 32:
                return schema, refs, "too many chained $refs"
            try:
                target = self.resolve_pointer(ref)
            except LookupError as exc:
                return schema, refs, str(exc)
            refs = refs + (ref,)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if target is True:
                target = {}
            if not isinstance(target, dict):
                return schema, refs, f"$ref {ref} does not point to a schema object"
            self.budget.spend(1 + len(target) + len(siblings))
            schema = {**target, **siblings}
        return schema, refs, ""

    def merge_all_of(self, schema: dict, refs: tuple) -> tuple[dict, str]:
        """Fold `allOf` into one schema: properties and required are merged, the rest kept."""
        parts = schema.get("allOf")
        if not isinstance(parts, list):
            return schema, ""
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        self.budget.spend(1 + len(schema))
        for part in parts:
            self.budget.spend()
            part, _, error = self.deref(part, refs)
            if error:
                return schema, error
            if part is True or part == {}:
                continue
            if not isinstance(part, dict):
                return schema, "allOf with a non-object subschema"
            part, error = self.merge_all_of(part, refs)
            if error:
                return schema, error
            for k, v in part.items():
                if k == "properties" and isinstance(v, dict):
                    props = dict(merged.get("properties") or {})
                    self.budget.spend(1 + len(props) + len(v))
                    for name, sub in v.items():
                        props[name] = {"allOf": [props[name], sub]} if name in props else sub
                    merged["properties"] = props
                elif k == "required" and isinstance(v, list):
                    self.budget.spend(1 + len(v) + len(merged.get("required") or ()))
                    merged["required"] = list(dict.fromkeys([*(merged.get("required") or []), *v]))
                elif k == "type" and "type" in merged and merged["type"] != v:
                    a = merged["type"] if isinstance(merged["type"], list) else [merged["type"]]
                    b = v if isinstance(v, list) else [v]
                    both = [t for t in a if t in b or (t == "integer" and "number" in b)]
                    both += [t for t in b if t == "integer" and "number" in a and t not in both]
                    if not both:
                        return schema, "allOf with incompatible types"
                    merged["type"] = both if len(both) > 1 else both[0]
                elif k not in merged:
                    merged[k] = v
        return merged, ""

    # -- the tree ---------------------------------------------------------------------------
    def fallback(self, base: Field, reason: str) -> Field:
        base.kind = "json"
        base.json_fallback = reason
        base.children, base.branches, base.options, base.item = [], [], [], None
        return base

    def build(
        self,
        schema: Any,
        *,
        path: tuple,
        key: str | None,
        label: str,
        required: bool,
        depth: int,
        refs: tuple,
        is_item: bool = False,
    ) -> Field:
        self.nodes += 1
        self.budget.spend()
        f = Field(kind="json", path=path, key=key, label=label, required=required, is_item=is_item, schema=schema)
        if schema is True:
            return self.fallback(f, "any JSON value")
        if schema is False:
            return self.fallback(f, "no value is allowed here (schema false)")
        if not isinstance(schema, dict):
            return self.fallback(f, "the schema is not an object")
        schema, refs, error = self.deref(schema, refs)
        if error:
            return self.fallback(f, error)
        schema, error = self.merge_all_of(schema, refs)
        if error:
            return self.fallback(f, error)
        f.schema = schema
        f.title = _text(schema.get("title"), 200)
        f.description = _text(schema.get("description"))
        if "default" in schema:
            f.default = schema["default"]
        if depth > MAX_DEPTH:
            return self.fallback(f, "nested beyond the depth limit")
        if self.nodes > MAX_NODES:
            return self.fallback(f, "the form is too large")

        if "const" in schema:
            f.kind = "const"
            f.const = schema["const"]
            return f
        if "enum" in schema:
            return self.enum(f, schema.get("enum"), schema)

        types = schema.get("type")
        if isinstance(types, str):
            types = [types]
        elif isinstance(types, list):
            types = [t for t in types if isinstance(t, str)]
            if not types:
                types = None
        elif types is not None:
            return self.fallback(f, "unreadable type")
        if types is not None and "null" in types and len(types) > 1:
            f.nullable = True
            types = [t for t in types if t != "null"]

        alternatives = None
        for word in ("oneOf", "anyOf"):
            if isinstance(schema.get(word), list) and schema[word]:
                alternatives = schema[word]
                break
        if alternatives is not None:
            return self.choice(f, schema, alternatives, types, depth, refs)

        if types is not None and len(types) > 1:
            base = {k: v for k, v in schema.items() if k != "type"}
            return self.choice(f, base, [{"type": t} for t in types], None, depth, refs, typed=True)

        kind = types[0] if types else _infer_type(schema)
        if kind is None:
            return self.fallback(f, "any JSON value")
        if kind == "object":
            return self.object(f, schema, depth, refs)
        if kind == "array":
            return self.array(f, schema, depth, refs)
        if kind == "string":
            return self.string(f, schema)
        if kind in ("number", "integer"):
            return self.number(f, schema, kind)
        if kind == "boolean":
            f.kind = "boolean"
            return f
        if kind == "null":
            f.kind = "null"
            return f
        return self.fallback(f, f"unknown type {kind!r}")

    def enum(self, f: Field, values: Any, schema: dict, labels: list[str] | None = None) -> Field:
        if not isinstance(values, list) or not values:
            return self.fallback(f, "empty enum")
        if len(values) > MAX_OPTIONS:
            return self.fallback(f, "enum too large")
        names = schema.get("enumNames")
        if labels is None and isinstance(names, list) and len(names) == len(values):
            labels = [n if isinstance(n, str) else canon(n) for n in names]
        seen: dict[str, int] = {}
        values_out, labels_out = [], []
        self.budget.spend(3 * len(values))  # canonical JSON of each: ~5 µs
        for i, value in enumerate(values):
            c = canon(value)
            self.budget.spend(len(c) // 256)
            if c in seen:
                continue
            seen[c] = i
            values_out.append(value)
            text = labels[i] if labels and labels[i] else (value if isinstance(value, str) else c)
            labels_out.append(_text(text, 500))
        tokens = [v if isinstance(v, str) else canon(v) for v in values_out]
        if len(set(tokens)) != len(tokens) or "" in tokens:
            # "1" next to 1, or an empty string: JSON tokens (and labels) tell them apart.
            tokens = [canon(v) for v in values_out]
            if not labels:
                labels_out = [_text(t, 500) for t in tokens]
        f.kind = "enum"
        f.options = [
            Option(value=v, label=label, token=t, json=canon(v)) for v, label, t in zip(values_out, labels_out, tokens)
        ]
        return f

    def choice(
        self,
        f: Field,
        schema: dict,
        alternatives: list,
        types: list | None,
        depth: int,
        refs: tuple,
        typed: bool = False,
    ) -> Field:
        base = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf", "title", "description", "default")}
        if types is not None and not typed:
            base["type"] = types if len(types) > 1 else types[0]
        resolved = []
        for alt in alternatives:
            alt, alt_refs, error = self.deref(alt, refs)
            if error:
                resolved.append((alt, alt_refs, error))
                continue
            if (
                isinstance(alt, dict)
                and (alt.get("type") == "null" or alt.get("type") == ["null"])
                and not any(k in alt for k in ("const", "enum", "properties", "items"))
            ):
                f.nullable = True
                continue
            resolved.append((alt, alt_refs, ""))
        # A choice between constants is a titled enum (MCP's titled single/multi-select).
        if resolved and all(isinstance(a, dict) and not e and "const" in a for a, _, e in resolved):
            labels = [_text(a.get("title"), 500) or "" for a, _, _ in resolved]
            return self.enum(f, [a["const"] for a, _, _ in resolved], {}, labels)
        if not resolved:
            return self.build_into(f, base, depth, refs)
        if len(resolved) == 1:
            alt, alt_refs, error = resolved[0]
            if error:
                return self.fallback(f, error)
            return self.build_into(f, _merge(base, alt), depth, alt_refs)
        f.kind = "choice"
        disc = _discriminator([a for a, _, e in resolved if not e], base)
        if disc and len([1 for _, _, e in resolved if e]) == 0:
            f.discriminator = disc
        branches: list[Branch] = []
        for i, (alt, alt_refs, error) in enumerate(resolved):
            merged = _merge(base, alt) if not error and isinstance(alt, dict) else alt
            sub = self.build(
                merged if not error else alt,
                path=f.path,
                key=f.key,
                label=f.label,
                required=f.required,
                depth=depth + 1,
                refs=alt_refs,
                is_item=f.is_item,
            )
            if error:
                sub = self.fallback(sub, error)
            if sub.nullable:  # hoisted: one "null" checkbox for the whole choice
                sub.nullable = False
                f.nullable = True
            dvalue = MISSING
            if f.discriminator and isinstance(merged, dict):
                dvalue = _const_of((merged.get("properties") or {}).get(f.discriminator))
            label = _branch_label(alt, sub, dvalue, i)
            if sub.kind == "choice":  # flatten nested choices: one selector per name
                for inner in sub.branches:
                    branches.append(Branch(label=f"{label} / {inner.label}", field=inner.field, schema=inner.schema))
                continue
            branches.append(Branch(label=label, field=sub, schema=merged, discriminator_value=dvalue))
        f.branches = branches
        return f

    def build_into(self, f: Field, schema: Any, depth: int, refs: tuple) -> Field:
        """Rebuild f from another schema, keeping its place, label and nullability."""
        sub = self.build(
            schema,
            path=f.path,
            key=f.key,
            label=f.label,
            required=f.required,
            depth=depth,
            refs=refs,
            is_item=f.is_item,
        )
        sub.nullable = sub.nullable or f.nullable
        sub.title = sub.title or f.title
        sub.description = sub.description or f.description
        if sub.default is MISSING:
            sub.default = f.default
        return sub

    def object(self, f: Field, schema: dict, depth: int, refs: tuple) -> Field:
        props = schema.get("properties")
        if props is not None and not isinstance(props, dict):
            return self.fallback(f, "unreadable properties")
        extra = schema.get("additionalProperties", True)
        if not props:
            free_form = bool(schema.get("patternProperties")) or (
                extra is not False and extra != {} and extra is not True
            )
            if free_form or (f.path and extra is not False):
                return self.fallback(f, "an object with free-form keys")
        f.kind = "object"
        listed = schema.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        for name, sub in (props or {}).items():
            child = self.build(
                sub, path=f.path + (name,), key=name, label=name, required=name in required, depth=depth + 1, refs=refs
            )
            f.children.append(child)
        return f

    def array(self, f: Field, schema: dict, depth: int, refs: tuple) -> Field:
        if "prefixItems" in schema or isinstance(schema.get("items"), list):
            return self.fallback(f, "a tuple (positional items)")
        items = schema.get("items", True)
        item = self.build(
            items,
            path=f.path + (None,),
            key=None,
            label=f.label,
            required=True,
            depth=depth + 1,
            refs=refs,
            is_item=True,
        )
        for word, attr in (("minItems", "data-sf-min"), ("maxItems", "data-sf-max")):
            if isinstance(schema.get(word), int) and not isinstance(schema.get(word), bool):
                f.attrs[attr] = str(schema[word])
        if item.kind == "enum" and not item.nullable:
            f.kind = "multiselect"
            f.options = item.options
            return f
        f.kind = "array"
        f.item = item
        return f

    def string(self, f: Field, schema: dict) -> Field:
        f.kind = "string"
        fmt = schema.get("format")
        if isinstance(fmt, str):
            f.format = fmt
            f.input_type = STRING_FORMATS.get(fmt, "text")
        if f.input_type in ("datetime-local", "time"):
            f.attrs["step"] = "1"
        for word, attr in (("minLength", "minlength"), ("maxLength", "maxlength")):
            value = schema.get(word)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                f.attrs[attr] = str(value)
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            # Said next to the input, checked when sent (in RE2): never an HTML `pattern`, which
            # the person's browser would run with its backtracking engine as they type
            # (`^(a+)+$` hangs the tab).
            f.pattern = pattern[:PATTERN_SHOWN]
        return f

    def number(self, f: Field, schema: dict, kind: str) -> Field:
        f.kind = kind
        f.input_type = "number"
        for word, attr in (("minimum", "min"), ("maximum", "max")):
            value = schema.get(word)
            if _is_number(value):
                f.attrs[attr] = _num_text(value)
        step = schema.get("multipleOf")
        if _is_number(step) and step > 0:
            f.attrs["step"] = _num_text(step)
        else:
            f.attrs["step"] = "1" if kind == "integer" else "any"
        return f


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _num_text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else json.dumps(_normalize(value))


def _infer_type(schema: dict) -> str | None:
    if any(k in schema for k in ("properties", "additionalProperties", "patternProperties", "required")):
        return "object"
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        return "array"
    if any(k in schema for k in ("minLength", "maxLength", "pattern", "format")):
        return "string"
    if any(k in schema for k in ("minimum", "maximum", "multipleOf", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return None


def _merge(base: dict, alt: Any) -> Any:
    """A branch of a choice, with the keywords of the schema around it (properties merged)."""
    if not isinstance(alt, dict):
        return alt
    if not base:
        return alt
    merged = {**base, **alt}
    if isinstance(base.get("properties"), dict) and isinstance(alt.get("properties"), dict):
        merged["properties"] = {**base["properties"], **alt["properties"]}
    if isinstance(base.get("required"), list) and isinstance(alt.get("required"), list):
        merged["required"] = list(dict.fromkeys([*base["required"], *alt["required"]]))
    return merged


def _const_of(schema: Any) -> Any:
    if isinstance(schema, dict):
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and len(schema["enum"]) == 1:
            return schema["enum"][0]
    return MISSING


def _discriminator(alternatives: list, base: dict) -> str | None:
    """A property that holds a distinct constant in every object branch, if there is one."""
    props = []
    for alt in alternatives:
        merged = _merge(base, alt)
        if not isinstance(merged, dict) or not isinstance(merged.get("properties"), dict):
            return None
        props.append(merged["properties"])
    if not props:
        return None
    for name in props[0]:
        values = [_const_of(p.get(name)) for p in props]
        if all(v is not MISSING for v in values) and len({canon(v) for v in values}) == len(values):
            return name
    return None


def _branch_label(alt: Any, field: Field, dvalue: Any, index: int) -> str:
    if isinstance(alt, dict) and isinstance(alt.get("title"), str) and alt["title"].strip():
        return _text(alt["title"], 200)
    if dvalue is not MISSING:
        return dvalue if isinstance(dvalue, str) else canon(dvalue)
    if field.kind == "object" and field.children:
        names = ", ".join(c.key or "" for c in field.children[:3])
        more = ", …" if len(field.children) > 3 else ""
        return f"Option {index + 1} ({names}{more})"
    if field.kind in SCALAR_KINDS or field.kind in ("array", "json", "enum"):
        return {"json": "JSON", "enum": "choice"}.get(field.kind, field.kind)
    return f"Option {index + 1}"
