"""The server check against peers: each check made to fail by the fault peer (tests/peers/
check_faults.py), and full runs against server-everything and the SDK peers with no fail."""

from __future__ import annotations

import sys
import time

import pytest

from playground.mcp.check import CheckOptions, Report, Runner
from playground.mcp.check.result import CheckResult
from playground.mcp.config import ServerConfig
from playground.mcp.connect import open_client
from playground.mcp.events import Tap, TranscriptEvent
from tests.conftest import PEERS

FAULTS = [sys.executable, str(PEERS / "check_faults.py")]
SDK = [sys.executable, str(PEERS / "sdk_server.py"), "stdio"]
MISBEHAVING = [sys.executable, str(PEERS / "misbehaving.py")]
HOSTILE = [sys.executable, str(PEERS / "hostile_server.py"), "stdio"]
WIRE = "wire: the server's frames"


async def check(
    config: ServerConfig, call: tuple[str, ...] = (), timeout: float = 3.0, **options: float
) -> tuple[Report, list[TranscriptEvent]]:
    tap = Tap()
    events: list[TranscriptEvent] = []
    tap.subscribe(events.append)
    runner = Runner(tap, CheckOptions(call_tools=list(call), timeout=timeout, call_timeout=timeout, **options))
    client = await open_client(config, tap=tap)
    try:
        report = await runner.run(client, config, lambda changed, probe_tap: open_client(changed, tap=probe_tap))
    finally:
        await client.close()
    return report, events


def stdio(cmd: list[str], era: str = "legacy", timeout: float = 10.0) -> ServerConfig:
    return ServerConfig(transport="stdio", command=cmd[0], args=cmd[1:], era=era, timeout=timeout)  # type: ignore[arg-type]


def faulty(fault: str, era: str = "legacy") -> ServerConfig:
    return stdio([*FAULTS, fault], era)


def row(report: Report, name: str) -> CheckResult:
    found = [r for r in report.rows if r.name == name]
    assert len(found) == 1, f"{name!r} in {[r.name for r in report.rows]}"
    return found[0]


def cited(events: list[TranscriptEvent], result: CheckResult) -> list[TranscriptEvent]:
    by_seq = {e.seq: e for e in events}
    assert all(s in by_seq for s in result.seqs), "a row cites a line that is not in the transcript"
    return [by_seq[s] for s in result.seqs]


def sent_methods(events: list[TranscriptEvent]) -> list[str]:
    return [e.method for e in events if e.dir == "send" and e.method]


def no_fail(report: Report, expected: dict[str, str] | None = None) -> None:
    """No row fails but the `expected` ones (name -> a part of the reason: genuine findings)."""
    expected = expected or {}
    failing = {r.name: r.reason for r in report.rows if r.status == "fail"}
    assert set(failing) == set(expected), failing
    for name, part in expected.items():
        assert part in failing[name]
    assert report.finished and report.rows[-1].name == "timing"


# --- each check, made to fail --------------------------------------------------------------

FAULT_CASES = [
    # (fault, era, tools ticked, row, a part of its reason)
    (
        "refuse-older",
        "legacy",
        (),
        "handshake: legacy, older version 2025-06-18",
        "initialize offering 2025-06-18 failed",
    ),
    ("echo-version", "legacy", (), "handshake: legacy, unknown newer version 2099-12-31", "the server echoed it"),
    ("modern-hang-older", "legacy", (), "handshake: modern, older version 2025-11-25", "no answer within 3 s"),
    ("modern-wrong-error", "legacy", (), "handshake: modern, unknown newer version 2099-12-31", "error -32602"),
    (
        "modern-accepts-any",
        "legacy",
        (),
        "handshake: modern, unknown newer version 2099-12-31",
        "as if it implemented it",
    ),
    ("pagination-loop", "legacy", (), "pagination: tools/list", "gave cursor 'again' again: the pages loop"),
    ("pagination-duplicates", "legacy", (), "pagination: tools/list", "listed more than once (name): 'go'"),
    ("tool-names", "legacy", (), "tools: names", "a tool has name '': every tool needs a non-empty string name"),
    (
        "input-schema-type",
        "legacy",
        (),
        "tools: input schemas",
        "stringy: inputSchema has type 'string'; MCP requires type \"object\"",
    ),
    (
        "invalid-schema",
        "legacy",
        (),
        "tools: input schemas",
        "broken: inputSchema is not a valid JSON Schema (2020-12) at /properties/a/type",
    ),
    (
        "bad-output-schema",
        "legacy",
        (),
        "tools: output schemas",
        "badout: outputSchema is not a valid JSON Schema (2020-12) at /required",
    ),
    ("bad-description", "legacy", (), "tools: descriptions", "numbered: description is int, not a string"),
    ("bad-annotations", "legacy", (), "tools: annotations", "hinted: readOnlyHint is 'yes', not a boolean"),
    (
        "bad-description",
        "legacy",
        (),
        "schema: answers",
        "tools/list (ListToolsResult): /result/tools/2/description 42 is not of type 'string'",
    ),
    (
        "advertised-unanswered",
        "legacy",
        (),
        "capabilities: advertised methods answer",
        "advertises `prompts` but prompts/list got -32601",
    ),
    (
        "undeclared-prompts",
        "legacy",
        (),
        "capabilities: unadvertised methods get -32601",
        "prompts/list offered 1 item(s), but `prompts` is not advertised: servers that support prompts MUST declare",
    ),
    (
        "structured-mismatch",
        "legacy",
        ("go",),
        "tools/call: go",
        "structuredContent does not match the outputSchema: /n",
    ),
    ("call-error", "legacy", ("go",), "tools/call: go", 'called with {"n": 1}: error -32602'),
    # The call's row and the schema's agree (issue 31: "tools/call: go PASS" beside "schema: answers FAIL").
    (
        "text-without-text",
        "legacy",
        ("go",),
        "tools/call: go",
        "the result breaks the 2025-11-25 schema (CallToolResult): /result/content/0",
    ),
    ("text-without-text", "legacy", ("go",), "schema: answers", "tools/call (CallToolResult): /result/content/0"),
    ("read-fails", "legacy", (), "resources: read", "'fault://one': error -32603: could not read"),
    (
        "bad-template",
        "legacy",
        (),
        "resources: templates",
        "is not an RFC 6570 URI template: an expression is not closed",
    ),
    (
        "empty-unknown",
        "modern",
        (),
        "resources: unknown URI",
        "an empty contents array for a resource that does not exist",
    ),
    ("prompt-fails", "legacy", (), "prompts: get", "'hello': error -32603"),
    (
        "unknown-method-code",
        "legacy",
        (),
        "errors: unknown method",
        "got error -32603: internal error (expected -32601",
    ),
    (
        "invalid-params-result",
        "legacy",
        (),
        "errors: invalid params",
        "tools/call without a name: a result, as if nothing were wrong",
    ),
    ("accepts-bad-args", "legacy", ("go",), "errors: invalid params", "go with 'n' given str 'not a number'"),
    ("ping-fails", "legacy", (), "ping", "error -32603: ping broke"),
    ("ping-extra", "legacy", (), "ping", "not the empty result ping MUST answer with (members: pong)"),
    ("hang-ping", "legacy", (), "ping", "no answer within 3 s"),
    ("hang-ping", "legacy", (), "timing", "1 request(s) got no answer in time"),
    ("setlevel-fails", "legacy", (), "logging/setLevel", "`logging` is advertised, but setLevel got error -32603"),
]


@pytest.mark.parametrize("fault,era,call,name,reason", FAULT_CASES, ids=[f"{c[0]}-{c[3]}" for c in FAULT_CASES])
async def test_each_check_fails_on_its_fault(fault, era, call, name, reason):
    report, events = await check(faulty(fault, era), call)
    result = row(report, name)
    assert result.status == "fail", result
    assert reason in result.reason
    assert result.seqs and cited(events, result)
    assert report.finished and report.rows[-1].name == "timing"


async def test_shoulds_are_warnings_and_an_empty_result_may_carry_meta():
    report, _ = await check(faulty("answers-unadvertised,ping-meta"))
    unadvertised = row(report, "capabilities: unadvertised methods get -32601")
    assert unadvertised.status == "warn"  # "Both parties SHOULD respect capability negotiation"
    assert "logging/setLevel answered with a result, but `logging` is not advertised" in unadvertised.reason
    ping = row(report, "ping")
    assert ping.status == "pass" and ping.reason == "an empty result (with _meta)"


def test_over_http_an_unsupported_version_error_must_come_with_400():
    from playground.mcp.check.handshake import judge_modern
    from playground.mcp.check.probe import Answer
    from playground.mcp.jsonrpc import JsonRpcError

    def answer(status):
        error = JsonRpcError(-32022, "Unsupported protocol version", {"supported": ["2026-07-28"]})
        return Answer("server/discover", error=error, http_status=status)

    assert judge_modern("2099-12-31", answer(400), older=False, http=True)[0] == "pass"
    assert judge_modern("2099-12-31", answer(None), older=False, http=False)[0] == "pass"  # stdio: no status
    status, reason = judge_modern("2099-12-31", answer(None), older=False, http=True)
    assert status == "fail" and "-32022 with a success status (2xx); over HTTP it MUST come with 400" in reason
    status, reason = judge_modern("2099-12-31", answer(422), older=False, http=True)
    assert status == "fail" and "-32022 with HTTP 422" in reason


def test_over_modern_http_what_is_not_implemented_must_get_404_and_32601():
    """2026-07-28 Streamable HTTP: "If the server does not implement the requested RPC method, it
    MUST respond with 404 Not Found and a JSON-RPC error with code -32601"; elsewhere -32601 for
    an unadvertised capability is a SHOULD."""
    from types import SimpleNamespace

    from playground.mcp.check.capabilities import judge_unadvertised
    from playground.mcp.check.probe import Answer
    from playground.mcp.jsonrpc import JsonRpcError

    def judge(modern_http, code, status=None, result=None):
        ctx = SimpleNamespace(modern_http=modern_http)
        error = JsonRpcError(code, "no") if code is not None else None
        return judge_unadvertised(ctx, "prompts", "prompts/list", Answer("prompts/list", result, error, status))

    assert judge(True, -32601, 404) is None and judge(False, -32601) is None
    status, reason = judge(True, -32601)
    assert (
        status == "fail" and "-32601 with a success status (2xx); over Streamable HTTP it MUST come with 404" in reason
    )
    assert judge(False, -32603)[0] == "warn"
    status, reason = judge(True, -32603, 500)
    assert status == "fail" and "MUST get 404 Not Found and -32601" in reason
    assert judge(False, None, result={"prompts": []})[0] == "warn"  # answers, offers nothing: a SHOULD
    assert judge(False, None, result={"prompts": [{"name": "p"}]})[0] == "fail"


async def test_the_fault_free_peer_passes_every_check_in_both_eras():
    for era in ("legacy", "modern"):
        report, _ = await check(faulty("none", era), ("go", "other"))
        no_fail(report)
        assert not [r for r in report.rows if r.status == "warn"], report.rows


async def test_a_row_cites_the_requests_it_judged_and_their_answers():
    report, events = await check(faulty("ping-fails"))
    lines = cited(events, row(report, "ping"))
    request = next(e for e in lines if e.dir == "send")
    assert request.method == "ping"
    assert any(e.dir == "recv" and e.reply_to == request.seq for e in lines)
    handshake = cited(events, row(report, "handshake: legacy, older version 2025-06-18"))
    offered = [e.message["params"]["protocolVersion"] for e in handshake if e.method == "initialize"]
    assert offered == ["2025-06-18"]


async def test_the_version_probes_do_not_change_the_version_the_session_is_linted_against():
    from playground.mcp.lint import FrameLinter

    linter = FrameLinter()
    picks = []
    tap = Tap()
    events: list[TranscriptEvent] = []
    tap.subscribe(events.append)
    tap.subscribe(lambda event: picks.extend(linter.pick([event])))
    config = faulty("none", "modern")
    client = await open_client(config, tap=tap)
    try:
        report = await Runner(tap, CheckOptions(timeout=3.0)).run(
            client, config, lambda changed, probe_tap: open_client(changed, tap=probe_tap)
        )
    finally:
        await client.close()
    probes = {(p.event.data or {}).get("connection") for p in picks} - {None}
    assert probes == {"check probe 1", "check probe 2", "check probe 3"}
    # The legacy probe offered 2025-06-18, then the modern one named 2025-11-25 in _meta: the
    # session's own frames, before and after, are checked as the 2026-07-28 they are.
    ours = [p for p in picks if not (p.event.data or {}).get("connection")]
    assert ours and {p.version for p in ours} == {"2026-07-28"}
    offered = [
        (p.event.message["params"]["protocolVersion"], p.version) for p in picks if p.event.method == "initialize"
    ]
    assert offered == [("2025-06-18", "2025-06-18"), ("2099-12-31", "2025-11-25")]  # each probe: its own
    last_probe = max(p.event.seq for p in picks if (p.event.data or {}).get("connection"))
    assert any(p.event.seq > last_probe for p in ours)
    # What the check sends invalid on purpose has its problems shown, marked, and not counted.
    from playground.mcp.lint import apply, check_all

    reports, _ = check_all(picks)
    assert sum(apply(p, r) for p, r in zip(picks, reports)) == 0
    flagged = [p.event for p in picks if p.event.schema_problems]
    assert {e.method for e in flagged} == {"server/discover", "mcp-playground-check/no-such-method", "tools/call"}
    assert all(e.dir == "send" and e.schema_lint["on_purpose"].startswith("the server check: ") for e in flagged)
    assert [e.schema_lint["on_purpose"] for e in flagged if e.method == "tools/call"] == [
        "the server check: a tools/call without a name"
    ]
    for result in report.rows:  # the probes' lines are the session's transcript's
        cited(events, result)


async def test_tools_are_called_only_when_ticked_with_arguments_from_their_schema():
    report, events = await check(faulty("none"))
    called = [e.message["params"].get("name") for e in events if e.method == "tools/call"]
    assert "go" not in called and "other" not in called
    assert row(report, "tools/call").status == "skip"
    report, events = await check(faulty("none"), ("go",))
    arguments = [
        e.message["params"]["arguments"]
        for e in events
        if e.method == "tools/call" and e.message["params"].get("name") == "go"
    ]
    assert arguments[0] == {"n": 1}  # valid by the schema: the call itself
    assert arguments[1] == {"n": "not a number"}  # the invalid-params probe
    assert row(report, "tools/call: go").status == "pass"


def sent_calls(events: list[TranscriptEvent]) -> list[str]:
    return [
        e.message["params"].get("name")
        for e in events
        if e.dir == "send" and e.method == "tools/call" and isinstance(e.message["params"], dict)
    ]


async def test_probes_of_what_does_not_exist_never_use_a_name_the_server_lists():
    """A server listing a tool named as the unknown-tool probe's name (and a prompt, a resource
    likewise): with nothing ticked the check calls no listed tool — that one's side effect (a
    stderr line) never happens — and the probes still get their "unknown" answers."""
    report, events = await check(faulty("lists-probe-names"))
    listed = {
        t["name"]
        for e in events
        if e.dir == "recv" and isinstance(e.message, dict)
        for t in (e.message.get("result") or {}).get("tools") or []
    }
    assert "mcp-playground-check-no-such-tool" in listed  # the peer lists the probe's name
    called = sent_calls(events)
    assert called and not set(called) & listed, called  # the probes: names nobody lists
    assert not [e for e in events if e.dir == "stderr" and "RAN" in (e.text or "")]
    invalid = row(report, "errors: invalid params")
    assert invalid.status == "pass" and "tools/call of an unknown tool: -32602" in invalid.reason
    assert "prompts/get of an unknown prompt: -32602" in invalid.reason
    unknown = row(report, "resources: unknown URI")
    assert unknown.status == "pass" and "mcp-playground-check:///no-such-resource-" in unknown.reason
    no_fail(report)
    report, events = await check(faulty("none"))  # nobody lists it: the plain name
    assert "mcp-playground-check-no-such-tool" in sent_calls(events)


@pytest.mark.timeout(60)  # bounded by its deadline: before it, progress kept the call (and the check) waiting
async def test_a_tool_that_sends_progress_forever_ends_at_the_checks_deadline():
    report, events = await check(faulty("progress-forever"), ("go",), timeout=1.0, deadline=3.0)
    names = [r.name for r in report.rows]
    assert names[-3:] == ["deadline", WIRE, "timing"] and report.finished
    assert "pagination: tools/list" in names and "ping" not in names  # the rows done so far, no more
    deadline = row(report, "deadline")
    assert deadline.status == "fail" and deadline.reason == (
        "the check ran out of its deadline of 3 s during tools/call of go, which was cancelled; "
        "the remaining checks did not run"
    )
    call, cancel = [e for e in cited(events, deadline) if e.dir == "send"]
    assert (call.method, call.message["params"]["name"]) == ("tools/call", "go")
    assert cancel.method == "notifications/cancelled" and cancel.message["params"] == {
        "requestId": call.message["id"],
        "reason": "the check ran out of its deadline of 3 s",
    }
    assert [e for e in events if e.method == "notifications/progress" and call.seq < e.seq < cancel.seq]
    assert cancel.t - call.t > 1.0  # past the call's own timeout: progress kept resetting it
    assert report.tools_called == ["go"] and report.failed


def test_the_page_s_check_has_the_default_deadline():
    from playground.mcp.check.context import CHECK_DEADLINE
    from playground.mcp.check.runner import options_from

    assert CHECK_DEADLINE == 120
    assert options_from({"call_tools": ["go"]}, session_timeout=60).deadline == CHECK_DEADLINE
    assert options_from({"deadline": 5}).deadline == 5
    assert options_from({"deadline": -1}).deadline == options_from({"deadline": True}).deadline == CHECK_DEADLINE


async def test_a_server_without_tools_or_prompts_skips_the_invalid_params_probe():
    report, _ = await check(faulty("resources-only"), ("go",))
    invalid = row(report, "errors: invalid params")
    assert invalid.status == "skip" and "nothing to send invalid params to" in invalid.reason
    assert report.tools_not_called == [("go", "the server does not list it")] and not report.tools_called
    no_fail(report)


async def test_a_crash_is_a_fail_citing_what_the_server_printed_and_the_rest_runs_on_a_new_connection():
    """A server crashing on one probe got "connection FAIL … exited with code 3", no link to what it
    printed, and none of the remaining checks (issue 31)."""
    report, events = await check(faulty("crash-on-read"))
    names = [r.name for r in report.rows]
    lost = row(report, "connection")
    assert lost.status == "fail" and "connection closed" in lost.reason
    assert lost.reason.endswith("the remaining checks run on a new connection")
    printed = [e for e in cited(events, lost) if e.dir == "stderr"]
    assert [e.text for e in printed] == ["fault: crashing in the middle of resources/read"]
    assert names.index("connection") < names.index("ping") and row(report, "ping").status == "pass"
    again = [e for e in events if (e.data or {}).get("connection", "").startswith("check reconnection")]
    assert any(e.method == "initialize" for e in again) and any(e.method == "ping" for e in again)
    assert names[-1] == "timing"


async def test_a_server_that_crashes_again_ends_the_check():
    report, events = await check(faulty("crash-on-read,crash-on-ping"))
    again = row(report, "connection: again")
    assert again.status == "fail" and again.reason.endswith("the remaining checks did not run")
    assert [e.text for e in cited(events, again) if e.dir == "stderr"] == ["fault: crashing on ping"]
    names = [r.name for r in report.rows]
    assert names.index("connection") < names.index("connection: again") and "schema: answers" not in names


async def test_hostile_numbers_names_and_arguments_are_findings_not_crashes():
    report, events = await check(
        faulty("hostile-numbers,tool-name-list,prompt-arguments-number"), ("tiny", "huge", "go")
    )
    assert not [r for r in report.rows if r.name.endswith(": crashed")], report.rows
    assert row(report, "tools/call: tiny").status == "pass"  # multipleOf 5e-324: 1 is a multiple
    huge = row(report, "tools/call: huge")  # 1e308 / 1e-10 is infinite: no multiple made
    assert huge.status == "warn" and "could not make arguments" in huge.reason and "not called" in huge.reason
    assert report.tools_called == ["tiny", "go"]
    assert report.tools_not_called == [("huge", "no arguments that satisfy its inputSchema could be made")]
    assert "Tools called: tiny, go. Ticked, not called: huge (no arguments" in report.tools_line()
    assert "a tool has name []" in row(report, "tools: names").reason
    assert "'hello': arguments is not a list of named arguments" in row(report, "prompts: get").reason
    assert row(report, "capabilities: advertised methods answer").status == "pass"
    assert report.finished and report.rows[-1].name == "timing"


async def test_a_group_that_crashes_is_a_fail_row_and_the_next_groups_run(monkeypatch, caplog):
    from playground.mcp.check import runner, utilities

    async def broken(ctx):
        await ctx.ask("ping")
        raise KeyError("surprise")

    monkeypatch.setattr(runner, "GROUPS", tuple(broken if g is utilities.run else g for g in runner.GROUPS))
    broken.__module__ = utilities.__name__
    broken.__name__ = "run"
    report, events = await check(faulty("none"))
    crashed = row(report, "utilities: crashed")
    assert crashed.status == "fail" and "the check crashed: KeyError: 'surprise'" in crashed.reason
    assert [e.method for e in cited(events, crashed) if e.dir == "send"] == ["ping"]  # what it was doing
    names = [r.name for r in report.rows]
    assert names.index("utilities: crashed") < names.index("schema: answers") and names[-1] == "timing"
    assert report.finished and "server check: the utilities checks crashed" in caplog.text


async def test_a_hanging_server_stops_the_check_instead_of_waiting_on_every_request():
    started = time.monotonic()
    report, _ = await check(faulty("hang"), ("go",), timeout=1.0)
    assert report.tools_called == [] and report.tools_not_called == [
        ("go", "the check ended before it got to the calls")
    ]
    stopped = row(report, "connection")
    assert stopped.status == "fail" and "stopped answering: 3 requests in a row" in stopped.reason
    assert row(report, "pagination: tools/list").status == "fail"
    assert "no answer within 1 s" in row(report, "pagination: tools/list").reason
    assert time.monotonic() - started < 30


# --- hostile peers: specific findings, in bounded time ----------------------------------------

HOSTILE_CASES = [
    # (misbehaving.py's mode and arguments: it misbehaves when `go` is called; [(row, status, a part of its reason)])
    (("garbage",), [(WIRE, "fail", "frame(s) are not JSON (Expecting value")]),
    (("utf8",), [(WIRE, "fail", "frame(s) are not valid UTF-8: JSON-RPC messages MUST be UTF-8 encoded")]),
    (("ids",), [(WIRE, "fail", "response(s) answer no request of ours (id 999, unknown or already answered)")]),
    (("jsonrpc",), [(WIRE, "fail", "break JSON-RPC 2.0 (jsonrpc field is '1.0', expected '2.0')")]),
    (("flood", "5000"), [(WIRE, "fail", "notifications/message, but `logging` is not advertised")]),
    (("deep", "1800"), [(WIRE, "fail", "frame(s) nested deeper than the playground reads (cut where shown)")]),
    (
        ("huge",),
        [
            (WIRE, "warn", "frame(s) larger than the transcript keeps"),
            ("tools/call: go", "warn", "called with {}: error -32000: failed: xxxx"),
        ],
    ),
    (("redos",), [("tools/call: go", "fail", "structuredContent does not match the outputSchema: /s:")]),
    (
        ("crash",),
        [("connection", "fail", "the connection closed during tools/call (server process exited with code 3)")],
    ),
    # A flood that never ends: the check stops once three requests in a row got no answer, and
    # still judges the frames it saw.
    (
        ("endless",),
        [
            ("connection", "fail", "the server stopped answering: 3 requests in a row"),
            (WIRE, "fail", "notifications/message, but `logging` is not advertised"),
        ],
    ),
    (("lone-surrogates",), [("tools: names", "warn", "'lone \\ud800 end' uses")]),
]


@pytest.mark.timeout(60)  # bounded: an endless flood or a crash ends the check, never hangs it
@pytest.mark.parametrize("mode,expected", HOSTILE_CASES, ids=[c[0][0] for c in HOSTILE_CASES])
async def test_misbehaving_servers_get_specific_findings_in_bounded_time(mode, expected):
    report, events = await check(stdio([*MISBEHAVING, *mode]), ("go",), timeout=1.0)
    for name, status, reason in expected:
        result = row(report, name)
        assert (result.status, reason in result.reason) == (status, True), result
        assert result.seqs and cited(events, result)
        assert len(result.reason) <= 2000  # a 3 MB error message is quoted, cut
    assert not [r for r in report.rows if r.name.endswith(": crashed")], report.rows
    assert report.finished and [r.name for r in report.rows][-2:] == [WIRE, "timing"]
    if mode[0] == "flood":  # every notification of every flood counted: one flood a tools/call
        calls = sum(1 for e in events if e.dir == "send" and e.method == "tools/call")
        assert f"{calls * int(mode[1]):,} notifications/message" in row(report, WIRE).reason


async def test_the_hostile_server_s_payloads_are_findings_quoted_as_text():
    """The SDK server with script payloads in every string: its tool name and error messages are
    quoted in the rows as they came (the page escapes them), and its log message without the
    `logging` capability fails the wire check."""
    report, _ = await check(stdio(HOSTILE, timeout=15), ("echo", "fail"), timeout=15)
    assert row(report, WIRE).status == "fail"
    assert "1 notifications/message, but `logging` is not advertised" in row(report, WIRE).reason  # echo logs
    assert "'named <script>window.__pwned=1</script>…' is 161 characters" in row(report, "tools: names").reason
    failed = row(report, "tools/call: fail")
    assert (
        failed.status == "warn"
        and "error -32000: failure <script>window.__pwned=1</script><img src=x onerror=" in failed.reason
    )
    assert report.tools_called == ["echo", "fail"]
    assert not [r for r in report.rows if r.name.endswith(": crashed")]


# --- real servers: no fail -----------------------------------------------------------------


async def test_server_everything_stdio(everything_cmd):
    report, events = await check(
        stdio(everything_cmd, timeout=15), ("echo", "get-sum", "get-structured-content"), timeout=15
    )
    no_fail(report)
    # It speaks the legacy era only: the modern probes are skipped, saying why.
    modern = row(report, "handshake: modern, unknown newer version 2099-12-31")
    assert modern.status == "skip" and "does not speak the modern era" in modern.reason
    assert row(report, "tools/call: get-structured-content").status == "pass"
    # Genuine findings, SHOULD-level (warnings): a tools/call without a name gets -32603, and an
    # unknown tool an isError result, where Tools › Error Handling lists protocol errors.
    invalid = row(report, "errors: invalid params")
    assert invalid.status == "warn" and "tools/call without a name: error -32603" in invalid.reason


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_sdk_peer_stdio(era):
    report, _ = await check(stdio(SDK, era, timeout=15), ("add", "weather", "echo"), timeout=15)
    no_fail(report)
    assert row(report, "handshake: modern, unknown newer version 2099-12-31").status == "pass"
    assert row(report, "tools/call: weather").reason.endswith("structuredContent matches the outputSchema")


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_sdk_peer_streamable_http(sdk_http, era):
    config = ServerConfig(transport="http", url=sdk_http, era=era, timeout=15.0)  # type: ignore[arg-type]
    report, _ = await check(config, ("add", "weather"), timeout=15.0)
    no_fail(report)
    assert "over streamable-http" in row(report, "handshake: this session").reason
    for name in ("handshake: legacy, older version 2025-06-18", "handshake: modern, unknown newer version 2099-12-31"):
        assert row(report, name).status == "pass", row(report, name)
    # Over HTTP the SDK serves a request whose MCP-Protocol-Version names a handshake-era version as
    # legacy traffic (400 "Missing session ID"), where stdio answers -32022: a warning, not a fail.
    older = row(report, "handshake: modern, older version 2025-11-25")
    assert older.status == "warn" and "Missing session ID" in older.reason


def test_a_schema_problem_names_its_place_as_a_json_pointer():
    from playground.mcp.check import schemas

    status, reason = schemas.problem({"type": "object", "properties": {"a/b~": {"type": "nope"}}}, "t: inputSchema")
    assert status == "fail" and "(2020-12) at /properties/a~1b~0/type:" in reason


async def test_a_ticked_tool_without_an_input_schema_is_said_to_have_none():
    report, _ = await check(faulty("no-input-schema"), ("bare",))
    called = row(report, "tools/call: bare")
    assert called.status == "warn" and "(the tool has no inputSchema (required))" in called.reason
    assert row(report, "tools: input schemas").reason.startswith("bare: no inputSchema (required)")
