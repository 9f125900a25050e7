"""A minimal stdio MCP server written by hand, for the flood and idle-session benchmarks.

An SDK server spends more time building each notification than a client spends taking it in,
so it cannot flood fast enough to measure the client side. This one writes pre-built
`notifications/message` lines as fast as the pipe takes them. It also starts in a few
milliseconds and stays small, which the 100-idle-sessions benchmark needs.
Tools: flood(count) -> `count` notifications, then the result.
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {
        "name": "flood",
        "description": "Emit `count` notifications/message, then answer.",
        "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]},
    }
]


def reply(out, rid, result) -> None:
    out.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
    out.flush()


def main() -> None:
    out = sys.stdout
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue  # notifications: nothing to answer
        if method == "initialize":
            reply(
                out,
                rid,
                {
                    "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": {"name": "bench-flood-peer", "version": "1.0.0"},
                },
            )
        elif method == "tools/list":
            reply(out, rid, {"tools": TOOLS})
        elif method == "tools/call":
            count = int(msg["params"].get("arguments", {}).get("count", 0))
            chunk = []
            for i in range(count):
                chunk.append(
                    '{"jsonrpc":"2.0","method":"notifications/message","params":'
                    '{"level":"info","logger":"flood","data":{"i":%d,"text":"flood message %d"}}}\n' % (i, i)
                )
                if len(chunk) == 1000:
                    out.write("".join(chunk))
                    chunk.clear()
            out.write("".join(chunk))
            reply(out, rid, {"content": [{"type": "text", "text": f"sent {count}"}]})
        elif method in ("ping", "logging/setLevel"):
            reply(out, rid, {})
        else:
            out.write(
                json.dumps(
                    {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
                )
                + "\n"
            )
            out.flush()


if __name__ == "__main__":
    main()
