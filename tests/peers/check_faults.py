"""A stdio MCP server that answers well, except for the faults named in argv[1] (comma-separated):
one misbehaving peer for every check of the server check (playground/mcp/check/).

Raw JSON-RPC on purpose: most of these faults (an echoed unknown version, a cursor that loops,
a wrong error code, a crash mid-request) are below what an SDK server lets one write. It speaks
both eras: `initialize` (legacy) and `server/discover` plus per-request `_meta` (modern, whose
`_meta` it otherwise ignores).

    python check_faults.py FAULT[,FAULT...]     (or "none")

Faults:
  refuse-older          initialize with any version but the latest gets an error
  echo-version          initialize answers with whatever version was offered
  modern-wrong-error    server/discover for a version it does not speak gets -32602, not -32022
  modern-accepts-any    server/discover answers every version, even unknown ones
  modern-hang-older     server/discover naming a handshake-era version is never answered
  pagination-loop       tools/list hands out the same cursor forever
  pagination-duplicates the second page of tools/list repeats a tool of the first
  tool-names            a tool named "" and one named "two words!"
  input-schema-type     a tool whose inputSchema has type "string"
  invalid-schema        a tool whose inputSchema is not a valid JSON Schema (type "nope")
  bad-output-schema     a tool whose outputSchema is not a valid JSON Schema
  bad-description       a tool whose description is a number
  bad-annotations       a tool whose readOnlyHint is a string
  hostile-numbers       tools whose number bounds overflow arithmetic: `tiny` (multipleOf 5e-324) and
                        `huge` (minimum 1e308, multipleOf 1e-10)
  tool-name-list        a tool whose name is [] (not a string, not even hashable)
  prompt-arguments-number  advertises prompts; the prompt `hello` has "arguments": 1
  advertised-unanswered advertises prompts, answers prompts/list with -32601
  answers-unadvertised  does not advertise logging or completions, answers both (completions with no values)
  undeclared-prompts    does not advertise prompts, yet lists one
  structured-mismatch   the tool `go` returns structuredContent its outputSchema refuses
  text-without-text     the tool `go` returns a text content item without `text` (the schema says required)
  no-input-schema       a tool `bare` without inputSchema
  call-error            tools/call answers valid arguments with -32602
  read-fails            resources/read of a listed resource gets -32603
  bad-template          a resource template that is not RFC 6570 ("{unclosed")
  empty-unknown         resources/read of an unknown URI gets an empty contents array
  prompt-fails          prompts/get of a listed prompt gets -32603
  unknown-method-code   an unknown method gets -32603, not -32601
  invalid-params-result tools/call without a name, or of an unknown tool, gets a plain result
  accepts-bad-args      tools/call of `go` with arguments its schema refuses gets a plain result
  ping-fails            ping gets -32603
  ping-meta             ping gets {"_meta": {...}} (an EmptyResult may carry _meta)
  ping-extra            ping gets {"pong": true}
  hang-ping             ping is never answered
  setlevel-fails        logging/setLevel gets -32603 (logging is advertised)
  crash-on-read         the process exits in the middle of the first resources/read
  crash-on-ping         the process exits on ping
  hang                  nothing after the handshake is answered
  resources-only        advertises resources only; tools/* get -32601
  lists-probe-names     lists a tool, a prompt and a resource named as the check's probes of things that do
                        not exist are (mcp-playground-check-no-such-tool, …): the tool, when called, says
                        "RAN mcp-playground-check-no-such-tool" on stderr (a side effect the check must not cause)
  progress-forever      `go`, called with valid arguments, never answers: it sends notifications/progress
                        every 50 ms (each resets the caller's timeout) until that request is cancelled
"""

from __future__ import annotations

import json
import sys
import threading

FAULTS = set((sys.argv[1] if len(sys.argv) > 1 else "none").split(","))
LATEST = "2025-11-25"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
# The names the server check's probes use for what does not exist (playground/mcp/check/).
PROBE_TOOL, PROBE_PROMPT = "mcp-playground-check-no-such-tool", "mcp-playground-check-no-such-prompt"
PROBE_URI = "mcp-playground-check:///no-such-resource"
PROGRESS_EVERY = 0.05  # seconds between progress-forever's notifications (pacing, not synchronisation)
_OUT = threading.Lock()  # progress-forever writes from a thread of its own too
CANCELLED: dict[str, threading.Event] = {}  # progress-forever: request id -> cancelled


def write(obj: object) -> None:
    with _OUT:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


# The request being answered, when it is a modern one: its result carries what 2026-07-28
# requires of every result (`resultType`) and of cacheable ones (`cacheScope`, `ttlMs`).
MODERN_METHOD: list[str] = []
CACHEABLE = {
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
}


def result(rid: object, value: object) -> None:
    if MODERN_METHOD and isinstance(value, dict):
        value = {"resultType": "complete", **value}
        if MODERN_METHOD[0] in CACHEABLE:
            value = {"cacheScope": "private", "ttlMs": 0, **value}
    write({"jsonrpc": "2.0", "id": rid, "result": value})


def error(rid: object, code: int, message: str, data: object = None) -> None:
    err: dict = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    write({"jsonrpc": "2.0", "id": rid, "error": err})


def capabilities() -> dict:
    caps: dict = {"resources": {}} if "resources-only" in FAULTS else {"tools": {}, "resources": {}}
    if "advertised-unanswered" in FAULTS or "prompt-fails" in FAULTS or "prompt-arguments-number" in FAULTS:
        caps["prompts"] = {}
    if "setlevel-fails" in FAULTS:
        caps["logging"] = {}
    if "lists-probe-names" in FAULTS:
        caps["prompts"] = {}
    return caps


def tools() -> list[dict]:
    go = {
        "name": "go",
        "description": "Adds one to n.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "annotations": {"readOnlyHint": True},
    }
    listed = [go, {"name": "other", "description": "Does nothing.", "inputSchema": {"type": "object"}}]
    if "tool-names" in FAULTS:
        listed += [
            {"name": "", "description": "nameless", "inputSchema": {"type": "object"}},
            {"name": "two words!", "description": "spaced", "inputSchema": {"type": "object"}},
        ]
    if "input-schema-type" in FAULTS:
        listed.append({"name": "stringy", "description": "x", "inputSchema": {"type": "string"}})
    if "invalid-schema" in FAULTS:
        listed.append(
            {
                "name": "broken",
                "description": "x",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "nope"}}},
            }
        )
    if "bad-output-schema" in FAULTS:
        listed.append(
            {
                "name": "badout",
                "description": "x",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object", "required": "n"},
            }
        )
    if "bad-description" in FAULTS:
        listed.append({"name": "numbered", "description": 42, "inputSchema": {"type": "object"}})
    if "bad-annotations" in FAULTS:
        listed.append(
            {
                "name": "hinted",
                "description": "x",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": "yes"},
            }
        )
    if "hostile-numbers" in FAULTS:
        listed += [
            {
                "name": "tiny",
                "description": "x",
                "inputSchema": {
                    "type": "object",
                    "properties": {"x": {"type": "number", "multipleOf": 5e-324}},
                    "required": ["x"],
                },
            },
            {
                "name": "huge",
                "description": "x",
                "inputSchema": {
                    "type": "object",
                    "properties": {"x": {"type": "number", "minimum": 1e308, "multipleOf": 1e-10}},
                    "required": ["x"],
                },
            },
        ]
    if "tool-name-list" in FAULTS:
        listed.append({"name": [], "description": "x", "inputSchema": {"type": "object"}})
    if "no-input-schema" in FAULTS:
        listed.append({"name": "bare", "description": "x"})
    if "lists-probe-names" in FAULTS:
        listed.append({"name": PROBE_TOOL, "description": "Has a side effect.", "inputSchema": {"type": "object"}})
    return listed


def tools_list(rid: object, params: dict) -> None:
    cursor = params.get("cursor")
    if "tools-list-fails" in FAULTS:
        error(rid, -32603, "the tool registry is down")
    elif "pagination-loop" in FAULTS:
        result(rid, {"tools": tools() if cursor is None else [], "nextCursor": "again"})
    elif "pagination-duplicates" in FAULTS:
        if cursor is None:
            result(rid, {"tools": tools(), "nextCursor": "page-2"})
        else:
            result(rid, {"tools": [tools()[0]]})
    else:
        result(rid, {"tools": tools()})


def tools_call(rid: object, params: dict) -> None:
    name = params.get("name")
    args = params.get("arguments") or {}
    if not isinstance(name, str) or name not in {t["name"] for t in tools() if isinstance(t["name"], str)}:
        if "invalid-params-result" in FAULTS:
            result(rid, {"content": [{"type": "text", "text": "sure"}]})
        elif not isinstance(name, str):
            error(rid, -32602, "tools/call needs a name")
        else:
            error(rid, -32602, f"Unknown tool: {name}")
        return
    if "call-error" in FAULTS:
        error(rid, -32602, "no")
        return
    if name == PROBE_TOOL:
        sys.stderr.write(f"RAN {PROBE_TOOL}\n")
        sys.stderr.flush()
    if name == "go":
        n = args.get("n")
        if "progress-forever" in FAULTS and isinstance(n, int) and not isinstance(n, bool):
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            cancelled = CANCELLED.setdefault(json.dumps(rid), threading.Event())
            threading.Thread(target=progress_forever, args=(meta.get("progressToken"), cancelled), daemon=True).start()
            return
        if not isinstance(n, int) or isinstance(n, bool):
            if "accepts-bad-args" in FAULTS:
                result(rid, {"content": [{"type": "text", "text": "took it"}], "structuredContent": {"n": 0}})
            else:
                result(rid, {"content": [{"type": "text", "text": "n must be an integer"}], "isError": True})
            return
        structured = {"n": "not a number"} if "structured-mismatch" in FAULTS else {"n": n + 1}
        item = {"type": "text"} if "text-without-text" in FAULTS else {"type": "text", "text": json.dumps(structured)}
        result(rid, {"content": [item], "structuredContent": structured})
        return
    result(rid, {"content": [{"type": "text", "text": "done"}]})


def progress_forever(token: object, cancelled: threading.Event) -> None:
    """A call that is always nearly done: progress until the client cancels it, no result."""
    step = 0
    while token is not None and not cancelled.wait(PROGRESS_EVERY):
        step += 1
        write(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": step, "message": "almost there"},
            }
        )


RESOURCES = [{"uri": "fault://one", "name": "one"}]
PROBE_RESOURCES = [{"uri": PROBE_URI, "name": "looks missing"}]


def resources_read(rid: object, params: dict) -> None:
    uri = params.get("uri")
    if "crash-on-read" in FAULTS:
        sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(rid)},"result":{{"contents":[')
        sys.stdout.flush()
        sys.stderr.write("fault: crashing in the middle of resources/read\n")
        sys.exit(3)
    if (
        uri == "fault://one"
        or (isinstance(uri, str) and uri.startswith("fault://items/"))
        or ("lists-probe-names" in FAULTS and uri == PROBE_URI)
    ):
        if "read-fails" in FAULTS and uri == "fault://one":
            error(rid, -32603, "could not read")
        else:
            result(rid, {"contents": [{"uri": uri, "text": "content"}]})
    elif "empty-unknown" in FAULTS:
        result(rid, {"contents": []})
    else:
        error(rid, -32602, f"Unknown resource: {uri}", {"uri": uri})


def handle(msg: dict) -> None:
    method, rid = msg.get("method"), msg.get("id")
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    if rid is None:
        if method == "notifications/cancelled":
            CANCELLED.setdefault(json.dumps(params.get("requestId")), threading.Event()).set()
        return  # notifications
    if method == "initialize":
        offered = params.get("protocolVersion")
        if "refuse-older" in FAULTS and offered != LATEST:
            error(rid, -32602, f"only {LATEST}")
            return
        chosen = offered if offered in LEGACY or "echo-version" in FAULTS else LATEST
        result(
            rid,
            {
                "protocolVersion": chosen,
                "capabilities": capabilities(),
                "serverInfo": {"name": "check-faults", "version": "1"},
            },
        )
        return
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    MODERN_METHOD[:] = [str(method)] if meta.get(META_VERSION) == MODERN else []
    if method == "server/discover":
        asked = meta.get(META_VERSION)
        if asked in LEGACY and "modern-hang-older" in FAULTS:
            return
        if asked != MODERN and "modern-accepts-any" not in FAULTS:
            if "modern-wrong-error" in FAULTS:
                error(rid, -32602, "bad version")
            else:
                error(rid, -32022, "Unsupported protocol version", {"supported": [MODERN], "requested": asked})
            return
        result(
            rid,
            {
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": capabilities(),
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "check-faults", "version": "1"}},
            },
        )
        return
    if "hang" in FAULTS:
        return
    if str(method).startswith("tools/") and "tools" not in capabilities():
        error(rid, -32601, f"Method not found: {method}")
    elif method == "tools/list":
        tools_list(rid, params)
    elif method == "tools/call":
        tools_call(rid, params)
    elif method == "resources/list":
        result(rid, {"resources": RESOURCES + (PROBE_RESOURCES if "lists-probe-names" in FAULTS else [])})
    elif method == "resources/templates/list":
        template = "fault://items/{unclosed" if "bad-template" in FAULTS else "fault://items/{id}"
        result(rid, {"resourceTemplates": [{"uriTemplate": template, "name": "items"}]})
    elif method == "resources/read":
        resources_read(rid, params)
    elif (
        method == "prompts/list"
        and ("prompts" in capabilities() or "undeclared-prompts" in FAULTS)
        and "advertised-unanswered" not in FAULTS
    ):
        prompt: dict = {"name": "hello", "description": "Says hello."}
        if "prompt-arguments-number" in FAULTS:
            prompt["arguments"] = 1
        extra = [{"name": PROBE_PROMPT, "description": "Looks missing."}] if "lists-probe-names" in FAULTS else []
        result(rid, {"prompts": [prompt, *extra]})
    elif method == "prompts/get" and "prompts" in capabilities() and "advertised-unanswered" not in FAULTS:
        if params.get("name") not in ("hello", PROBE_PROMPT if "lists-probe-names" in FAULTS else "hello"):
            error(rid, -32602, "Unknown prompt")
        elif "prompt-fails" in FAULTS:
            error(rid, -32603, "could not make the prompt")
        else:
            result(rid, {"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}]})
    elif method == "ping" and "crash-on-ping" in FAULTS:
        sys.stderr.write("fault: crashing on ping\n")
        sys.exit(4)
    elif method == "ping":
        if "hang-ping" in FAULTS:
            return
        if "ping-fails" in FAULTS:
            error(rid, -32603, "ping broke")
        elif "ping-meta" in FAULTS:
            result(rid, {"_meta": {"example.com/took": 1}})
        elif "ping-extra" in FAULTS:
            result(rid, {"pong": True})
        else:
            result(rid, {})
    elif method == "logging/setLevel" and ("logging" in capabilities() or "answers-unadvertised" in FAULTS):
        if "setlevel-fails" in FAULTS:
            error(rid, -32603, "could not set the level")
        else:
            result(rid, {})
    elif method == "completion/complete" and "answers-unadvertised" in FAULTS:
        result(rid, {"completion": {"values": []}})
    elif "unknown-method-code" in FAULTS:
        error(rid, -32603, "internal error")
    else:
        error(rid, -32601, f"Method not found: {method}")


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict):
            handle(msg)


if __name__ == "__main__":
    main()
