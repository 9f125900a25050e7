"""The schema lint (playground/mcp/lint/: definitions, linter, spec_sections): the official
schemas shipped as published, each frame matched to its definition, problems named exactly."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from playground.mcp.events import Tap
from playground.mcp.lint import (
    FrameLinter,
    LintBudget,
    ProcessShare,
    Request,
    apply,
    check,
    check_all,
    definitions,
    spec_sections,
)
from playground.mcp.lint import linter as linter_module
from playground.mcp.lint.linter import MAX_BYTES
from tests.conftest import ROOT

EXAMPLES = ROOT / "tests" / "data" / "mcp-examples"
SPEC_TEXT = Path("/work/shared/mcp-spec")

# The files as published at modelcontextprotocol/modelcontextprotocol b0f60ba (schemas/README.md).
SHA256 = {
    "2024-11-05": "61cea2392d4f284092d09bc84b9ac488c0d5618ac2b38a56942fc5b99fd960ce",
    "2025-03-26": "e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131",
    "2025-06-18": "af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01",
    "2025-11-25": "268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7",
    "2026-07-28": "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203",
}


def test_the_schemas_ship_unmodified_with_their_license():
    assert tuple(SHA256) == definitions.VERSIONS
    assert sorted(p.name for p in definitions.SCHEMAS.iterdir() if p.is_dir()) == list(SHA256)
    for version, digest in SHA256.items():
        assert hashlib.sha256((definitions.SCHEMAS / version / "schema.json").read_bytes()).hexdigest() == digest, (
            version
        )
    license_text = (definitions.SCHEMAS / "LICENSE").read_text()
    assert "Apache License" in license_text and "MIT License" in license_text
    assert "b0f60ba5409db7a6582440a7b473cc0398890f15" in (definitions.SCHEMAS / "README.md").read_text()


def test_each_sender_s_messages_are_found_by_method():
    old, tasks, modern = (
        definitions.schema("2024-11-05"),
        definitions.schema("2025-11-25"),
        definitions.schema("2026-07-28"),
    )
    assert old.requests["recv"] == {
        "ping": "PingRequest",
        "sampling/createMessage": "CreateMessageRequest",
        "roots/list": "ListRootsRequest",
    }
    assert "elicitation/create" in definitions.schema("2025-06-18").requests["recv"]
    assert "elicitation/create" not in definitions.schema("2025-03-26").requests["recv"]
    assert tasks.requests["send"]["tasks/result"] == "GetTaskPayloadRequest"
    assert tasks.notifications["recv"]["notifications/elicitation/complete"] == "ElicitationCompleteNotification"
    # 2026-07-28: no server requests at all; its ClientNotification is written inline.
    assert modern.requests["recv"] == {}
    assert modern.notifications["send"] == {"notifications/cancelled": "CancelledNotification"}
    assert "ping" not in modern.requests["send"] and modern.requests["send"]["server/discover"] == "DiscoverRequest"
    # Results by the request they answer; requests without a result of their own get EmptyResult.
    assert old.results["ping"] == old.results["logging/setLevel"] == old.results["resources/subscribe"] == "EmptyResult"
    assert tasks.results["tools/call"] == "CallToolResult" and modern.results["server/discover"] == "DiscoverResult"
    for version in definitions.VERSIONS:
        s = definitions.schema(version)
        assert s.requests["send"] and s.notifications["recv"], version
        assert all(name in s.defs for name in s.results.values()), version


# One frame per version that breaks its schema, and exactly what the lint says about it.
INVALID = [
    (
        "2024-11-05",
        "recv",
        {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "go"}]}},
        Request("tools/list"),
        "ListToolsResult",
        "server/tools#listing-tools",
        [
            {
                "pointer": "/result/tools/0",
                "message": "'inputSchema' is a required property",
                "schema_path": "#/definitions/Tool/required",
            }
        ],
    ),
    (
        "2025-03-26",
        "recv",
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "loud", "data": 1}},
        None,
        "LoggingMessageNotification",
        "server/utilities/logging#log-message-notifications",
        [
            {
                "pointer": "/params/level",
                "message": "'loud' is not one of ['alert', 'critical', 'debug', 'emergency', 'error', 'info', 'notice', 'warning']",
                "schema_path": "#/definitions/LoggingLevel/enum",
            }
        ],
    ),
    (
        "2025-06-18",
        "recv",
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": "half"}},
        None,
        "ProgressNotification",
        "basic/utilities/progress#progress-flow",
        [
            {
                "pointer": "/params/progress",
                "message": "'half' is not of type 'number'",
                "schema_path": "#/definitions/ProgressNotification/properties/params/properties/progress/type",
            }
        ],
    ),
    (
        "2025-11-25",
        "recv",
        {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text"}]}},
        Request("tools/call"),
        "CallToolResult",
        "server/tools#calling-tools",
        [
            {
                "pointer": "/result/content/0",
                "message": "'text' is a required property",
                "schema_path": "#/$defs/TextContent/required",
            }
        ],
    ),
    (
        "2026-07-28",
        "recv",
        {
            "jsonrpc": "2.0",
            "id": 4,
            "result": {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "everyone"},
        },
        Request("tools/list"),
        "ListToolsResult",
        "server/tools#listing-tools",
        [
            {
                "pointer": "/result/cacheScope",
                "message": "'everyone' is not one of ['private', 'public']",
                "schema_path": "#/$defs/ListToolsResult/properties/cacheScope/enum",
            }
        ],
    ),
]


@pytest.mark.parametrize(
    "version,direction,message,request_,definition,section,problems", INVALID, ids=[case[0] for case in INVALID]
)
def test_one_invalid_message_per_version(version, direction, message, request_, definition, section, problems):
    report = check(message, version=version, direction=direction, request=request_)
    assert report.problems == problems
    assert report.definition == definition
    assert report.spec == f"https://modelcontextprotocol.io/specification/{version}/{section}"
    assert report.info() == {"version": version, "definition": definition, "spec": report.spec}


def _examples():
    return sorted(EXAMPLES.glob("2026-07-28/*/*.json"))


@pytest.mark.parametrize("path", _examples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_spec_s_own_example_messages_have_no_problem(path):
    """Requests (ours), notifications and responses (the server's), routed as frames are."""
    schema = definitions.schema("2026-07-28")
    message = json.loads(path.read_text())
    kind = path.parent.name
    request = None
    if kind.endswith("ResultResponse"):
        request = Request(schema.defs[kind.removesuffix("ResultResponse") + "Request"]["properties"]["method"]["const"])
    direction = "send" if kind.endswith("Request") else "recv"
    report = check(message, version="2026-07-28", direction=direction, request=request)
    if path.name == "read-resource-result-response.json":
        # The one example its schema contradicts: a complete ReadResourceResult requires the
        # caching fields (its sibling example has them). It passes ReadResourceResultResponse
        # only as the other member of its anyOf, an InputRequiredResult, which needs nothing but
        # resultType; the lint checks a complete result as what it says it is.
        assert [p["message"] for p in report.problems] == [
            "'cacheScope' is a required property",
            "'ttlMs' is a required property",
        ]
        return
    assert report.problems == [], report
    if request is not None:
        assert report.definition == kind.removesuffix("Response")
    elif "method" in message:
        assert report.definition == kind


def test_there_are_examples_of_every_kind():
    kinds = {p.parent.name for p in _examples()}
    assert {
        "CallToolRequest",
        "ListToolsResultResponse",
        "LoggingMessageNotification",
        "UnsupportedProtocolVersionError",
    } <= kinds and len(kinds) >= 25


def test_a_failed_union_names_the_member_the_value_meant():
    def problems(block, version="2025-11-25"):
        return check(
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [block]}},
            version=version,
            direction="recv",
            request=Request("tools/call"),
        ).problems

    # An image without data: ImageContent's own problem, not "none of five".
    assert problems({"type": "image", "mimeType": "image/png"}) == [
        {
            "pointer": "/result/content/0",
            "message": "'data' is a required property",
            "schema_path": "#/$defs/ImageContent/required",
        }
    ]
    # A type no member has: the union, named by its members.
    assert problems({"type": "video", "url": "x"}) == [
        {
            "pointer": "/result/content/0",
            "message": "an object of type 'video' matches none of TextContent | "
            "ImageContent | AudioContent | ResourceLink | EmbeddedResource",
            "schema_path": "#/$defs/ContentBlock/anyOf",
        }
    ]
    # A value of the wrong JSON type inside the right member.
    assert problems({"type": "text", "text": 5}) == [
        {
            "pointer": "/result/content/0/text",
            "message": "5 is not of type 'string'",
            "schema_path": "#/$defs/TextContent/properties/text/type",
        }
    ]


def test_results_follow_what_the_request_asked():
    task = {"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "t", "status": "working"}}}
    report = check(task, version="2025-11-25", direction="recv", request=Request("tools/call", task=True))
    assert report.definition == "CreateTaskResult"
    assert {p["message"] for p in report.problems} == {
        "'createdAt' is a required property",
        "'lastUpdatedAt' is a required property",
        "'ttl' is a required property",
    }
    rounds = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "input_required",
            "requestState": "s",
            "inputRequests": {"a": {"method": "roots/list"}},
        },
    }
    report = check(rounds, version="2026-07-28", direction="recv", request=Request("tools/call"))
    assert report.definition == "InputRequiredResult" and report.problems == []
    assert report.spec.endswith("/2026-07-28/basic/patterns/mrtr#multi-round-trip-requests")
    # Our answer to the server's elicitation.
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"action": "maybe"}}
    report = check(answer, version="2025-06-18", direction="send", request=Request("elicitation/create"))
    assert report.definition == "ElicitResult"
    assert report.problems == [
        {
            "pointer": "/result/action",
            "message": "'maybe' is not one of ['accept', 'cancel', 'decline']",
            "schema_path": "#/definitions/ElicitResult/properties/action/enum",
        }
    ]


def test_methods_a_sender_does_not_have_and_frames_that_are_no_message():
    report = check(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}},
        version="2025-11-25",
        direction="recv",
    )
    assert report.problems == [
        {
            "pointer": "/method",
            "message": "'tools/call' is not a request a server sends in MCP 2025-11-25",
            "schema_path": "#/$defs/ServerRequest",
        }
    ]
    report = check(
        {"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}},
        version="2026-07-28",
        direction="recv",
    )
    assert report.problems[0]["message"] == (
        "'sampling/createMessage': a server sends no requests in MCP 2026-07-28 "
        "(it asks through input_required results)"
    )
    assert (
        check({"jsonrpc": "2.0", "id": 1, "method": "ping"}, version="2026-07-28", direction="send").problems[0][
            "message"
        ]
        == "'ping' is not a request a client sends in MCP 2026-07-28"
    )
    report = check([1, 2], version="2025-11-25", direction="recv")
    assert report.definition == "JSONRPCMessage" and report.problems == [
        {
            "pointer": "",
            "message": "the array matches none of JSONRPCRequest | JSONRPCNotification | "
            "JSONRPCResultResponse | JSONRPCErrorResponse",
            "schema_path": "#/$defs/JSONRPCMessage/anyOf",
        }
    ]
    report = check({"jsonrpc": "2.0", "id": 1, "error": {"code": "bad"}}, version="2024-11-05", direction="recv")
    assert report.definition == "JSONRPCError" and report.spec.endswith("/2024-11-05/basic/messages#responses")
    assert {(p["pointer"], p["message"]) for p in report.problems} == {
        ("/error", "'message' is a required property"),
        ("/error/code", "'bad' is not of type 'integer'"),
    }


def test_problems_are_capped_and_messages_kept_short():
    many = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": f"t{i}"} for i in range(100)]}}
    report = check(many, version="2025-06-18", direction="recv", request=Request("tools/list"))
    assert len(report.problems) == definitions.MAX_PROBLEMS and report.more and report.info()["more"] is True
    huge = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": "x" * 100_000},
    }
    [problem] = check(huge, version="2025-06-18", direction="recv").problems
    assert len(problem["message"]) == definitions.MESSAGE_CHARS and problem["message"].endswith("…")


def _frames(*frames):
    """Events as the tap makes them (sequence numbers, responses paired with their requests)."""
    tap = Tap()
    events = []
    tap.subscribe(events.append)
    for direction, message in frames:
        tap.frame(direction, json.dumps(message))
    return events


def test_the_linter_follows_the_version_the_frames_negotiate():
    events = _frames(
        (
            "send",
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            },
        ),
        (
            "recv",
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            },
        ),
        # A title on a tool is 2025-06-18's (BaseMetadata); 2024-11-05 lets any property through.
        ("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("recv", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "t"}]}}),
        (
            "send",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
            },
        ),
    )
    linter = FrameLinter()
    assert linter.version == "2025-11-25"  # before anything: the latest of the legacy era
    picks = linter.pick(events)
    assert [p.version for p in picks] == ["2025-06-18", "2024-11-05", "2024-11-05", "2024-11-05", "2026-07-28"]
    assert [p.request.method if p.request else None for p in picks] == [None, "initialize", None, "tools/list", None]
    for pick, report in zip(picks, check_all(picks)[0]):
        apply(pick, report)
    assert events[3].schema_problems == [
        {
            "pointer": "/result/tools/0",
            "message": "'inputSchema' is a required property",
            "schema_path": "#/definitions/Tool/required",
        }
    ]
    assert events[3].schema_lint["definition"] == "ListToolsResult"
    assert events[3].to_dict()["schema_problems"] == events[3].schema_problems
    assert all(e.schema_problems is None and "schema_problems" not in e.to_dict() for e in events[:3])
    # Seen once: the same events again (a batch saved again) are passed over.
    assert linter.pick(events) == [] and (linter.seen, linter.checked) == (5, 5)


def test_another_connections_frames_follow_their_own_version():
    """The server check's version probes share the session's tap (`Tap.connection`): their
    initialize offering another version must not change what the session's frames are checked against."""
    tap = Tap()
    events = []
    tap.subscribe(events.append)
    probe = tap.connection("check probe 1")

    def init(t, version):
        t.frame(
            "send",
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": version,
                        "capabilities": {},
                        "clientInfo": {"name": "c", "version": "1"},
                    },
                }
            ),
        )
        t.frame(
            "recv",
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {
                        "protocolVersion": version,
                        "capabilities": {},
                        "serverInfo": {"name": "s", "version": "1"},
                    },
                }
            ),
        )

    init(tap, "2025-11-25")
    init(probe, "2024-11-05")
    probe.note("closed", "probe closed")
    tap.frame("send", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    tap.frame("recv", json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}))
    # One numbering, one transcript; the probe's events say whose they are, its answer pairs with its request.
    assert [e.seq for e in events] == [1, 2, 3, 4, 5, 6, 7] and tap.seq == 7
    assert [(e.data or {}).get("connection") for e in events] == [
        None,
        None,
        "check probe 1",
        "check probe 1",
        "check probe 1",
        None,
        None,
    ]
    assert (events[3].reply_to, events[6].reply_to) == (3, 6)
    picks = FrameLinter().pick(events)
    assert [(p.event.seq, p.version) for p in picks] == [
        (1, "2025-11-25"),
        (2, "2025-11-25"),
        (3, "2024-11-05"),
        (4, "2024-11-05"),
        (6, "2025-11-25"),
        (7, "2025-11-25"),
    ]


def test_the_budget_checks_unasked_frames_at_its_rate_and_answers_always():
    now = [100.0]
    budget = LintBudget(rate=10, share=0.1, burst=0.5, clock=lambda: now[0])
    linter = FrameLinter(budget=budget)
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    events = _frames(
        ("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}),
        *[("recv", note)] * 30,
        ("recv", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
    )
    picks = linter.pick(events)
    assert [p.event.seq for p in picks] == [1, *range(2, 12), 32]  # ours, 10 unasked, the answer
    assert (linter.seen, linter.checked, linter.skipped) == (32, 12, 20)
    more = _frames(*[("recv", note)] * 5)
    for i, event in enumerate(more):
        event.seq = 100 + i
    assert linter.pick(more[:2]) == []  # the same second: none left
    now[0] += 1.0
    assert len(linter.pick(more[2:])) == 3  # the next second
    budget.spend(2.0)  # a check that took long: nothing until time is back
    ours = _frames(("send", {"jsonrpc": "2.0", "id": 9, "method": "ping"}))
    ours[0].seq = 200
    assert linter.pick(ours) == []
    now[0] += 20.0
    big = _frames(("recv", note))
    big[0].seq, big[0].size = 300, MAX_BYTES + 1
    assert linter.pick(big) == [] and linter.skipped == 20 + 2 + 1  # not for the budget: it says why itself
    assert big[0].schema_lint == {"version": "2025-11-25", "unchecked": "larger than 1,000,000 bytes"}
    assert big[0].to_dict()["schema_lint"]["unchecked"] and "schema_problems" not in big[0].to_dict()
    # As a session ends, what is left is checked whole (while time lasts).
    budget.lift_rate()
    rest = _frames(*[("recv", note)] * 50)
    for i, event in enumerate(rest):
        event.seq = 400 + i
    assert len(linter.pick(rest)) == 50
    now[0] += 5.0
    assert len(linter.pick(_renumbered(_frames(*[("recv", note)] * 300), 500))) == 300 and budget.rate == 10


def test_the_process_s_share_bounds_every_session_s_checking_together():
    """Each session's budget has its own share of a core, at most its part of the process's:
    many flooding sessions together stay within the process's share, in equal parts."""
    now = [0.0]
    clock = lambda: now[0]  # noqa: E731
    process = ProcessShare(share=0.2, burst=0.5, clock=clock)
    budgets = [LintBudget(share=0.1, burst=0.5, clock=clock, shared=process) for _ in range(5)]
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    linters = [FrameLinter(budget=b) for b in budgets]
    spent = [0.0] * 5
    seq = 0
    for _ in range(400):  # 40 s: every session floods, each check takes 10 ms of CPU
        now[0] += 0.1
        for i, (linter, budget) in enumerate(zip(linters, budgets)):
            seq += 1
            if linter.pick(_renumbered(_frames(("recv", note)), seq)):
                budget.spend(0.01)
                spent[i] += 0.01
    # Alone, each could spend its own 10% (4 s of 40); together they stay within the process's 20%
    # (and its burst, give or take one check each), in equal parts.
    assert 0.2 * 40 - 0.5 <= sum(spent) <= 0.2 * 40 + 0.5 + 5 * 0.01, spent
    assert max(spent) - min(spent) <= 0.5 / 5 + 0.01, spent
    # One session's long check is paid back by that session alone, at its part of the share.
    assert -0.01 <= budgets[0].seconds <= 0.1
    budgets[0].spend(1.5)
    now[0] += 10.0  # (the others went quiet: it is alone again, at its own 10%)
    assert linters[0].pick(_renumbered(_frames(("recv", note)), 10_000)) == []
    assert budgets[0].cpu.rate == 0.1 and -0.51 <= budgets[0].seconds < -0.3
    assert len(linters[1].pick(_renumbered(_frames(("recv", note)), 10_001))) == 1  # the others: unaffected
    now[0] += 10.0
    assert len(linters[0].pick(_renumbered(_frames(("recv", note)), 10_002))) == 1


def _renumbered(events, start):
    for i, event in enumerate(events):
        event.seq = start + i
    return events


def test_spec_sections_by_version():
    assert spec_sections.for_method("2025-06-18", "elicitation/create") == (
        "https://modelcontextprotocol.io/specification/2025-06-18/client/elicitation#creating-elicitation-requests"
    )
    assert spec_sections.for_method("2025-11-25", "elicitation/create").endswith(
        "/client/elicitation#elicitation-requests"
    )
    assert spec_sections.for_method("2025-11-25", "notifications/progress").endswith(
        "/2025-11-25/basic/utilities/progress#progress-flow"
    )
    assert spec_sections.for_method("2026-07-28", "notifications/progress").endswith(
        "/2026-07-28/basic/patterns/progress#progress-flow"
    )
    assert spec_sections.for_method("2026-07-28", "server/discover", result=True).endswith("/server/discover#response")
    assert spec_sections.for_method("2025-11-25", "no/such") == spec_sections.messages("2025-11-25")
    assert spec_sections.title(spec_sections.for_method("2025-11-25", "tools/call")) == "Calling tools"


@pytest.mark.skipif(not SPEC_TEXT.exists(), reason="the spec text is not on this machine (../shared/mcp-spec)")
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_every_section_linked_is_a_heading_of_the_spec_text(version):
    schema = definitions.schema(version)
    links = {
        spec_sections.for_method(version, m)
        for by in (*schema.requests.values(), *schema.notifications.values())
        for m in by
    }
    links |= {spec_sections.for_method(version, m, result=True) for m in schema.results}
    links |= {spec_sections.messages(version), spec_sections.errors(version)}
    for link in links:
        page, _, anchor = link.split(f"/{version}/", 1)[1].partition("#")
        path = SPEC_TEXT / version / f"{page}.mdx"
        text = path.read_text() if path.exists() else (SPEC_TEXT / version / page / "index.mdx").read_text()
        slugs = {
            re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#{1,6} +(.+)$", text, re.M)
        }
        assert not anchor or anchor in slugs, link


@pytest.mark.parametrize("pause_every", [linter_module.PAUSE_EVERY, 0.0])
def test_checking_lets_a_waiting_thread_have_the_interpreter_lock(pause_every):
    """A thread that wants the lock (a live session's event loop) gets it while frames are checked,
    not only when the switch interval forces a hand-over (here 1 s: without pauses, none).
    (Invalid frames: a valid one passes the compiled screen in microseconds; jsonschema, pure
    Python under the lock, reports the problems of the others.)"""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5, "arguments": {"x": "hi"}}}
    picks = FrameLinter().pick(_frames(*[("send", {**call, "id": i}) for i in range(1, 400)]))
    woke: list[float] = []
    done = threading.Event()

    def loop() -> None:  # sleeps 1 ms at a time, as an event loop waiting on its sockets
        while not done.is_set():
            time.sleep(0.001)
            woke.append(time.perf_counter())

    thread = threading.Thread(target=loop)
    interval = sys.getswitchinterval()
    thread.start()
    sys.setswitchinterval(1.0)
    try:
        started = time.perf_counter()
        reports, _cpu = check_all(picks, pause_every=pause_every)
        ended = time.perf_counter()
    finally:
        sys.setswitchinterval(interval)
        done.set()
        thread.join()
    assert len(reports) == len(picks) and all(r.problems for r in reports)
    during = [t for t in woke if started < t < ended]
    if pause_every:
        assert len(during) >= 5, (len(during), ended - started)
    else:
        assert len(during) <= 1, (len(during), ended - started)
