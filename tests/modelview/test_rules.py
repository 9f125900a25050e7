"""One finding per rule, from a peer built to trigger it (tests/peers/model_view_peer.py): each
trigger breaks its rule and no other of that provider's; none where a tool keeps to what the
provider documents. Then the rules' bounds: linear reference checks, a budget per catalogue
that says what it did not check, and Gemini findings about what its rendering sends."""

from __future__ import annotations

import json

import pytest

from playground.modelview import rules
from playground.modelview.schema import MAX_DEPTH
from playground.modelview.view import model_view
from tests.modelview.peers import model_view_peer

# rule -> the peer's tool that breaks it (and no other rule of the same provider: EXCEPTIONS).
TRIGGERS = {
    "description": "no_description",
    "parameter-description": "undescribed_parameter",
    "schema-size": "huge_schema",
    "openai.name": "bad name!",
    "openai.root-object": "root_array",
    "openai.root-combinator": "root_anyof",
    "openai.root-properties": "no_arguments",
    "openai.array-items": "array_without_items",
    "openai.tool-count": None,  # the whole list, with `many`
    "openai.strict.additional-properties": "open_object",
    "openai.strict.required": "optional_parameter",
    "openai.strict.keyword": "default_value",
    "openai.strict.format": "uri_format",
    "openai.strict.type": "untyped_property",
    "openai.strict.limits": "deep_nesting",
    "anthropic.name": "bad name!",
    "anthropic.root-object": "root_array",
    "anthropic.root-combinator": "root_oneof",
    "anthropic.draft-2020-12": "invalid_schema",
    "gemini.name": "1st_tool",
    "gemini.keyword": "exclusive_minimum",
    "gemini.format": "email_format_number",
    "gemini.ref": "referenced",
    "gemini.ref-unresolvable": "recursive",
    "gemini.union": "type_union",
    "gemini.enum": "integer_enum",
    "gemini.object-properties": "free_form_map",
    "gemini.array-items": "array_without_items",
    "gemini.required-undefined": "required_undefined",
    "gemini.parameter-name": "dashed_parameter",
}


# (rule, provider) -> the other findings its trigger has, and why.
EXCEPTIONS = {
    # Too large to walk whole is too large to validate: the expensive check says it was not run.
    ("schema-size", "anthropic"): {("anthropic.draft-2020-12", "unchecked")},
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
        others = {(f.rule, f.severity) for f in found if f.rule != rule_id}
        assert [f.rule for f in found if f.rule == rule_id] == [rule_id], (provider, [f.rule for f in found])
        assert others == EXCEPTIONS.get((rule_id, provider), set()), (provider, others)
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
    # Node refers to itself: the property's reference is not inlined, so Node is never sent (nor
    # its own reference, which is not reported: the rendering holds nothing of it).
    assert refs["gemini.ref-unresolvable"].where == ("/properties/tree",)
    assert all("recursive" in d for d in refs["gemini.ref-unresolvable"].details) and "gemini.ref" not in refs


def test_names_each_provider_takes(tools):
    def refused(name: str) -> set[str]:
        return {p for p in rules.PROVIDERS if f"{p}.name" in {f.rule for f in rules.check_tool(tools[name], p)}}

    assert refused("dotted.name:v2") == {"openai", "anthropic"}  # Gemini's take dots and colons
    assert refused("1st_tool") == {"gemini"}  # ... but start with a letter or _
    assert refused("w" * 64) == set()  # 64: every provider's limit or under it
    assert refused("y" * 100) == {"openai", "gemini"}  # Anthropic's limit is 128
    assert refused("x" * 130) == set(rules.PROVIDERS)


def test_the_gemini_rendering_drops_and_keeps_what_its_findings_say(tools):
    view = model_view(list(tools.values()))
    gemini = next(t for t in view["targets"] if t["id"] == "gemini")["json"][0]["functionDeclarations"]
    by_name = {d["name"]: d for d in gemini}
    assert "exclusiveMinimum" not in by_name["exclusive_minimum"]["parameters"]["properties"]["n"]
    assert "format" not in by_name["email_format_number"]["parameters"]["properties"]["n"]
    item = by_name["referenced"]["parameters"]["properties"]["item"]
    assert item["type"] == "OBJECT" and item["properties"]["name"]["type"] == "STRING"  # inlined
    assert item["description"] == "An item."  # the $ref's sibling kept
    assert by_name["type_union"]["parameters"]["properties"]["value"]["anyOf"] == [
        {"type": "STRING"},
        {"type": "INTEGER"},
    ]
    assert "enum" not in by_name["integer_enum"]["parameters"]["properties"]["level"]
    assert "additionalProperties" not in str(by_name["clean"])


def _gemini(tool: dict) -> dict:
    return next(t for t in model_view([tool])["targets"] if t["id"] == "gemini")["json"][0]["functionDeclarations"][0]


def test_many_references_are_inlined_not_called_recursive():
    """Three hundred targets, each referenced once, none recursive: every one is inlined."""
    defs = {f"D{i}": {"type": "string", "description": f"Field {i}."} for i in range(300)}
    tool = {
        "name": "flat",
        "description": "Many references.",
        "inputSchema": {
            "type": "object",
            "properties": {f"p{i}": {"$ref": f"#/$defs/D{i}"} for i in range(300)},
            "$defs": defs,
        },
    }
    found = {f.rule: f for f in rules.check_tool(tool, "gemini")}
    assert "gemini.ref-unresolvable" not in found and found["gemini.ref"].more == 300 - rules.MAX_HITS_SHOWN
    properties = _gemini(tool)["parameters"]["properties"]
    assert all(properties[f"p{i}"] == {"type": "STRING", "description": f"Field {i}."} for i in range(300))


def test_a_chain_of_a_thousand_references_is_checked_in_linear_time():
    """Not recursive, so not reported as such; inlined 64 levels deep, the rest cannot be sent,
    and that is said where it happens."""
    import time

    defs = {
        f"D{i}": {
            "type": "object",
            "description": "A level.",
            "properties": {"next": {"$ref": f"#/$defs/D{i + 1}", "description": "The next."}},
        }
        for i in range(1000)
    }
    tool = {
        "name": "chain",
        "description": "A long chain.",
        "inputSchema": {"type": "object", "properties": {"first": {"$ref": "#/$defs/D0"}}, "$defs": defs},
    }
    started = time.process_time()
    found = {f.rule: f for f in rules.check_tool(tool, "gemini")}
    model_view([tool])
    assert time.process_time() - started < 5
    unresolvable = found["gemini.ref-unresolvable"]
    assert all("recursive" not in d for d in unresolvable.details)
    assert unresolvable.details[0] == f"inlined more than {MAX_DEPTH} levels deep: left empty there"
    level, depth = _gemini(tool)["parameters"]["properties"]["first"], 1
    while "next" in level.get("properties", {}) and level["properties"]["next"]:
        level, depth = level["properties"]["next"], depth + 1
    assert MAX_DEPTH // 4 < depth < 1000  # as deep as the conversion goes, then empty


def test_gemini_findings_are_about_what_its_rendering_sends():
    """Subschemas the conversion drops with their keyword (not, additionalProperties,
    patternProperties, if/then, unreferenced $defs, a many-schema allOf) are one gemini.keyword
    warning at their parent, not errors of their own."""

    def bad() -> dict:  # an error where it is sent (a new object each: as parsed)
        return {"type": "object", "description": "No properties."}

    tool = {
        "name": "dropped",
        "description": "Drops things.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "n": {"type": "string", "description": "A name.", "not": {"type": "array"}},
                "tags": {
                    "type": "object",
                    "description": "Tags.",
                    "properties": {"a": {"type": "string", "description": "A."}},
                    "additionalProperties": {"type": "array"},
                    "patternProperties": {"^x": bad()},
                },
                "when": {"type": "string", "description": "A time.", "if": bad(), "then": {"type": "array"}},
                "both": {"type": "string", "description": "Two.", "allOf": [bad(), {"type": "array"}]},
            },
            "required": ["n"],
            "$defs": {"Unused": {"type": "array"}, "Empty": bad()},
        },
    }
    found = {f.rule: f for f in rules.check_tool(tool, "gemini")}
    assert "gemini.object-properties" not in found and "gemini.array-items" not in found
    assert set(found["gemini.keyword"].where) == {"/properties/n", "/properties/tags", "/properties/when"}
    assert found["gemini.union"].where == ("/properties/both",)  # the allOf, dropped
    sent = json.dumps(_gemini(tool))
    assert "No properties" not in sent and "ARRAY" not in sent
    # ... and where the rendering does send it, it is reported: through a $ref, in an anyOf.
    tool["inputSchema"]["properties"]["x"] = {"$ref": "#/$defs/Empty"}
    tool["inputSchema"]["properties"]["y"] = {"anyOf": [{"type": "array"}, {"type": "null"}], "description": "Y."}
    found = {f.rule: f for f in rules.check_tool(tool, "gemini")}
    assert found["gemini.object-properties"].where == ("/$defs/Empty",)
    assert found["gemini.array-items"].where == ("/properties/y/anyOf/0",)


def test_the_gemini_findings_and_rendering_come_from_one_conversion(tools):
    """Every Gemini finding placed in the schema points at a subschema the rendering converted."""
    for tool in tools.values():
        subject = rules.Subject.of(tool)
        converted = {n.path for n in subject.gemini_nodes}
        for found in rules.check_tool(tool, "gemini", subject):
            if found.rule.startswith("gemini.") and found.rule != "gemini.ref-unresolvable":
                assert set(found.where) - {""} <= converted, (tool["name"], found.rule, found.where)


def test_a_tool_without_input_schema_is_what_its_renderings_send():
    """OpenAI's rendering leaves `parameters` out (a function without arguments), Anthropic's
    sends an empty object schema: both accepted, so no finding says otherwise."""
    tool = {"name": "no_schema", "description": "Takes nothing."}
    for provider in rules.PROVIDERS:
        assert rules.check_tool(tool, provider) == [], provider
    broken = {"name": "null_schema", "description": "A null schema.", "inputSchema": None}
    assert "openai.root-object" in {f.rule for f in rules.check_tool(broken, "openai")}
    assert "anthropic.root-object" in {f.rule for f in rules.check_tool(broken, "anthropic")}


def test_a_catalogue_is_checked_within_one_budget_and_says_what_it_did_not_check():
    """Thousands of tools: the expensive validation stops at the catalogue's budget and each tool
    past it says "not checked" for that rule; past the walk's budget, schema-size says it too."""

    def tool(i: int, width: int) -> dict:
        return {
            "name": f"t{i}",
            "description": "A tool.",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": [f"p{j}" for j in range(width)],
                "properties": {f"p{j}": {"type": "string", "description": "P."} for j in range(width)},
            },
        }

    width = 49  # 50 subschemas a tool
    tools = [tool(i, width) for i in range(2 * rules.CATALOGUE_NODES // 50 + 5)]
    view = model_view(tools)
    anthropic = next(f for f in view["findings"] if f["provider"] == "anthropic")["tools"]
    checked = rules.CATALOGUE_CHECKED // 50
    assert all(found == [] for found in anthropic[:checked])
    unchecked = anthropic[checked + 1]
    assert [(f["rule"], f["severity"]) for f in unchecked] == [("anthropic.draft-2020-12", "unchecked")]
    assert "not run" in unchecked[0]["message"] and f"first {rules.CATALOGUE_CHECKED}" in unchecked[0]["details"][0]
    walked = rules.CATALOGUE_NODES // 50
    past = anthropic[walked + 1]
    assert {f["rule"] for f in past} == {"schema-size", "anthropic.draft-2020-12"}
    gemini = next(t for t in view["targets"] if t["id"] == "gemini")["json"][0]["functionDeclarations"]
    assert "parameters" in gemini[walked - 1] and "parameters" not in gemini[walked + 1]
    assert view["findings"][2]["counts"]["warning"] >= len(tools) - walked  # each cut tool says so


def _found(schema: dict, provider: rules.Provider) -> dict[str, rules.Finding]:
    return {
        f.rule: f for f in rules.check_tool({"name": "t", "description": "A tool.", "inputSchema": schema}, provider)
    }


def test_openai_refuses_each_of_its_top_level_keywords_and_only_there():
    described = {"type": "string", "description": "A value."}
    for keyword, value in {
        "oneOf": [described],
        "anyOf": [described],
        "allOf": [described],
        "enum": ["a"],
        "const": "a",
        "not": {"type": "array"},
    }.items():
        found = _found({"type": "object", "properties": {"v": described}, keyword: value}, "openai")
        assert found["openai.root-combinator"].details == (f"{keyword} at the top level",), keyword
        nested = _found({"type": "object", "properties": {"v": {**described, keyword: value}}}, "openai")
        assert "openai.root-combinator" not in nested, keyword
    # A tool without inputSchema is sent without parameters: nothing at its top level.
    assert rules.check_tool({"name": "t", "description": "A tool."}, "openai") == []


def test_a_root_object_needs_properties_even_empty_ones():
    assert "openai.root-properties" in _found({"type": "object"}, "openai")
    assert "openai.root-properties" not in _found({"type": "object", "properties": {}}, "openai")
    nested = _found({"type": "object", "properties": {"m": {"type": "object", "description": "A map."}}}, "openai")
    assert "openai.root-properties" not in nested  # the root's rule; strict has its own


def test_strict_types_are_read_where_strict_takes_subschemas():
    untyped = {"description": "Anything."}
    schema = {
        "type": "object",
        "properties": {
            "list": {"type": "array", "description": "A list.", "items": {}},
            "either": {"anyOf": [{"type": "string"}, dict(untyped)], "description": "One of two."},
            "ref": {"$ref": "#/$defs/Loose", "description": "Referenced."},
            "choice": {"enum": ["a", "b"], "description": "A choice."},
            "exclusive": {"oneOf": [{"type": "string"}, {"type": "integer"}], "description": "One of two, only."},
            "negated": {"type": "string", "description": "Not a number.", "not": dict(untyped)},
            "map": {"type": "object", "description": "A map.", "properties": {}, "additionalProperties": dict(untyped)},
        },
        "$defs": {"Loose": dict(untyped)},
    }
    found = _found(schema, "openai")["openai.strict.type"]
    assert set(found.where) == {"/properties/list/items", "/properties/either/anyOf/1", "/$defs/Loose"}
    # What lies under a keyword strict refuses (not) or must be false (additionalProperties) is that
    # keyword's finding.
    assert {"/properties/negated", "/properties/exclusive"} <= set(
        _found(schema, "openai")["openai.strict.keyword"].where
    )


def test_gemini_required_names_are_read_in_the_object_it_is_sent():
    item = {"type": "object", "properties": {"name": {"type": "string", "description": "A name."}}}
    schema = {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item", "description": "An item.", "required": ["name", "size"]}},
        "required": ["item"],
        "$defs": {"Item": item},
    }
    found = _found(schema, "gemini")["gemini.required-undefined"]
    assert found.where == ("/properties/item",) and "'size'" in found.details[0] and "'name'" not in found.details[0]
    # A root without properties is not sent at all; a nested one is gemini.object-properties's.
    assert "gemini.required-undefined" not in _found({"type": "object", "required": ["x"]}, "gemini")
    nested = _found(
        {"type": "object", "properties": {"o": {"type": "object", "description": "O.", "required": ["x"]}}}, "gemini"
    )
    assert "gemini.required-undefined" not in nested and "gemini.object-properties" in nested
