"""Gemini's `Schema` (an OpenAPI 3.0 subset) and the conversion of a tool's JSON Schema to it,
which says what it kept.

The conversion is the Google GenAI SDK's for MCP tools: keep the documented fields, drop the
rest; local `$ref`s inlined, `oneOf` to `anyOf`, `null` in a union to `nullable`, types in upper
case. It records the subschemas it converted, so the `gemini.*` rules (rules.py) look at exactly
what the rendering sends: a subschema under `not`, `additionalProperties`, `patternProperties`
or an unreferenced `$defs` entry is dropped with its parent's keyword, not reported on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playground.budget import MODEL_VIEW, MODEL_VIEW_TOOL, Budget, OverBudget

from .schema import MAX_DEPTH, MAX_NODES, pointer_get, ref_problem, types_of
from .tokens import compact

NODE_CHARS = 16  # what one converted subschema writes besides its kept values: braces, keys

# Gemini's `Schema` "represents a select subset of an OpenAPI 3.0 schema object"
# (https://ai.google.dev/api/caching#Schema): these fields, no others. `type` is an enum (STRING,
# NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL); `enum` is a list of strings; `anyOf` is its only
# combinator; there is no `$ref`.
GEMINI_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
GEMINI_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
    "null": "NULL",
}
# `format`: "for NUMBER type: float, double; for INTEGER type: int32, int64; for STRING type:
# enum, date-time".
GEMINI_FORMATS = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"float", "double"}),
    "INTEGER": frozenset({"int32", "int64"}),
}
# JSON Schema keywords the conversion translates rather than drops ($ref is inlined, oneOf becomes
# anyOf, a one-schema allOf is merged, const becomes a one-value enum, a type list becomes a type
# with `nullable` or an anyOf).
GEMINI_TRANSLATED = frozenset({"$ref", "$defs", "definitions", "oneOf", "allOf", "const"})
# Dropped without a finding: annotations that ask nothing of the model.
GEMINI_QUIET = frozenset({"$schema", "$id", "$comment"})


@dataclass
class Conversion:
    """A schema as Gemini's, and what the conversion did to get it."""

    schema: dict[str, Any]
    kept: set[int] = field(default_factory=set)  # id() of each subschema converted
    too_deep: set[int] = field(default_factory=set)  # id() of subschemas left empty: inlined past MAX_DEPTH
    exhausted: bool = False  # stopped at its limit: the rest left empty
    too_large: str = ""  # stopped at the output budget: why
    used: int = 0  # subschemas converted (an inlined one each time)

    @property
    def parameters(self) -> dict[str, Any] | None:
        """The tool's `parameters`; None for a tool without any ("For function with no
        parameters, this can be left unset", https://ai.google.dev/api/caching#FunctionDeclaration)."""
        out = self.schema
        if out.get("type", "OBJECT") == "OBJECT" and not out.get("properties") and "anyOf" not in out:
            return None
        return out


class _Converter:
    def __init__(self, root: Any, recursive: frozenset[str], limit: int, output: Budget) -> None:
        self.root = root
        self.recursive = recursive
        self.budget = limit
        self.output = output
        self.done = Conversion({})

    def convert(self, node: Any, depth: int = 0) -> dict[str, Any]:
        try:
            return self._convert(node, depth)
        except OverBudget as exc:
            self.done.exhausted = True
            self.done.too_large = exc.reason
            self.budget = 0
            return {}

    def _convert(self, node: Any, depth: int) -> dict[str, Any]:
        if not isinstance(node, dict):
            return {}
        if depth > MAX_DEPTH:
            self.done.too_deep.add(id(node))
            return {}
        if self.budget <= 0:
            self.done.exhausted = True
            return {}
        self.budget -= 1
        self.output.emit(NODE_CHARS + 3 * _indent(depth))
        self.done.used += 1
        self.done.kept.add(id(node))
        out: dict[str, Any] = {}
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref_problem(self.root, ref, self.recursive):
            out.update(self.convert(pointer_get(self.root, ref), depth + 1))
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            out.update(self.convert(all_of[0], depth + 1))
        variants: list[dict[str, Any]] = []
        kinds = types_of(node)
        if "null" in kinds:
            out["nullable"] = True
        named = [GEMINI_TYPES[k] for k in kinds if k != "null" and k in GEMINI_TYPES]
        if len(named) == 1:
            out["type"] = named[0]
        elif len(named) > 1:
            variants += [{"type": k} for k in named]
        for key, value in node.items():
            if key in ("type", "$ref", "allOf", "format"):
                continue
            if key == "properties" and isinstance(value, dict):
                out["properties"] = {str(k): self.convert(v, depth + 1) for k, v in value.items()}
            elif key == "items":
                if isinstance(value, dict):
                    out["items"] = self.convert(value, depth + 1)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                for v in value:
                    if isinstance(v, dict) and types_of(v) == ["null"]:
                        out["nullable"] = True  # Optional[X] is X, nullable
                    else:
                        variants.append(self.convert(v, depth + 1))
            elif key == "const":
                if isinstance(value, str):
                    out["enum"] = self.kept(depth, [value])
            elif key == "enum":
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    out["enum"] = self.kept(depth, value)
            elif key == "required":
                if isinstance(value, list):
                    out["required"] = self.kept(depth, [v for v in value if isinstance(v, str)])
            elif key in GEMINI_FIELDS:
                out[key] = self.kept(depth, value)
        if len(variants) == 1:
            out = {**variants[0], **out}
        elif variants:
            out["anyOf"] = variants
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in GEMINI_FORMATS.get(out.get("type", ""), ()):
            out["format"] = fmt
        return out

    def kept(self, depth: int, value: Any) -> Any:
        """A value the rendering keeps as it is: its size, as the page and the download write it
        (indented), taken from the output budget (the same enum, inlined through a `$ref` a
        thousand times, is written a thousand times)."""
        indent = _indent(depth)
        if isinstance(value, str):
            self.output.emit(len(value) + 2 + indent)
        elif isinstance(value, (dict, list)):
            text = compact(value)
            self.output.emit(len(text) + (text.count(",") + 2) * (indent + 2))
        else:
            self.output.emit(8 + indent)
        return value


def _indent(depth: int) -> int:
    """About the spaces before a line of a subschema `depth` levels down, as written with
    indent=2 (each level nests two objects: the subschema in `properties`, and its name)."""
    return 4 * depth + 6


def convert(schema: Any, recursive: frozenset[str], limit: int = MAX_NODES, output: Budget | None = None) -> Conversion:
    """`schema` as Gemini's Schema, converting at most `limit` subschemas (an inlined `$ref`
    counts each time) and writing at most a tool's part of what `output` has left (a Model view's
    budget, shared by a catalogue's tools; one of its own by default); `recursive`: the
    references not to inline (schema.recursive_refs)."""
    whole = output or MODEL_VIEW.budget()
    converter = _Converter(schema, recursive, limit, whole.part(MODEL_VIEW_TOOL))
    converter.done.schema = converter.convert(schema)
    return converter.done
