"""A stdio MCP server whose tools each break one Model view rule (playground/modelview/rules.py),
plus `clean`, which breaks none. Raw JSON-RPC: an SDK server would refuse or rewrite the
broken names and schemas these tools are made of.

    python model_view_peer.py [many]      (`many`: 129 more tools, over OpenAI's 128)
"""

from __future__ import annotations

import json
import sys

OK = {"description": "A described parameter.", "type": "string"}


def obj(properties: dict, **extra: object) -> dict:
    """A strict-clean object: every property required, additionalProperties false."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


def tool(name: str, schema: dict, description: str | None = "Does one thing, described.", **extra: object) -> dict:
    out: dict = {"name": name, "inputSchema": schema, **extra}
    if description is not None:
        out["description"] = description
    return out


def deep(levels: int) -> dict:
    node: dict = obj({"leaf": OK})
    for _ in range(levels):
        node = obj({"child": {**node, "description": "A nested level."}})
    return node


# The tool that triggers each rule (tests/modelview/test_rules.py holds the same table).
TOOLS = [
    tool("clean", obj({"text": OK})),
    tool("no_description", obj({"text": OK}), description=None),
    tool("undescribed_parameter", obj({"text": {"type": "string"}})),
    # More subschemas than the walk takes (its unreferenced $defs: within OpenAI's strict limits,
    # and nothing Gemini's rendering sends).
    tool("huge_schema", obj({"text": OK}, **{"$defs": {f"d{i}": OK for i in range(5200)}})),
    tool("bad name!", obj({"text": OK})),
    tool("root_array", {"type": "array", "items": OK}),
    tool("array_without_items", obj({"list": {"type": "array", "description": "A list of anything."}})),
    tool("open_object", {"type": "object", "properties": {"text": OK}, "required": ["text"]}),
    tool(
        "optional_parameter",
        {
            "type": "object",
            "properties": {"text": OK, "other": OK},
            "required": ["text"],
            "additionalProperties": False,
        },
    ),
    tool("default_value", obj({"text": {**OK, "default": "x"}})),
    tool("uri_format", obj({"link": {**OK, "format": "uri"}})),
    tool("root_anyof", {**obj({"text": OK}), "anyOf": [obj({"text": OK})]}),
    tool("no_arguments", {"type": "object", "additionalProperties": False}),  # the MCP spec's shape for it
    tool("untyped_property", obj({"anything": {"description": "Any JSON value."}})),
    tool("deep_nesting", deep(11)),
    tool("root_oneof", {"type": "object", "oneOf": [obj({"a": OK}), obj({"b": OK})]}),
    tool("invalid_schema", obj({"text": {**OK, "type": "strng"}})),
    tool("dotted.name:v2", obj({"text": OK})),
    tool("1st_tool", obj({"text": OK})),  # Gemini's names start with a letter or _
    tool("x" * 130, obj({"text": OK})),  # over Anthropic's 128 (and the others' 64)
    tool("y" * 100, obj({"text": OK})),  # Anthropic takes it, OpenAI and Gemini do not
    tool("w" * 64, obj({"text": OK})),  # every provider takes it
    tool("exclusive_minimum", obj({"n": {"type": "integer", "description": "A count.", "exclusiveMinimum": 0}})),
    tool("email_format_number", obj({"n": {"type": "number", "description": "A rate.", "format": "percent"}})),
    tool(
        "referenced",
        obj({"item": {"$ref": "#/$defs/Item", "description": "An item."}}, **{"$defs": {"Item": obj({"name": OK})}}),
    ),
    tool(
        "recursive",
        obj(
            {"tree": {"$ref": "#/$defs/Node", "description": "A tree."}},
            **{
                "$defs": {
                    "Node": obj(
                        {"children": {"type": "array", "description": "Subtrees.", "items": {"$ref": "#/$defs/Node"}}}
                    )
                }
            },
        ),
    ),
    tool("type_union", obj({"value": {"type": ["string", "integer"], "description": "A string or a number."}})),
    tool("integer_enum", obj({"level": {"type": "integer", "description": "A level.", "enum": [1, 2, 3]}})),
    tool("free_form_map", obj({"labels": {"type": "object", "description": "Any labels, any values."}})),
    tool("dashed_parameter", obj({"first-name": OK})),
    tool("required_undefined", {**obj({"text": OK}), "required": ["text", "missing"]}),
]
MANY = [tool(f"filler_{i}", obj({"text": OK})) for i in range(129)]


def answer(message: dict) -> dict | None:
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return None
    if method == "initialize":
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "model-view-peer", "version": "1.0.0"},
            },
        }
    if method == "tools/list":
        tools = TOOLS + (MANY if "many" in sys.argv[1:] else [])
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}}
    if method == "tools/call":
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {"content": [{"type": "text", "text": "called"}], "structuredContent": {"called": True}},
        }
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
