"""A stdio MCP server whose traffic follows the MCP schema of one protocol version except for
one message, which breaks it in a way typical of that version's servers:

    2024-11-05   its tools/list result lists a tool without an inputSchema
    2025-03-26   calling `go` logs a notifications/message at level "loud"
    2025-06-18   calling `go` reports notifications/progress of "half"
    2025-11-25   calling `go` returns a text content block without its text
    2026-07-28   calling `go` returns a result without resultType (modern era: server/discover)

Raw stdio on purpose: an SDK server would not let one write these. Everything else it sends
is valid for the version (the tests count exactly one problem a session).

    python schema_breaker.py VERSION
"""

from __future__ import annotations

import json
import sys

VERSION = sys.argv[1] if len(sys.argv) > 1 else "2025-11-25"
MODERN = VERSION >= "2026"
OUT = sys.stdout
INFO = {"name": "schema-breaker", "version": "1.0.0"}
GO = {
    "name": "go",
    "description": f"breaks the MCP {VERSION} schema once",
    "inputSchema": {"type": "object", "properties": {}},
}


def write(message: dict) -> None:
    OUT.write(json.dumps(message) + "\n")
    OUT.flush()


def result(rid: object, body: dict) -> None:
    if MODERN:
        body = {"resultType": "complete", **body}
    write({"jsonrpc": "2.0", "id": rid, "result": body})


def cacheable(body: dict) -> dict:
    return {**body, "ttlMs": 0, "cacheScope": "private"} if MODERN else body


def call(rid: object, params: dict) -> None:
    if VERSION == "2025-03-26":
        write({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "loud", "data": "too loud"}})
    elif VERSION == "2025-06-18":
        token = ((params.get("_meta") or {}).get("progressToken")) or "go"
        write(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": "half"},
            }
        )
    if VERSION == "2025-11-25":
        result(rid, {"content": [{"type": "text"}]})
    elif MODERN:
        write({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "went"}]}})
    else:
        result(rid, {"content": [{"type": "text", "text": "went"}]})


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        if rid is None or not isinstance(method, str):
            continue  # notifications and responses: nothing to answer
        if method == "initialize" and not MODERN:
            result(rid, {"protocolVersion": VERSION, "capabilities": {"tools": {}, "logging": {}}, "serverInfo": INFO})
        elif method == "server/discover" and MODERN:
            result(
                rid,
                cacheable(
                    {
                        "supportedVersions": [VERSION],
                        "capabilities": {"tools": {}},
                        "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
                    }
                ),
            )
        elif method == "tools/list":
            tool = {"name": "go", "description": GO["description"]} if VERSION == "2024-11-05" else GO
            result(rid, cacheable({"tools": [tool]}))
        elif method == "tools/call":
            call(rid, msg.get("params") or {})
        elif method == "ping":
            result(rid, {})
        else:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
