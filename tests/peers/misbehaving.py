"""A stdio MCP server that speaks the legacy handshake correctly, lists one tool `go`, answers
`ping`, and misbehaves on the wire when `go` is called, as `argv[1]` says.

Raw stdio on purpose: the faults (garbage, invalid UTF-8, half a frame, duplicate ids, a
50 MB line, 100,000 notifications, NUL and unpaired surrogate escapes, megabytes of text in
its name and instructions) are below what an SDK server lets one produce.

    python misbehaving.py garbage|utf8|crash|silent|big|flood [COUNT]|stderr|ids|jsonrpc|endless|escapes|huge|deep [DEPTH]|redos
"""
from __future__ import annotations

import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "garbage"
OUT = sys.stdout.buffer
FLOOD = int(sys.argv[2]) if MODE == "flood" and len(sys.argv) > 2 else 100_000     # flood [COUNT]
STDERR_FLOOD = 20_000
HUGE = "x" * 3_000_000          # megabytes of text where a page shows a line or two
DEPTH = int(sys.argv[2]) if MODE == "deep" and len(sys.argv) > 2 else 1800       # deep [DEPTH]


def write(obj_or_bytes: object) -> None:
    data = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
    OUT.write(data + b"\n")
    OUT.flush()


def result(rid: object, text: str = "done") -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}


def note(i: int) -> bytes:
    return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}' % i


def misbehave(rid: object) -> None:
    if MODE == "garbage":
        OUT.write(b"this is not json\n{\"jsonrpc\": \"2.0\", \"id\": \n\n[1, 2\n")
        write(result(rid))
    elif MODE == "utf8":
        write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\xff\xfe bad \xc3"}}')
        write(result(rid))
    elif MODE == "crash":
        OUT.write(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[' % json.dumps(rid).encode())
        OUT.flush()
        sys.stderr.write("fatal: going down mid-call\n")
        sys.exit(3)
    elif MODE == "silent":
        pass                                   # never answers this call; ping still works
    elif MODE == "big":
        blob = b"a" * 50_000_000
        write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"' + blob + b'"}}')
        write(result(rid))
    elif MODE == "flood":
        OUT.write(b"\n".join(note(i) for i in range(FLOOD)) + b"\n")
        write(result(rid, "flood done"))
    elif MODE == "stderr":
        sys.stderr.write("".join(f"stderr line {i} <script>alert(1)</script>\n" for i in range(STDERR_FLOOD)))
        sys.stderr.flush()
        write(result(rid, "stderr done"))
    elif MODE == "ids":
        write(result(999, "unknown id"))
        write({"jsonrpc": "2.0", "result": {"content": []}})               # no id at all
        write(result(rid, "first"))
        write(result(rid, "duplicate"))                                     # the same id again
    elif MODE == "jsonrpc":
        write({"jsonrpc": "1.0", "id": rid, "result": {"content": [{"type": "text", "text": "old"}]}})
    elif MODE == "escapes":
        # Valid JSON, hostile text: unpaired surrogates, NUL as an escape and as a raw byte.
        write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
              b'"data":"lone \\ud800 nul \\u0000 end"}}')
        write(b'raw NUL \x00 here')
        write(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done \\udc00 \\u0000"}]}}'
              % json.dumps(rid).encode())
    elif MODE == "huge":
        write({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": HUGE}})
        write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "failed: " + HUGE}})
    elif MODE == "deep":
        # JSON nested DEPTH levels: a log message, then the result (nested too when a parser can
        # read it at all), then a plain notification that must be saved after them.
        nest = b"[" * DEPTH + b"]" * DEPTH
        write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":' + nest + b"}}")
        meta = nest if DEPTH <= 5000 else b"0"
        write(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"deep done"}],'
              b'"structuredContent":{"deep":%s}}}' % (json.dumps(rid).encode(), meta))
        write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after deep"}}')
    elif MODE == "redos":
        # A structuredContent that a backtracking engine needs minutes to check against the
        # tool's outputSchema pattern ^(a+)+$.
        write({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "redos done"}],
                                                      "structuredContent": {"s": "a" * 40 + "!"}}})
    elif MODE == "endless":
        i = 0
        while True:                            # until killed
            OUT.write(b"\n".join(note(i + k) for k in range(1000)) + b"\n")
            OUT.flush()
            i += 1000


def main() -> None:
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        huge = HUGE if MODE == "huge" else ""
        if method == "initialize":
            write({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": f"misbehaving-{MODE}{huge}", "version": "0"}, "instructions": huge}})
        elif method == "tools/list":
            tool = {"name": "go", "description": f"misbehaves: {MODE}{huge}", "inputSchema": {"type": "object"}}
            if MODE == "redos":
                tool["outputSchema"] = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
            write({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{**tool, "title": huge} if huge else tool]}})
        elif method == "ping":
            write({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/call":
            misbehave(rid)
        elif rid is not None:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
