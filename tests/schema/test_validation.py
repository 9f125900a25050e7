"""validate_arguments: dialects, error paths, and never raising on a weird schema."""

from __future__ import annotations

import socket
import threading

import pytest

from playground.schema import validate_arguments

SCHEMA = {
    "type": "object",
    "required": ["name", "address"],
    "properties": {
        "name": {"type": "string", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "address": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"qty": {"type": "integer", "minimum": 1}}},
        },
    },
}


def test_valid_arguments_give_no_errors():
    assert validate_arguments(SCHEMA, {"name": "Al", "address": {"city": "X"}, "items": [{"qty": 1}]}) == []


def test_errors_carry_paths_like_the_form_names():
    errors = validate_arguments(
        SCHEMA, {"name": "A", "email": "nope", "address": {}, "items": [{"qty": 1}, {"qty": 0}]}
    )
    by_path = {e["path"]: e for e in errors}
    assert set(by_path) == {"name", "email", "address.city", "items.1.qty"}
    assert by_path["address.city"]["keyword"] == "required"
    assert by_path["address.city"]["pointer"] == "/address/city"
    assert by_path["items.1.qty"]["message"] == "0 is less than the minimum of 1"
    assert by_path["email"]["keyword"] == "format"


def test_missing_required_at_the_root_points_at_each_property():
    errors = validate_arguments(SCHEMA, {})
    assert [e["path"] for e in errors] == ["address", "name"]


def test_dialect_from_schema_keyword():
    tuple_schema = {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_schema}
    # draft-07: positional items -> the second item must be a string
    assert [e["path"] for e in validate_arguments(draft7, [1, 2])] == ["1"]
    # 2020-12 (default): an array-valued "items" is itself an invalid schema
    errors = validate_arguments(tuple_schema, [1, 2])
    assert len(errors) == 1 and errors[0]["keyword"] == "schema"
    prefix = {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}
    assert [e["path"] for e in validate_arguments(prefix, [1, 2])] == ["1"]


def test_invalid_schema_is_reported_not_raised():
    errors = validate_arguments({"type": "object", "properties": {"a": {"type": 12}}}, {"a": 1})
    assert len(errors) == 1 and errors[0]["keyword"] == "schema"
    assert errors[0]["message"].startswith("The schema itself is invalid")


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/nowhere"},
        {"properties": {"a": {"$ref": "other.json"}}},
        [],
        "x",
        None,
        {"$ref": "#"},
        {"pattern": "("},
        {"$schema": 5},
        {"$schema": "https://example.com/unknown"},
    ],
)
def test_weird_schemas_never_raise(schema):
    errors = validate_arguments(schema, {"a": "b"})
    assert isinstance(errors, list)
    assert all(set(e) == {"path", "pointer", "message", "keyword"} for e in errors)


def test_remote_refs_are_never_fetched():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        result: list = []
        worker = threading.Thread(
            target=lambda: result.append(validate_arguments({"$ref": f"http://127.0.0.1:{port}/schema.json"}, 1)),
            daemon=True,
        )
        worker.start()
        worker.join(timeout=30)
        assert not worker.is_alive(), "validation hung (it tried to fetch the remote $ref)"
        with pytest.raises(BlockingIOError):
            server.accept()
    assert result and result[0] and result[0][0]["keyword"] == "schema"


# A server's patterns run in linear time (RE2): with Python's backtracking engine each of these
# took minutes and stalled the whole process (the suite's timeout would end this test).
CATASTROPHIC = "^(a+)+$"
EVIL = "a" * 40 + "!"


@pytest.mark.parametrize(
    "schema, value, keyword",
    [
        ({"type": "string", "pattern": CATASTROPHIC}, EVIL, "pattern"),
        ({"type": "object", "patternProperties": {CATASTROPHIC: {"type": "integer"}}}, {EVIL: "x"}, None),
        (
            {"type": "object", "patternProperties": {CATASTROPHIC: {}}, "additionalProperties": False},
            {EVIL: 1},
            "additionalProperties",
        ),
        ({"type": "object", "propertyNames": {"pattern": CATASTROPHIC}}, {EVIL: 1}, "pattern"),
        (
            {"type": "object", "patternProperties": {CATASTROPHIC: {}}, "unevaluatedProperties": False},
            {EVIL: 1},
            "unevaluatedProperties",
        ),
    ],
)
def test_catastrophic_patterns_are_matched_in_linear_time(schema, value, keyword):
    errors = validate_arguments(schema, value)
    assert [e["keyword"] for e in errors] == ([keyword] if keyword else [])
    assert validate_arguments(schema, "a" * 40 if "pattern" in schema else {"a" * 40: 1}) == []  # and matches


def test_a_pattern_only_backtracking_can_run_is_reported_not_checked_never_valid():
    errors = validate_arguments({"type": "string", "pattern": r"^(a)\1$"}, "aa")
    assert [e["keyword"] for e in errors] == ["not-checked"]
    assert "needs a backtracking regex engine" in errors[0]["message"]
