"""What the rendered HTML holds: labels, input types, attributes, escaping, bounds."""

from __future__ import annotations

import pytest

from playground.schema import build_fields
from playground.schema._field_tree import MAX_DEPTH
from playground.schemaforms import render_form

from .formsim import read, submitted

HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "' onmouseover='alert(1)", "&lt;b&gt;"]


def label_for(reader, element_id: str) -> str | None:
    return reader.labels.get(element_id)


def test_every_input_is_labelled_with_its_exact_property_name():
    schema = {
        "type": "object",
        "properties": {
            "city name": {"type": "string", "title": "City", "description": "Where"},
            "count": {"type": "integer"},
            "ok": {"type": "boolean"},
            "kind": {"enum": ["a", "b"]},
            "meta": {"type": "object"},
            "Ünïcode.key": {"type": "number"},
        },
    }
    html = render_form(schema)
    r = read(html)
    for name in schema["properties"]:
        from playground.schema._field_tree import encode_segment

        element_id = f"id_args.{encode_segment(name)}"
        assert element_id in r.ids
        assert label_for(r, element_id) == name
    # title and description are help text, tied to the input
    assert 'aria-describedby="id_args.city%20name.~help"' in html
    assert '<span class="sf-title">City</span>' in html and "Where" in html


def test_ids_are_unique_even_when_branches_share_names():
    schema = {
        "type": "object",
        "properties": {
            "shape": {
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "a"}, "size": {"type": "number"}}},
                    {"type": "object", "properties": {"kind": {"const": "b"}, "size": {"type": "string"}}},
                ]
            },
            "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
        },
    }
    r = read(render_form(schema, values={"shape": {"kind": "b", "size": "L"}, "list": [{"x": "1"}, {"x": "2"}]}))
    assert len(r.ids) == len(set(r.ids))
    assert all(target in r.ids for target in r.labels)


@pytest.mark.parametrize(
    "fmt,input_type",
    [
        ("email", "email"),
        ("uri", "url"),
        ("date", "date"),
        ("date-time", "datetime-local"),
        ("time", "time"),
        ("hostname", "text"),
    ],
)
def test_formats_become_input_types(fmt, input_type):
    html = render_form({"type": "object", "properties": {"v": {"type": "string", "format": fmt}}})
    assert f'type="{input_type}" id="id_args.v"' in html


def test_constraints_become_html_attributes():
    html = render_form(
        {
            "type": "object",
            "required": ["s"],
            "properties": {
                "s": {"type": "string", "minLength": 2, "maxLength": 9, "pattern": "^[a-z]+$"},
                "n": {"type": "number", "minimum": -1.5, "maximum": 10},
                "i": {"type": "integer", "minimum": 0, "multipleOf": 5},
            },
        }
    )
    assert 'minlength="2"' in html and 'maxlength="9"' in html
    # A server's pattern is said, and checked when sent (RE2), never run by the browser's engine.
    assert " pattern=" not in html and "Must match <code>^[a-z]+$</code>" in html
    assert 'min="-1.5"' in html and 'max="10"' in html and 'step="any"' in html
    assert 'min="0"' in html and 'step="5"' in html
    # required: marked next to the label (outside it), and on the input
    assert '<label for="id_args.s">s</label><span class="sf-required"' in html
    assert 'required aria-required="true"' in html


def test_defaults_prefilled_and_values_win():
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "default": "dflt"},
            "b": {"type": "boolean", "default": True},
            "e": {"enum": ["x", "y"], "default": "y"},
        },
    }
    html = render_form(schema)
    assert 'value="dflt"' in html and "checked" in html and 'value="y" data-sf-json="&quot;y&quot;" selected' in html
    html = render_form(schema, values={"s": "mine", "b": False, "e": "x"})
    assert 'value="mine"' in html and 'value="dflt"' not in html
    assert 'value="x" data-sf-json="&quot;x&quot;" selected' in html


def test_array_has_add_item_template_and_item_buttons():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    html = render_form(schema, values={"tags": ["a", "b"]})
    r = read(html)
    buttons = [a for tag, a in r.elements if tag == "button"]
    assert html.count(">Add item</button>") == 1
    assert html.count(">Move up</button>") == 3 and html.count(">Move down</button>") == 3  # 2 items + template
    assert html.count(">Remove</button>") == 3
    assert all(b.get("type") == "button" for b in buttons)
    assert "<template data-sf-template>" in html and 'name="args.tags.~i"' in html
    assert r.labels["id_args.tags.1"] == "tags[1]"
    # the template is not submitted
    assert "args.tags.~i" not in submitted(html)


def test_oneof_selector_labels_title_or_discriminator():
    schema = {
        "type": "object",
        "properties": {
            "p": {
                "oneOf": [
                    {"type": "object", "title": "By id", "properties": {"id": {"type": "string"}}},
                    {"type": "object", "properties": {"t": {"const": "named"}, "name": {"type": "string"}}},
                    {"type": "integer"},
                ]
            }
        },
    }
    html = render_form(schema, values={"p": 4})
    assert '<option value="0">By id</option>' in html
    assert '<option value="1">Option 2 (t, name)</option>' in html
    assert '<option value="2" selected>integer</option>' in html
    assert html.count("disabled hidden") == 2


def test_discriminated_union_selector_uses_const_values():
    schema = {
        "type": "object",
        "properties": {
            "ev": {
                "anyOf": [
                    {"type": "object", "properties": {"type": {"const": "click"}, "x": {"type": "integer"}}},
                    {"type": "object", "properties": {"type": {"const": "key"}, "code": {"type": "string"}}},
                ]
            }
        },
    }
    html = render_form(schema, values={"ev": {"type": "key", "code": "Enter"}})
    assert '<option value="0">click</option>' in html and '<option value="1" selected>key</option>' in html


def test_nullable_has_a_null_checkbox():
    for sub in ({"type": ["integer", "null"]}, {"anyOf": [{"type": "integer"}, {"type": "null"}]}):
        html = render_form({"type": "object", "properties": {"n": sub}}, values={"n": None})
        r = read(html)
        assert r.labels["id_args.n.~null"] == "null"
        assert 'name="args.n.~null" value="1" data-sf-null checked' in html


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_strings_are_escaped(bad):
    schema = {
        "type": "object",
        "title": bad,
        "description": bad,
        "required": [bad],
        "properties": {
            bad: {"type": "string", "title": bad, "description": bad, "default": bad, "pattern": bad},
            "e": {"enum": [bad, "ok"], "default": bad},
            "c": {"const": bad},
            "t": {"oneOf": [{"const": bad, "title": bad}, {"const": "x", "title": "X"}]},
            "u": {"oneOf": [{"type": "string", "title": bad}, {"type": "integer", "description": bad}]},
            "arr": {"type": "array", "items": {"type": "string", "description": bad}, "default": [bad]},
            "j": {"type": "object", "additionalProperties": {"type": "string"}, "default": {bad: bad}},
        },
    }
    html = str(render_form(schema, errors=[{"path": "", "message": bad}, {"path": "zzz", "message": bad}]))
    assert "<script>" not in html and "<img" not in html and "onerror=alert(1)>" not in html
    assert "' onmouseover='" not in html.replace("&#x27; onmouseover=&#x27;", "")
    r = read(html)
    assert any(text == bad for text in r.labels.values())  # the exact name, once unescaped
    tags = {tag for tag, _ in r.elements}
    assert tags <= {
        "div",
        "label",
        "span",
        "input",
        "select",
        "option",
        "fieldset",
        "legend",
        "textarea",
        "ol",
        "li",
        "button",
        "template",
        "p",
        "ul",
        "code",
    }


def test_errors_are_shown_next_to_their_fields():
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}}}}
    html = render_form(
        schema,
        values={"a": {"b": 1}},
        errors=[{"path": "a.b", "message": "too small"}, {"path": "nope", "message": "other"}],
    )
    assert '<ul class="sf-errors" id="id_args.a.b.~err"><li>too small</li></ul>' in html
    assert 'aria-describedby="id_args.a.b.~err"' in html
    assert '<ul class="sf-errors sf-form-errors"><li>other</li></ul>' in html


def test_recursion_is_bounded_and_falls_back_to_json():
    schema = {
        "$defs": {
            "n": {
                "type": "object",
                "properties": {"left": {"$ref": "#/$defs/n"}, "right": {"$ref": "#/$defs/n"}, "v": {"type": "integer"}},
            }
        },
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/n"}},
    }
    html = str(render_form(schema))
    assert len(html) < 2_000_000
    assert "Edited as JSON: recursive $ref" in html
    fields = build_fields(schema)
    depth, node = 0, fields.children[0]
    while node.kind == "object":
        node, depth = node.children[0], depth + 1
    assert node.kind == "json" and depth <= MAX_DEPTH


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"properties": {"a": {"$ref": "#"}}},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
        {"properties": {"x": {"$ref": "#/nowhere"}}},
        {"properties": {"x": {"$ref": "https://example.com/s.json"}}},
        {"properties": {"x": {"$ref": "#/definitions/0/²"}}},
        {"type": "array", "items": {"$ref": "#"}},
        {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
        {"type": 5},
        {"properties": []},
        {"enum": []},
        {"allOf": [{"type": "string"}, {"type": "integer"}]},
        {"oneOf": [{"oneOf": [{"const": 1}, {"type": "string"}]}, {"type": "boolean"}]},
        True,
        False,
        None,
        [],
        "string",
        3,
    ],
)
def test_weird_schemas_render_without_exception(schema):
    html = str(render_form(schema))
    assert "data-sf-root" in html


def test_deep_nesting_falls_back_below_the_depth_limit():
    schema: dict = {"type": "string"}
    for i in range(200):
        schema = {"type": "object", "properties": {f"p{i}": schema}}
    html = str(render_form(schema))
    assert "Edited as JSON: nested beyond the depth limit" in html


def test_only_the_unrenderable_subtree_falls_back():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "pair": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "t": {"type": "array", "prefixItems": [{}]}},
            },
        },
    }
    r = read(render_form(schema))
    kinds = {a.get("data-sf-name"): a.get("data-sf-kind") for _, a in r.elements if "data-sf-kind" in a}
    assert kinds == {
        "args": "object",
        "args.name": "string",
        "args.pair": "object",
        "args.pair.n": "integer",
        "args.pair.t": "json",
    }
    assert [c.tag for c in r.controls if c.attrs.get("name") == "args.pair.t"] == ["textarea"]


def test_no_parameters():
    html = render_form({"type": "object", "additionalProperties": False})
    assert "No arguments." in html


def test_titled_and_untitled_multiselect_are_checkbox_groups():
    schema = {
        "type": "object",
        "properties": {
            "c": {
                "type": "array",
                "items": {"anyOf": [{"const": "#F00", "title": "Red"}, {"const": "#0F0", "title": "Green"}]},
            }
        },
    }
    html = render_form(schema, values={"c": ["#0F0"]})
    r = read(html)
    assert "c" in r.legends
    assert r.labels["id_args.c.~o0"] == "Red" and r.labels["id_args.c.~o1"] == "Green"
    assert 'value="#0F0" data-sf-json="&quot;#0F0&quot;" data-sf-control checked' in html


def test_enum_of_mixed_types_uses_distinct_tokens():
    html = render_form({"type": "object", "properties": {"e": {"enum": [1, "1", None]}}})
    assert '<option value="1" data-sf-json="1">1</option>' in html
    assert '<option value="&quot;1&quot;" data-sf-json="&quot;1&quot;">&quot;1&quot;</option>' in html
    assert '<option value="null" data-sf-json="null">null</option>' in html
