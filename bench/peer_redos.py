"""A stdio MCP server (raw, legacy handshake) whose one tool `go` returns structuredContent that a
backtracking regex engine needs minutes to check against its outputSchema pattern ^(a+)+$."""

import json
import sys

TOOL = {
    "name": "go",
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}},
}

for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "redos", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "done"}], "structuredContent": {"s": "a" * 40 + "!"}}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
