"""parse_form: typed values, blanks, errors, flat dicts and QueryDicts alike."""

from __future__ import annotations

import pytest
from django.http import QueryDict

from playground.schemaforms import parse_form, render_form

from .formsim import submitted

S = {
    "type": "object",
    "required": ["req"],
    "properties": {
        "req": {"type": "string"},
        "opt": {"type": "string"},
        "n": {"type": "number"},
        "i": {"type": "integer"},
        "b": {"type": "boolean"},
        "e": {"enum": [1, 2]},
        "j": {"type": "object", "additionalProperties": True},
        "tags": {"type": "array", "items": {"type": "string"}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}}}},
        "when": {"type": "string", "format": "date-time"},
        "at": {"type": "string", "format": "time"},
    },
}


def test_types_from_a_flat_dict():
    data = {
        "args.req": "r",
        "args.n": "2.50",
        "args.i": "-3",
        "args.b": "true",
        "args.e": "2",
        "args.j": '{"k": [1, null]}',
        "args.tags.0": "x",
        "args.items.0.qty": "7",
        "args.when": "2024-05-06T07:08",
        "args.at": "09:10",
    }
    args, errors = parse_form(S, data)
    assert errors == []
    assert args == {
        "req": "r",
        "n": 2.5,
        "i": -3,
        "b": True,
        "e": 2,
        "j": {"k": [1, None]},
        "tags": ["x"],
        "items": [{"qty": 7}],
        "when": "2024-05-06T07:08:00Z",
        "at": "09:10:00",
    }
    assert type(args["i"]) is int and type(args["b"]) is bool


def test_query_dict_input():
    q = QueryDict("args.req=a&args.tags.1=second&args.tags.0=first&args.b=on", mutable=False)
    args, errors = parse_form(S, q)
    assert errors == [] and args == {"req": "a", "tags": ["first", "second"], "b": True}


def test_array_indices_in_index_order_not_submission_order():
    data = {"args.items.10.qty": "3", "args.items.2.qty": "2", "args.items.0.qty": "1", "args.req": ""}
    args, errors = parse_form(S, data)
    assert errors == [] and args == {"req": "", "items": [{"qty": 1}, {"qty": 2}, {"qty": 3}]}


def test_blanks_optional_omitted_required_empty_string_kept():
    args, errors = parse_form(S, {"args.req": "", "args.opt": "", "args.n": " ", "args.e": "", "args.j": ""})
    assert errors == [] and args == {"req": ""}


def test_unchecked_checkbox_is_false_only_when_rendered():
    assert parse_form(S, {"args.req": "x"})[0] == {"req": "x"}
    assert parse_form(S, {"args.req": "x", "args.b.~present": "1"})[0] == {"req": "x", "b": False}


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("n", "abc", "args.n: not a number: 'abc'"),
        ("n", "1e999", "args.n: number out of range: '1e999'"),
        ("n", "NaN", "args.n: not a number: 'NaN'"),
        ("n", "١٢", "args.n: not a number: '١٢'"),
        ("i", "2.5", "args.i: not an integer: '2.5'"),
        ("e", "3", "args.e: '3' is not one of the choices"),
    ],
)
def test_bad_values_are_reported(field, value, message):
    args, errors = parse_form(S, {"args.req": "x", f"args.{field}": value})
    assert errors == [message] and field not in args


def test_integer_accepts_integral_notation():
    assert parse_form(S, {"args.i": "4.0"})[0]["i"] == 4
    assert parse_form(S, {"args.i": "1e3"})[0]["i"] == 1000


def test_json_fallback_errors_are_clear():
    args, errors = parse_form(S, {"args.req": "x", "args.j": "{bad json"})
    assert "j" not in args
    assert len(errors) == 1 and errors[0].startswith("args.j: invalid JSON: ")
    args, errors = parse_form(S, {"args.req": "x", "args.j": "NaN"})
    assert errors and "NaN is not JSON" in errors[0]


def test_empty_array_item_is_an_error():
    args, errors = parse_form(
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}}}},
        {"args.xs.0": "1", "args.xs.1": "", "args.xs.2": "3"},
    )
    assert args == {"xs": [1, 3]} and errors == ["args.xs.1: this item is empty"]


def test_required_array_and_multiselect_give_empty_lists():
    schema = {
        "type": "object",
        "required": ["xs", "c"],
        "properties": {
            "xs": {"type": "array", "items": {"type": "string"}},
            "c": {"type": "array", "items": {"enum": ["a"]}},
        },
    }
    args, errors = parse_form(schema, submitted(render_form(schema)))
    assert errors == [] and args == {"xs": [], "c": []}


def test_choice_without_selector_uses_the_branch_that_has_data():
    schema = {
        "type": "object",
        "oneOf": [
            {"properties": {"id": {"type": "string"}}, "required": ["id"]},
            {"properties": {"name": {"type": "string"}}, "required": ["name"]},
        ],
    }
    assert parse_form(schema, {"args.name": "n"}) == ({"name": "n"}, [])
    assert parse_form(schema, {"args.~branch": "1", "args.name": "m"}) == ({"name": "m"}, [])
    assert parse_form(schema, {"args.~branch": "9"})[1] == ["args: unknown variant '9'"]


def test_const_is_sent_from_the_schema_not_from_the_form():
    schema = {"type": "object", "properties": {"k": {"const": 5}, "x": {"type": "string"}}}
    assert parse_form(schema, {"args.k": "tampered", "args.x": "y"})[0] == {"k": 5, "x": "y"}


def test_nullable_null_wins():
    schema = {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}
    assert parse_form(schema, {"args.n.~null": "1", "args.n": "5"})[0] == {"n": None}
    assert parse_form(schema, {"args.n": "5"})[0] == {"n": 5}


def test_non_object_root_and_garbage_data():
    assert parse_form({"type": "integer"}, {"args": "5"}) == (5, [])
    assert parse_form({"type": "integer"}, {}) == (None, [])
    assert parse_form(S, None) == ({}, [])
    assert parse_form(S, {"args.req": None, "args.b": True, "args.i": 3}) == ({"b": True, "i": 3}, [])


def test_a_huge_form_is_refused_whole_with_a_clear_error():
    from playground.schemaforms.parse import MAX_FORM_FIELDS

    data = {f"args.k{i}": "v" for i in range(10_000)}
    arguments, errors = parse_form({"type": "object", "additionalProperties": True}, data, prefix="args")
    assert arguments == {} and errors == [f"the form has 10000 fields; at most {MAX_FORM_FIELDS} are accepted"]
    arguments, errors = parse_form({"type": "object"}, {"args.k": "x" * 600_000}, prefix="args")
    assert errors and "characters" in errors[0]
