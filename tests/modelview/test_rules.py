"""One finding per rule, from a peer built to trigger it (tests/peers/model_view_peer.py), and
none where a tool keeps to what the provider documents."""
from __future__ import annotations

import pytest

from playground.modelview import rules
from playground.modelview.view import model_view
from tests.modelview.peers import model_view_peer

# rule -> the peer's tool that breaks it (and only its rule among the same provider's errors).
TRIGGERS = {
    "description": "no_description",
    "parameter-description": "undescribed_parameter",
    "schema-size": "huge_schema",
    "openai.name": "bad name!",
    "openai.root-object": "root_array",
    "openai.array-items": "array_without_items",
    "openai.tool-count": None,                      # the whole list, with `many`
    "openai.strict.additional-properties": "open_object",
    "openai.strict.required": "optional_parameter",
    "openai.strict.keyword": "default_value",
    "openai.strict.format": "uri_format",
    "openai.strict.root-anyof": "root_anyof",
    "openai.strict.limits": "deep_nesting",
    "anthropic.name": "bad name!",
    "anthropic.root-object": "root_array",
    "anthropic.root-combinator": "root_oneof",
    "anthropic.draft-2020-12": "invalid_schema",
    "gemini.name": "x" * 130,
    "gemini.keyword": "exclusive_minimum",
    "gemini.format": "email_format_number",
    "gemini.ref": "referenced",
    "gemini.ref-unresolvable": "recursive",
    "gemini.union": "type_union",
    "gemini.enum": "integer_enum",
    "gemini.object-properties": "free_form_map",
    "gemini.array-items": "array_without_items",
    "gemini.parameter-name": "dashed_parameter",
}


@pytest.fixture(scope="module")
def tools():
    return {t["name"]: t for t in model_view_peer()}


def test_every_rule_has_a_trigger_and_its_sources():
    assert set(TRIGGERS) == {r.id for r in rules.RULES}
    for rule in rules.RULES:
        assert rule.sources and all(s.startswith("https://") for s in rule.sources + rule.evidence), rule.id
        assert set(rule.providers) <= set(rules.PROVIDERS) and rule.severity in rules.SEVERITIES


@pytest.mark.parametrize("rule_id", [r.id for r in rules.RULES if r.scope == "tool"])
def test_rule_fires_on_its_tool(rule_id, tools):
    rule = rules.BY_ID[rule_id]
    tool = tools[TRIGGERS[rule_id]]
    for provider in rule.providers:
        found = rules.check_tool(tool, provider)
        assert rule_id in {f.rule for f in found}, (provider, [f.rule for f in found])
        mine = next(f for f in found if f.rule == rule_id)
        assert mine.severity == rule.severity and mine.message == rule.message and mine.details
    # ...and not on the tool that keeps every rule.
    for provider in rule.providers:
        assert rule_id not in {f.rule for f in rules.check_tool(tools["clean"], provider)}


def test_the_clean_tool_has_no_findings(tools):
    for provider in rules.PROVIDERS:
        assert rules.check_tool(tools["clean"], provider) == []


def test_tool_count_is_a_finding_about_the_whole_list():
    many = model_view_peer("many")
    found = rules.check_server(many, "openai")
    assert [f.rule for f in found] == ["openai.tool-count"] and f"{len(many)} tools" in found[0].details[0]
    assert rules.check_server(many[:128], "openai") == []
    assert rules.check_server(many, "anthropic") == []


def test_findings_point_at_the_place_in_the_schema(tools):
    found = {f.rule: f for f in rules.check_tool(tools["array_without_items"], "openai")}
    assert found["openai.array-items"].where == ("/properties/list",)
    refs = {f.rule: f for f in rules.check_tool(tools["recursive"], "gemini")}
    # Node refers to itself: no reference to it can be inlined, the property's own neither.
    assert refs["gemini.ref-unresolvable"].where == ("/properties/tree", "/$defs/Node/properties/children/items")
    assert all("recursive" in d for d in refs["gemini.ref-unresolvable"].details) and "gemini.ref" not in refs


def test_names_each_provider_takes(tools):
    dotted = tools["dotted.name:v2"]
    assert "gemini.name" not in {f.rule for f in rules.check_tool(dotted, "gemini")}
    assert "openai.name" in {f.rule for f in rules.check_tool(dotted, "openai")}
    assert "anthropic.name" in {f.rule for f in rules.check_tool(dotted, "anthropic")}


def test_the_gemini_rendering_drops_and_keeps_what_its_findings_say(tools):
    view = model_view(list(tools.values()))
    gemini = next(t for t in view["targets"] if t["id"] == "gemini")["json"][0]["functionDeclarations"]
    by_name = {d["name"]: d for d in gemini}
    assert "exclusiveMinimum" not in by_name["exclusive_minimum"]["parameters"]["properties"]["n"]
    assert "format" not in by_name["email_format_number"]["parameters"]["properties"]["n"]
    item = by_name["referenced"]["parameters"]["properties"]["item"]
    assert item["type"] == "OBJECT" and item["properties"]["name"]["type"] == "STRING"      # inlined
    assert item["description"] == "An item."                                               # the $ref's sibling kept
    assert by_name["type_union"]["parameters"]["properties"]["value"]["anyOf"] == [{"type": "STRING"}, {"type": "INTEGER"}]
    assert "enum" not in by_name["integer_enum"]["parameters"]["properties"]["level"]
    assert "additionalProperties" not in str(by_name["clean"])


def test_a_schema_of_a_thousand_references_is_checked_in_bounded_time():
    import time

    defs = {f"D{i}": {"type": "object", "description": "A level.",
                      "properties": {"next": {"$ref": f"#/$defs/D{i + 1}", "description": "The next."}}}
            for i in range(1000)}
    tool = {"name": "chain", "description": "A long chain.",
            "inputSchema": {"type": "object", "properties": {"first": {"$ref": "#/$defs/D0"}}, "$defs": defs}}
    started = time.process_time()
    found = {f.rule for f in rules.check_tool(tool, "gemini")}
    model_view([tool])
    assert time.process_time() - started < 5            # quadratic work is cut off, not run
    assert "gemini.ref-unresolvable" in found           # past the limit, references are not inlined
