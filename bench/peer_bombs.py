"""A stdio MCP server (raw, legacy handshake) made of the structures issue 30 found unbounded:
on `notifications/initialized`, six `elicitation/create` requests whose schema is a doubling
`allOf` chain 26 deep; a tool list of five tools whose inputSchemas double 20 deep and end in an
enum (Gemini's rendering inlines them); a tool `form` whose inputSchema doubles 26 deep."""

import json
import sys


def chain(depth: int, leaf: dict, how: str = "allOf") -> dict:
    def node(i: int) -> dict:
        ref = {"$ref": f"#/$defs/d{i + 1}"}
        return (
            {how: [ref, dict(ref)]} if how == "allOf" else {"type": "object", "properties": {"a": ref, "b": dict(ref)}}
        )

    defs = {f"d{i}": node(i) for i in range(depth)}
    defs[f"d{depth}"] = leaf
    return {"type": "object", "$defs": defs, "properties": {"root": {"$ref": "#/$defs/d0"}}}


OBJECT = {"type": "object", "properties": {"x": {"type": "string"}}}
ENUM = {"type": "string", "enum": [f"value-{i:05d}" for i in range(200)]}
TOOLS = [
    {"name": f"inline{i}", "description": "Gemini inlines this", "inputSchema": chain(20, ENUM, "properties")}
    for i in range(5)
]
TOOLS.append({"name": "form", "description": "a form of 2^26 merges", "inputSchema": chain(26, OBJECT)})


def write(message: dict) -> None:
    print(json.dumps(message), flush=True)


for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "notifications/initialized":
        for i in range(6):  # each one a schema of its own (nothing kept from the one before helps)
            leaf = {**OBJECT, "title": f"{id(msg)}-{i}"}
            write(
                {
                    "jsonrpc": "2.0",
                    "id": f"bomb-{i}",
                    "method": "elicitation/create",
                    "params": {"message": f"bomb {i}", "requestedSchema": chain(26, leaf)},
                }
            )
    if rid is None or method is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bombs", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "done"}]}
    else:
        result = {}
    write({"jsonrpc": "2.0", "id": rid, "result": result})
