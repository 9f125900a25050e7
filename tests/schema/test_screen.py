"""The compiled screen before jsonschema (`_validation`): wherever it is asked, the errors are the
ones jsonschema alone gives, over schemas of every keyword it screens and values near and far
from them; what it would get wrong is never asked of it."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground.schema import _validation
from playground.schema import validate_arguments as bounded
from playground.schema._validation import validate_arguments

D7 = "http://json-schema.org/draft-07/schema#"
D4 = "http://json-schema.org/draft-04/schema#"

# Schemas the screen is asked about, each with values that pass and fail it, and near misses.
SCREENED: list[tuple[Any, list[Any]]] = [
    (
        {"type": "object", "properties": {"x": {"type": "string", "title": "X"}}, "required": ["x"]},
        [{"x": "hello"}, {"x": 1}, {}, {"x": "é😀", "y": None}, [], "x"],
    ),
    (
        {
            "type": "object",
            "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 3}},
            "additionalProperties": False,
        },
        [{"s": "😀😀"}, {"s": "😀"}, {"s": "abcd"}, {"t": 1}, {}],
    ),
    (
        {"type": "array", "items": {"type": "integer", "minimum": -3, "exclusiveMaximum": 10}, "uniqueItems": True},
        [[1, 2], [1, 1.0], [1, True], [10], [-3, 9.0], [2**70], [1.5], [], [2**63, 2**64 - 1]],
    ),
    (
        {"enum": [1, "a", None, [1], {"a": 1}, 1.5, 9007199254740993]},
        [1, 1.0, True, "a", None, [1.0], {"a": 1.0}, 1.5, 9007199254740992.0, 9007199254740993, "b"],
    ),
    ({"const": {"a": [1, 2]}}, [{"a": [1, 2.0]}, {"a": [2, 1]}, {"a": [1, 2], "b": 0}]),
    (
        {"anyOf": [{"type": "string"}, {"type": "number", "maximum": 5}], "not": {"const": "no"}},
        ["x", "no", 5, 5.000001, 2**64, None, 1e308],
    ),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2, 3.0, 2.5, "s"]),
    (
        {
            "if": {"properties": {"k": {"const": "a"}}, "required": ["k"]},
            "then": {"required": ["a"]},
            "else": {"required": ["b"]},
        },
        [{"k": "a", "a": 1}, {"k": "a"}, {"b": 1}, {}, 3],
    ),
    (
        {
            "type": "object",
            "propertyNames": {"maxLength": 3},
            "minProperties": 1,
            "maxProperties": 3,
            "dependentRequired": {"a": ["b"]},
            "dependentSchemas": {"c": {"required": ["d"]}},
        },
        [{"a": 1, "b": 2}, {"a": 1}, {"long": 1}, {}, {"c": 1}, {"c": 1, "d": 2}, {"w": 1, "x": 2, "y": 3, "z": 4}],
    ),
    (
        {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False, "contains": {"type": "string"}},
        [[1, "a"], [1], ["a"], [1, "a", 2], [1, 2]],
    ),
    (
        {"minContains": 2, "maxContains": 3, "contains": {"type": "integer"}, "minItems": 1, "maxItems": 5},
        [[1, 2], [1], [1, 2, 3, 4], ["a", 1, 2.0], []],
    ),
    (
        {"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": False},
        [{"a": 1, "b": 2}, {"c": 3}, {}],
    ),
    (
        {"$schema": D7, "items": [{"type": "integer"}], "additionalItems": False, "dependencies": {"a": ["b"]}},
        [[1], [1, 2], {"a": 1}, {"a": 1, "b": 1}],
    ),
    ({"$schema": D4, "maximum": 5, "exclusiveMaximum": True}, [5, 4.999, 5.0, 6]),
    ({"type": ["integer", "null"], "minimum": 0.5}, [None, 1, 0, 1.0, 0.5, "1"]),
    ({"type": "number", "maximum": 1}, [1, 1.0000001, 2**80, -(2**80)]),
]

# Schemas it is not asked about: jsonschema decides alone, as before it.
UNSCREENED = [
    {"type": "string", "format": "email"},
    {"type": "string", "pattern": "^a+$"},
    {"patternProperties": {"^x": {"type": "integer"}}},
    {"type": "number", "multipleOf": 0.01},
    {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
    {"$dynamicAnchor": "t", "items": {"$dynamicRef": "#t"}},
    {"$schema": "http://json-schema.org/draft-03/schema#", "type": "integer"},
]


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        schema = {"items": schema}
    return schema


def alone(schema: Any, instance: Any, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What jsonschema alone says (the screen never passes anything)."""
    with monkeypatch.context() as m:
        m.setattr(_validation, "_passes", lambda compiled, value: False)
        return validate_arguments(schema, instance)


def screen_of(schema: Any) -> Any:
    return _validation._checked_validator(schema)[1]


@pytest.mark.parametrize(("schema", "values"), SCREENED, ids=lambda v: str(v)[:40])
def test_every_verdict_is_jsonschemas(schema, values, monkeypatch):
    assert screen_of(schema) is not None
    passed = 0
    for value in values:
        assert validate_arguments(schema, value) == alone(schema, value, monkeypatch), value
        passed += _validation._passes(screen_of(schema), value)
    assert 0 < passed < len(values)  # (each schema's values both pass the screen and go past it)


@pytest.mark.parametrize("schema", [*UNSCREENED, _deep(_validation.SCREEN_DEPTH + 1)], ids=lambda v: str(v)[:40])
def test_what_it_could_get_wrong_is_not_asked(schema):
    assert screen_of(schema) is None


def test_a_schema_within_the_depth_is_screened():
    assert screen_of(_deep(_validation.SCREEN_DEPTH - 2)) is not None


def test_what_jsonschema_alone_would_refuse_it_never_passes(monkeypatch):
    """The cases that made the exclusions: each passes jsonschema_rs and fails jsonschema."""
    import jsonschema_rs

    for schema, value in [
        ({"type": "number", "multipleOf": 0.01}, 0.07),
        ({"maximum": 1}, math.inf),
        ({"not": {"type": "number"}}, math.nan),
        ({"type": "array", "items": {"maximum": 1}}, [1, -math.inf, math.inf]),
    ]:
        assert jsonschema_rs.validator_for(schema).is_valid(value)
        assert alone(schema, value, monkeypatch)
        assert validate_arguments(schema, value) == alone(schema, value, monkeypatch)


def test_a_valid_value_costs_no_jsonschema(monkeypatch):
    """The screen is what answers a valid call (the relay's arguments and result): jsonschema
    is reached only for a value it does not pass."""
    schema = SCREENED[0][0]
    validator = _validation._checked_validator(schema)[0]
    reached = []
    monkeypatch.setattr(type(validator), "iter_errors", lambda self, value: reached.append(value) or iter(()))
    assert bounded(schema, {"x": "hello"}) == []
    assert reached == []
    bounded(schema, {"x": 1})
    assert reached == [{"x": 1}]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**65), max_value=2**65)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from("abcdkstwxyz"), inner, max_size=5),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(min_value=0, max_value=len(SCREENED) - 1), value=JSON)
def test_any_json_gets_jsonschemas_verdict(index, value):
    schema = SCREENED[index][0]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_validation, "_passes", lambda compiled, v: False)
        reference = validate_arguments(schema, value)
    assert validate_arguments(schema, value) == reference
