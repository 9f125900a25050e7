"""Hostile structures a server (or a person's rules) may send, as Hypothesis strategies: work
that grows faster than their size unless a budget stops it.

Each strategy draws a value and says whether it is known to explode (`Drawn.explodes`): a
consumer given one of those must stop at its budget and say so; any other must either finish or
say so, and write no more than its budget allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

LEAVES = [
    {"type": "string"},
    {"type": "integer", "minimum": 0},
    {"type": "boolean"},
    {"type": "object", "properties": {"x": {"type": "string"}}},
]


@dataclass(repr=False)
class Drawn:
    what: str
    schema: Any
    explodes: bool

    def __repr__(self) -> str:  # (Hypothesis prints it for a failing example: the schema is large)
        return f"Drawn({self.what!r}, explodes={self.explodes})"


def enum_of(n: int, width: int = 12) -> dict[str, Any]:
    return {"type": "string", "enum": [f"v{i:0{width}d}" for i in range(n)]}


@st.composite
def doubling(draw: st.DrawFn) -> Drawn:
    """`$defs` d0 … dN, each naming the next twice (through allOf, anyOf, oneOf, two properties or
    prefixItems): 2^N paths through a few hundred bytes."""
    depth = draw(st.integers(18, 40))
    how = draw(st.sampled_from(["allOf", "anyOf", "oneOf", "properties", "items"]))
    leaf = draw(st.sampled_from([*LEAVES, enum_of(200)]))

    def node(i: int) -> dict[str, Any]:
        ref = {"$ref": f"#/$defs/d{i + 1}"}
        if how == "properties":
            return {"type": "object", "properties": {"a": ref, "b": dict(ref)}, "required": ["a", "b"]}
        if how == "items":
            return {
                "type": "array",
                "minItems": 2,
                "items": {"type": "object", "properties": {"a": ref, "b": dict(ref)}},
            }
        return {how: [ref, dict(ref)]}

    defs = {f"d{i}": node(i) for i in range(depth)}
    defs[f"d{depth}"] = leaf
    return Drawn(
        f"doubling {how} x{depth}",
        {"type": "object", "$defs": defs, "properties": {"root": {"$ref": "#/$defs/d0"}}},
        True,
    )


@st.composite
def nested(draw: st.DrawFn) -> Drawn:
    """Deep nesting without references: properties, items, anyOf, or arrays of minItems 50."""
    depth = draw(st.integers(10, 400))
    how = draw(st.sampled_from(["properties", "items", "anyOf", "prefilled"]))
    schema: dict[str, Any] = draw(st.sampled_from(LEAVES))
    for _ in range(depth):
        if how == "properties":
            schema = {"type": "object", "properties": {"n": schema}, "required": ["n"]}
        elif how == "items":
            schema = {"type": "array", "items": schema}
        elif how == "anyOf":
            schema = {"anyOf": [schema, {"type": "null"}, {"type": "string"}]}
        else:
            schema = {"type": "array", "minItems": 50, "items": schema}
    explodes = how == "prefilled" and depth >= 4
    return Drawn(
        f"nested {how} x{depth}", {"type": "object", "properties": {"root": schema}, "required": ["root"]}, explodes
    )


@st.composite
def huge_enum(draw: st.DrawFn) -> Drawn:
    """An enum of up to 50,000 values, named by many properties."""
    n = draw(st.integers(1_000, 50_000))
    uses = draw(st.integers(1, 300))
    return Drawn(
        f"enum {n} x{uses}",
        {
            "type": "object",
            "$defs": {"e": enum_of(n)},
            "properties": {f"p{i}": {"$ref": "#/$defs/e"} for i in range(uses)},
        },
        n * uses >= 2_000_000,
    )


@st.composite
def long_strings(draw: st.DrawFn) -> Drawn:
    """Descriptions, titles, defaults and patterns of up to a megabyte each."""
    size = draw(st.integers(10_000, 1_000_000))
    text = "x" * size
    return Drawn(
        f"strings {size}",
        {
            "type": "object",
            "title": text,
            "description": text,
            "properties": {
                "s": {"type": "string", "description": text, "default": text, "pattern": "^x*$", "title": text}
            },
        },
        False,
    )


@st.composite
def cyclic(draw: st.DrawFn) -> Drawn:
    """References that reach themselves: `#`, a → b → a, a self-referencing array."""
    how = draw(st.sampled_from(["root", "pair", "self-array", "anchor"]))
    if how == "root":
        schema: dict[str, Any] = {"type": "object", "properties": {"again": {"$ref": "#"}, "x": {"type": "string"}}}
    elif how == "pair":
        schema = {
            "type": "object",
            "$defs": {
                "a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
                "b": {"allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]},
            },
            "properties": {"start": {"$ref": "#/$defs/a"}},
        }
    elif how == "self-array":
        schema = {
            "type": "object",
            "$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}},
            "properties": {"tree": {"$ref": "#/$defs/t"}},
        }
    else:
        schema = {
            "type": "object",
            "$defs": {"n": {"$anchor": "node", "anyOf": [{"$ref": "#node"}, {"$ref": "#node"}]}},
            "properties": {"n": {"$ref": "#node"}},
        }
    return Drawn(f"cyclic {how}", schema, False)


KEYWORDS = [
    "type",
    "properties",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
    "const",
    "required",
    "$ref",
    "minItems",
    "default",
    "description",
    "additionalProperties",
    "pattern",
    "not",
]
REFS = ["#", "#/$defs/a", "#/$defs/b", "#/properties", "#/nowhere", "http://example.com/x"]


def _anything() -> st.SearchStrategy[Any]:
    """Schema-shaped JSON: keywords with values of any shape (a server may send anything)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 60),
        st.text(max_size=8),
        st.sampled_from(["object", "array", "string", "integer", "null", *REFS]),
    )

    def grow(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.sampled_from(KEYWORDS + ["a", "b", "$defs"]), children, max_size=5),
        )

    return st.recursive(scalars, grow, max_leaves=60)


@st.composite
def anything(draw: st.DrawFn) -> Drawn:
    body = draw(_anything())
    defs = draw(st.dictionaries(st.sampled_from(["a", "b"]), _anything(), max_size=2))
    schema = (
        {"type": "object", "$defs": defs, "properties": {"v": body}}
        if not isinstance(body, dict) or draw(st.booleans())
        else {**body, "$defs": defs}
    )
    return Drawn("anything", schema, False)


SCHEMAS = st.one_of(doubling(), nested(), huge_enum(), long_strings(), cyclic(), anything())
