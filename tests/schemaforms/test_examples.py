"""Every example in the MCP 2026-07-28 schema that holds a JSON Schema renders, is labelled,
and round-trips through a simulated submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.schema import validate_arguments
from playground.schemaforms import parse_form, render_form

from .formsim import read, submitted

# shared/ lies beside the checkout (CI clones main next to it); /work/shared where it does not.
_IN_SHARED = Path("mcp-schema/2026-07-28/examples")
EXAMPLES = next(
    (
        base / _IN_SHARED
        for base in (Path(__file__).resolve().parents[3] / "shared", Path("/work/shared"))
        if (base / _IN_SHARED).is_dir()
    ),
    Path("/work/shared") / _IN_SHARED,
)
SCHEMA_KEYS = ("inputSchema", "requestedSchema", "outputSchema")
# Example folders whose files are themselves primitive schemas (elicitation field definitions).
SCHEMA_FOLDERS = {
    "BooleanSchema",
    "NumberSchema",
    "StringSchema",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
}


def find_schemas(node, where=""):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SCHEMA_KEYS and isinstance(value, dict):
                yield f"{where}/{key}", value
            yield from find_schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from find_schemas(value, f"{where}/{i}")


def collect():
    cases = []
    for path in sorted(EXAMPLES.rglob("*.json")):
        doc = json.loads(path.read_text())
        rel = str(path.relative_to(EXAMPLES))
        if path.parent.name in SCHEMA_FOLDERS:
            # A field schema: render it as the one property "value" of an object.
            cases.append((f"{rel}#field", {"type": "object", "properties": {"value": doc}}))
        for where, schema in find_schemas(doc):
            cases.append((f"{rel}#{where}", schema))
    return cases


CASES = collect()


def test_the_examples_were_found():
    """Without the examples every case below would silently be none."""
    assert CASES, f"no schema found under {EXAMPLES}"


def test_the_examples_are_there():
    files = {c[0].split("#")[0] for c in CASES}
    assert len(CASES) >= 20
    assert {
        "Tool/with-default-2020-12-input-schema.json",
        "Tool/with-explicit-draft-07-input-schema.json",
        "Tool/tool-with-composition-input-schema.json",
        "ElicitRequestFormParams/elicit-multiple-fields.json",
        "TitledMultiSelectEnumSchema/titled-color-multi-select-schema.json",
    } <= files


@pytest.mark.parametrize("schema", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_example_renders_labelled_and_round_trips(schema):
    html = render_form(schema)
    r = read(html)
    names = []
    if schema.get("type") == "object" or "properties" in schema:
        names = list(schema.get("properties") or {})
        for branch in schema.get("oneOf") or schema.get("anyOf") or []:
            names += list(branch.get("properties") or {})
    for name in names:
        labelled = any(text == name and target in r.ids for target, text in r.labels.items())
        assert labelled or name in r.legends, f"no label for {name!r}"
    args, errors = parse_form(schema, submitted(html))
    assert errors == []
    again, errors = parse_form(schema, submitted(render_form(schema, values=args)))
    assert errors == [] and again == args
    assert isinstance(validate_arguments(schema, args), list)


def test_field_schema_defaults_are_valid_arguments():
    for name, schema in CASES:
        if name.endswith("#field"):
            args, errors = parse_form(schema, submitted(render_form(schema)))
            assert errors == [] and args == {"value": schema["properties"]["value"]["default"]}, name
            assert validate_arguments(schema, args) == [], name


def test_elicitation_example_round_trip():
    schema = json.loads((EXAMPLES / "ElicitRequestFormParams/elicit-multiple-fields.json").read_text())[
        "requestedSchema"
    ]
    values = {"name": "Ada", "email": "ada@example.com", "age": 36}
    html = render_form(schema, prefix="elicit", values=values)
    assert 'type="email" id="id_elicit.email"' in html and 'min="18"' in html
    assert parse_form(schema, submitted(html), prefix="elicit") == (values, [])
    assert [e["path"] for e in validate_arguments(schema, {"name": "x", "email": "x@y", "age": 3})] == ["age"]
