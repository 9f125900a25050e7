"""A stdio MCP server that speaks the legacy handshake correctly, lists one tool `go`, answers
`ping`, and misbehaves on the wire when `go` is called, as `argv[1]` says.

Raw stdio on purpose: the faults (garbage, invalid UTF-8, half a frame, duplicate ids, a
50 MB line, 100,000 notifications, NUL and unpaired surrogate escapes, megabytes of text in
its name and instructions) are below what an SDK server lets one produce.

    python misbehaving.py garbage|utf8|crash|silent|big|flood [COUNT]|stderr|ids|jsonrpc|endless|escapes|huge|deep [DEPTH]|redos
                          |task-asks|task-huge-poll|lone-surrogates|schema-bomb|unique-bomb|elicit-bomb

`schema-bomb` and `unique-bomb`: an outputSchema and a structuredContent that jsonschema would
check for ever (a `$defs` chain in which each entry is `allOf` of the next one twice, 60 deep),
or for minutes (`uniqueItems` over 20,000 objects, the last a repeat of the first: the compiled
screen finds it at once and jsonschema, which is asked where, compares them pairwise).

`elicit-bomb`: on `notifications/initialized`, six `elicitation/create` requests whose
requestedSchema is a doubling `allOf` chain 26 deep (2 KB; 2^26 merges for a form builder
without a budget), answered or not.

Tasks (2025-11-25): `go` called as a task returns one, working. `task-asks`: every tasks/get is
answered only after the server's own elicitation/create was (the task is then completed).
`task-huge-poll`: the task's pollInterval is a 400-digit integer. `lone-surrogates`: unpaired
surrogates in a tool's, a resource's, a template's and a prompt's names and URIs, and in the URI
of a resource link `go` returns.
"""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "garbage"
OUT = sys.stdout.buffer
FLOOD = int(sys.argv[2]) if MODE == "flood" and len(sys.argv) > 2 else 100_000  # flood [COUNT]
STDERR_FLOOD = 20_000
HUGE = "x" * 3_000_000  # megabytes of text where a page shows a line or two
DEPTH = int(sys.argv[2]) if MODE == "deep" and len(sys.argv) > 2 else 1800  # deep [DEPTH]


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
        OUT.write(b'this is not json\n{"jsonrpc": "2.0", "id": \n\n[1, 2\n')
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
        pass  # never answers this call; ping still works
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
        write({"jsonrpc": "2.0", "result": {"content": []}})  # no id at all
        write(result(rid, "first"))
        write(result(rid, "duplicate"))  # the same id again
    elif MODE == "jsonrpc":
        write({"jsonrpc": "1.0", "id": rid, "result": {"content": [{"type": "text", "text": "old"}]}})
    elif MODE == "escapes":
        # Valid JSON, hostile text: unpaired surrogates, NUL as an escape and as a raw byte.
        write(
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
            b'"data":"lone \\ud800 nul \\u0000 end"}}'
        )
        write(b"raw NUL \x00 here")
        write(
            b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done \\udc00 \\u0000"}]}}'
            % json.dumps(rid).encode()
        )
    elif MODE == "huge":
        write({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": HUGE}})
        write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "failed: " + HUGE}})
    elif MODE == "deep":
        # JSON nested DEPTH levels: a log message, then the result (nested too when a parser can
        # read it at all), then a plain notification that must be saved after them.
        nest = b"[" * DEPTH + b"]" * DEPTH
        write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":' + nest + b"}}")
        meta = nest if DEPTH <= 5000 else b"0"
        write(
            b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"deep done"}],'
            b'"structuredContent":{"deep":%s}}}' % (json.dumps(rid).encode(), meta)
        )
        write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after deep"}}')
    elif MODE == "redos":
        # A structuredContent that a backtracking engine needs minutes to check against the
        # tool's outputSchema pattern ^(a+)+$.
        write(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "content": [{"type": "text", "text": "redos done"}],
                    "structuredContent": {"s": "a" * 40 + "!"},
                },
            }
        )
    elif MODE in BOMBS:
        write(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"content": [{"type": "text", "text": f"{MODE} done"}], "structuredContent": BOMBS[MODE][1]},
            }
        )
    elif MODE == "endless":
        i = 0
        while True:  # until killed
            OUT.write(b"\n".join(note(i + k) for k in range(1000)) + b"\n")
            OUT.flush()
            i += 1000


BOMB_DEPTH = 60
BOMBS = {  # mode: (outputSchema, structuredContent)
    "schema-bomb": (
        {
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/a0"}},
            "$defs": {
                **{
                    f"a{i}": {"allOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]}
                    for i in range(BOMB_DEPTH)
                },
                f"a{BOMB_DEPTH}": {"type": "integer"},
            },
        },
        {"n": 1},
    ),
    "unique-bomb": (
        {"type": "object", "properties": {"rows": {"type": "array", "uniqueItems": True}}},
        {"rows": [{"i": i} for i in range(20_000)] + [{"i": 0}]},
    ),
}
ELICIT_DEPTH = 26
ELICIT_BOMB = {
    "type": "object",
    "properties": {"answer": {"$ref": "#/$defs/e0"}},
    "$defs": {
        **{
            f"e{i}": {"allOf": [{"$ref": f"#/$defs/e{i + 1}"}, {"$ref": f"#/$defs/e{i + 1}"}]}
            for i in range(ELICIT_DEPTH)
        },
        f"e{ELICIT_DEPTH}": {"type": "object", "properties": {"x": {"type": "string"}}},
    },
}
TASKS = MODE.startswith("task-")
CAPABILITIES: dict = {"tools": {}}
if TASKS:
    CAPABILITIES["tasks"] = {"requests": {"tools": {"call": {}}}}
if MODE == "lone-surrogates":
    CAPABILITIES.update(resources={}, prompts={})
if MODE == "elicit-bomb":
    CAPABILITIES = {}
LONE = b"lone \\ud800 end"  # the JSON escape of an unpaired surrogate


def task(status: str) -> bytes:
    poll = b"1" + b"0" * 400 if MODE == "task-huge-poll" else b"100"
    return (
        b'{"taskId":"T1","status":"%s","statusMessage":"now %s","pollInterval":%s,'
        b'"createdAt":"2025-11-25T10:00:00Z","ttl":600000}' % (status.encode(), status.encode(), poll)
    )


def lone_surrogates(method: str, rid: object) -> bool:
    """Lists whose names and URIs hold an unpaired surrogate (`lone-surrogates`)."""
    lists = {
        "tools/list": b'{"tools":[{"name":"go","inputSchema":{"type":"object"}},'
        b'{"name":"%s","inputSchema":{"type":"object"}}]}' % LONE,
        "resources/list": b'{"resources":[{"uri":"file:///%s","name":"%s"}]}' % (LONE, LONE),
        "resources/templates/list": b'{"resourceTemplates":[{"uriTemplate":"file:///{x}%s","name":"t"}]}' % LONE,
        "prompts/list": b'{"prompts":[{"name":"%s"}]}' % LONE,
    }
    if method == "tools/call":
        write(
            b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"linked"},'
            b'{"type":"resource_link","uri":"file:///%s","name":"link"}]}}' % (json.dumps(rid).encode(), LONE)
        )
    elif method in lists:
        write(b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(rid).encode(), lists[method]))
    else:
        return False
    return True


def main() -> None:
    asks = 0
    pending_get: object = None  # task-asks: the tasks/get answered once the question is
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        huge = HUGE if MODE == "huge" else ""
        if MODE == "lone-surrogates" and lone_surrogates(method, rid):
            continue
        if method is None and rid == f"ask-{asks}" and pending_get is not None:
            write(b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(pending_get).encode(), task("completed")))
            pending_get = None
        elif method == "initialize":
            write(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": msg["params"]["protocolVersion"],
                        "capabilities": CAPABILITIES,
                        "serverInfo": {"name": f"misbehaving-{MODE}{huge}", "version": "0"},
                        "instructions": huge,
                    },
                }
            )
        elif method == "notifications/initialized" and MODE == "elicit-bomb":
            for i in range(6):
                write(
                    {
                        "jsonrpc": "2.0",
                        "id": f"bomb-{i}",
                        "method": "elicitation/create",
                        "params": {"message": f"bomb {i}", "requestedSchema": ELICIT_BOMB},
                    }
                )
        elif TASKS and method == "tools/call" and "task" in (msg.get("params") or {}):
            write(b'{"jsonrpc":"2.0","id":%s,"result":{"task":%s}}' % (json.dumps(rid).encode(), task("working")))
        elif TASKS and method == "tasks/get" and MODE == "task-asks":
            asks += 1
            pending_get = rid
            write(
                {
                    "jsonrpc": "2.0",
                    "id": f"ask-{asks}",
                    "method": "elicitation/create",
                    "params": {
                        "message": f"question {asks} before the task's status",
                        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                    },
                }
            )
        elif TASKS and method == "tasks/get":
            write(b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(rid).encode(), task("completed")))
        elif TASKS and method == "tasks/result":
            write(result(rid, "task result"))
        elif method == "tools/list":
            tool = {"name": "go", "description": f"misbehaves: {MODE}{huge}", "inputSchema": {"type": "object"}}
            if MODE == "redos":
                tool["outputSchema"] = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
            elif MODE in BOMBS:
                tool["outputSchema"] = BOMBS[MODE][0]
            write({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{**tool, "title": huge} if huge else tool]}})
        elif method == "ping":
            write({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/call":
            misbehave(rid)
        elif rid is not None:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
