"""render(values) -> what a browser submits -> parse == values, over many schemas."""

from __future__ import annotations

import json

import pytest

from playground.schema import canon, validate_arguments
from playground.schemaforms import parse_form, render_form

from .formsim import flat, submitted

TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["label"],
        }
    },
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/node"}},
}

CASES: list[tuple[str, dict, object]] = [
    ("string", {"type": "object", "properties": {"s": {"type": "string"}}}, {"s": "hello"}),
    ("number", {"type": "object", "properties": {"x": {"type": "number"}}}, {"x": 2.5}),
    ("number-int", {"type": "object", "properties": {"x": {"type": "number"}}}, {"x": -3}),
    ("number-exp", {"type": "object", "properties": {"x": {"type": "number"}}}, {"x": 1.5e-7}),
    ("integer", {"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": -7}),
    ("big-integer", {"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 2**70}),
    ("bool-true", {"type": "object", "properties": {"b": {"type": "boolean"}}}, {"b": True}),
    ("bool-false", {"type": "object", "properties": {"b": {"type": "boolean"}}}, {"b": False}),
    ("enum", {"type": "object", "properties": {"e": {"type": "string", "enum": ["a", "b"]}}}, {"e": "b"}),
    *[
        (
            f"enum-mixed-{i}",
            {"type": "object", "properties": {"e": {"enum": [1, "1", None, True, {"a": 1}, ""]}}},
            {"e": v},
        )
        for i, v in enumerate([1, "1", None, True, {"a": 1}, ""])
    ],
    (
        "titled-enum",
        {
            "type": "object",
            "properties": {
                "c": {
                    "type": "string",
                    "oneOf": [{"const": "#F00", "title": "Red"}, {"const": "#0F0", "title": "Green"}],
                }
            },
        },
        {"c": "#0F0"},
    ),
    ("const", {"type": "object", "properties": {"k": {"const": "fixed"}}, "required": ["k"]}, {"k": "fixed"}),
    (
        "formats",
        {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "uri": {"type": "string", "format": "uri"},
                "date": {"type": "string", "format": "date"},
                "dt": {"type": "string", "format": "date-time"},
                "t": {"type": "string", "format": "time"},
            },
        },
        {
            "email": "a@example.com",
            "uri": "https://example.com/x?y=1",
            "date": "2024-02-29",
            "dt": "2024-01-02T03:04:05Z",
            "t": "10:20:30",
        },
    ),
    (
        "date-time-odd",
        {"type": "object", "properties": {"dt": {"type": "string", "format": "date-time"}}},
        {"dt": "not a date"},
    ),
    (
        "nested",
        {
            "type": "object",
            "properties": {
                "address": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
                    "required": ["city"],
                }
            },
        },
        {"address": {"city": "Paris", "zip": 75001}},
    ),
    (
        "array-scalars",
        {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
        {"tags": ["a", "", "c"]},
    ),
    (
        "array-numbers",
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}}}},
        {"xs": [1, 2.5, -0.125]},
    ),
    (
        "array-objects",
        {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer"},
                            "gift": {"type": "boolean"},
                        },
                    },
                }
            },
        },
        {"items": [{"sku": "A", "qty": 1, "gift": False}, {"sku": "B", "qty": 2, "gift": True}]},
    ),
    (
        "array-of-arrays",
        {
            "type": "object",
            "properties": {"m": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}},
        },
        {"m": [[1, 2], [], [3]]},
    ),
    (
        "array-of-bools",
        {"type": "object", "properties": {"f": {"type": "array", "items": {"type": "boolean"}}}},
        {"f": [False, True, False]},
    ),
    (
        "multiselect",
        {
            "type": "object",
            "properties": {"colors": {"type": "array", "items": {"type": "string", "enum": ["Red", "Green", "Blue"]}}},
        },
        {"colors": ["Red", "Blue"]},
    ),
    (
        "titled-multiselect",
        {
            "type": "object",
            "properties": {
                "colors": {
                    "type": "array",
                    "items": {"anyOf": [{"const": "#F00", "title": "Red"}, {"const": "#00F", "title": "Blue"}]},
                }
            },
        },
        {"colors": ["#00F"]},
    ),
    (
        "oneof-discriminated",
        {
            "type": "object",
            "properties": {
                "shape": {
                    "oneOf": [
                        {
                            "type": "object",
                            "title": "Circle",
                            "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                            "required": ["kind"],
                        },
                        {
                            "type": "object",
                            "title": "Square",
                            "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                            "required": ["kind"],
                        },
                    ]
                }
            },
        },
        {"shape": {"kind": "square", "side": 2}},
    ),
    (
        "anyof-scalars-str",
        {"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
        {"v": "x"},
    ),
    (
        "anyof-scalars-int",
        {"type": "object", "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
        {"v": 5},
    ),
    ("type-list", {"type": "object", "properties": {"v": {"type": ["string", "integer"]}}}, {"v": 5}),
    ("nullable-null", {"type": "object", "properties": {"n": {"type": ["string", "null"]}}}, {"n": None}),
    ("nullable-value", {"type": "object", "properties": {"n": {"type": ["string", "null"]}}}, {"n": "x"}),
    (
        "anyof-null",
        {"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}},
        {"n": None},
    ),
    (
        "anyof-null-value",
        {"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}},
        {"n": 4},
    ),
    (
        "nullable-object",
        {"type": "object", "properties": {"o": {"type": ["object", "null"], "properties": {"a": {"type": "string"}}}}},
        {"o": None},
    ),
    (
        "refs-2020",
        {
            "type": "object",
            "$defs": {"pt": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
            "properties": {"a": {"$ref": "#/$defs/pt"}, "b": {"$ref": "#/$defs/pt"}},
        },
        {"a": {"x": 1, "y": 2}, "b": {"x": 3.5, "y": 0}},
    ),
    (
        "refs-draft07",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "definitions": {"name": {"type": "string"}},
            "properties": {"first": {"$ref": "#/definitions/name"}},
        },
        {"first": "Ada"},
    ),
    (
        "recursive-tree",
        TREE,
        {"root": {"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}, {"label": "d"}]}},
    ),
    (
        "json-free-object",
        {"type": "object", "properties": {"meta": {"type": "object", "additionalProperties": True}}},
        {"meta": {"k": [1, {"x": None}], "s": "<b>"}},
    ),
    (
        "json-tuple",
        {
            "type": "object",
            "properties": {"t": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}},
        },
        {"t": [1, "a"]},
    ),
    ("json-any", {"type": "object", "properties": {"any": {}}}, {"any": [1, "two", None]}),
    ("array-any-items", {"type": "object", "properties": {"xs": {"type": "array"}}}, {"xs": [{"a": 1}, 2]}),
    (
        "odd-names",
        {
            "type": "object",
            "properties": {
                "a.b": {"type": "string"},
                "c d": {"type": "integer"},
                "é~%": {"type": "boolean"},
                "": {"type": "string"},
                "<script>": {"type": "string"},
                "0": {"type": "string"},
            },
        },
        {"a.b": "x", "c d": 1, "é~%": True, "": "e", "<script>": '"><img src=x onerror=alert(1)>', "0": "zero"},
    ),
    (
        "root-oneof",
        {
            "type": "object",
            "oneOf": [
                {"properties": {"id": {"type": "string"}}, "required": ["id"]},
                {"properties": {"name": {"type": "string"}}, "required": ["name"]},
            ],
        },
        {"name": "x"},
    ),
    (
        "allof",
        {
            "type": "object",
            "allOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer"}}},
            ],
        },
        {"a": "x", "b": 2},
    ),
    (
        "required-empty-string",
        {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]},
        {"s": ""},
    ),
    ("unicode-multiline", {"type": "object", "properties": {"s": {"type": "string"}}}, {"s": 'héllo 🌍 "q" <&>'}),
]


def same(a: object, b: object) -> bool:
    """JSON equality that tells True from 1 and "1" from 1."""
    return canon(a) == canon(b) and json.dumps(a, sort_keys=True, default=str).count("true") == json.dumps(
        b, sort_keys=True, default=str
    ).count("true")


@pytest.mark.parametrize("schema,values", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_round_trip(schema, values):
    html = render_form(schema, values=values)
    data = submitted(html)
    parsed, errors = parse_form(schema, data)
    assert errors == []
    assert same(parsed, values), (parsed, values)
    # The same data as a flat dict (as htmx/websocket JSON sends it) parses the same way.
    parsed_flat, errors_flat = parse_form(schema, flat(data))
    assert errors_flat == [] and same(parsed_flat, values)
    assert validate_arguments(schema, parsed) == []


@pytest.mark.parametrize("prefix", ["args", "elicit-1"])
def test_round_trip_with_other_prefix(prefix):
    schema, values = CASES[[c[0] for c in CASES].index("array-objects")][1:]
    html = render_form(schema, prefix=prefix, values=values)
    assert f'name="{prefix}.items.1.qty"' in html
    parsed, errors = parse_form(schema, submitted(html), prefix=prefix)
    assert errors == [] and parsed == values


def test_defaults_are_prefilled_and_parsed_back():
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "default": "hi"},
            "n": {"type": "integer", "default": 3},
            "b": {"type": "boolean", "default": True},
            "e": {"enum": ["x", "y"], "default": "y"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["p", "q"]},
            "colors": {"type": "array", "items": {"enum": ["R", "G"]}, "default": ["G"]},
            "o": {"type": "object", "properties": {"z": {"type": "number", "default": 0.5}}},
        },
    }
    parsed, errors = parse_form(schema, submitted(render_form(schema)))
    assert errors == []
    assert parsed == {"s": "hi", "n": 3, "b": True, "e": "y", "tags": ["p", "q"], "colors": ["G"], "o": {"z": 0.5}}


def test_untouched_form_gives_only_rendered_booleans():
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "n": {"type": "number"},
            "flag": {"type": "boolean"},
            "o": {"type": "object", "properties": {"x": {"type": "string"}, "k": {"const": 1}}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "e": {"enum": ["a"]},
        },
    }
    parsed, errors = parse_form(schema, submitted(render_form(schema)))
    assert errors == [] and parsed == {"flag": False}
