"""A recorded transcript read back as a plan (mcp/replay/recordings.py) and replayed (replayer.py), with an
in-memory server playing two builds. The protocol logic only: the same against real servers
is in test_cli_replay.py and tests/sessions/test_replay.py."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from playground.mcp.client import McpClient
from playground.mcp.events import Tap
from playground.mcp.replay import RecordingError, Replayer, read_rows, recording, user_params
from playground.mcp.replay.recordings import Notify
from playground.mcp.responder import NoResponder, StaticResponder
from tests.mcp.memory import MemoryTransport


def server(build: str = "a", *, modern: bool = False, question: str = "Name?"):
    """A scripted server: `version` differs between builds; build "b" logs nothing during `log`;
    `ask` elicits `question` (legacy)."""
    asked: dict[str, dict] = {}

    async def handle(t: MemoryTransport, msg: dict) -> None:
        method, params = msg.get("method"), msg.get("params") or {}
        if method is None:  # the client's answer to our request
            waiting = asked.pop(str(msg.get("id")), None)
            if waiting is not None:
                name = (msg.get("result") or {}).get("content", {}).get("name", "?")
                t.reply(waiting, {"content": [{"type": "text", "text": f"Hello, {name}!"}]})
            return
        if method == "initialize":
            t.reply(
                msg,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mem", "version": build},
                },
            )
        elif method == "tools/list":
            t.reply(
                msg,
                {
                    "tools": [
                        {"name": n, "inputSchema": {"type": "object"}}
                        for n in ("version", "slow", "ask", "log", "hang")
                    ]
                },
            )
        elif method == "tools/call":
            name = params.get("name")
            if name == "version":
                t.reply(
                    msg,
                    {
                        "content": [{"type": "text", "text": "1.0" if build == "a" else "2.0"}],
                        "_meta": {"build": build},
                    },
                )
            elif name == "slow":
                token = params["_meta"]["progressToken"]
                for i in (1, 2):
                    t.deliver(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": i, "total": 2},
                        }
                    )
                t.reply(msg, {"content": [{"type": "text", "text": "done"}]})
            elif name == "ask" and modern:
                if "inputResponses" in params:
                    answer = params["inputResponses"]["who"]["content"]["name"]
                    t.reply(msg, {"content": [{"type": "text", "text": f"Hello, {answer}!"}]})
                else:
                    t.reply(
                        msg,
                        {
                            "resultType": "input_required",
                            "requestState": f"opaque-{build}",
                            "inputRequests": {
                                "who": {
                                    "method": "elicitation/create",
                                    "params": {"message": "Name?", "requestedSchema": {"type": "object"}},
                                }
                            },
                        },
                    )
            elif name == "ask":
                asked["s1"] = msg
                t.deliver(
                    {
                        "jsonrpc": "2.0",
                        "id": "s1",
                        "method": "elicitation/create",
                        "params": {"message": question, "requestedSchema": {"type": "object"}},
                    }
                )
            elif name == "log":
                if build == "a":
                    t.deliver(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/message",
                            "params": {"level": "info", "data": "logged"},
                        }
                    )
                t.reply(msg, {"content": []})
            elif name == "hang":
                pass
        elif method == "no/such":
            t.error(msg, -32601, "Method not found")

    return handle


def client_for(handler, *, responder=None, era="legacy") -> tuple[McpClient, Tap, list]:
    tap = Tap()
    events: list = []
    tap.subscribe(events.append)
    return McpClient(MemoryTransport(tap, handler), tap=tap, responder=responder, era=era, timeout=5), tap, events


async def record(*, modern: bool = False, build: str = "a") -> list[dict]:
    """A session with `build`: every kind of step, as the tap records it."""
    responder = StaticResponder(elicitation="accept", elicitation_content={"name": "Ada"})
    client, tap, events = client_for(
        server(build, modern=modern), responder=responder, era="modern" if modern else "legacy"
    )
    await client.start()
    if not modern:
        await client.initialize()
        # Before any request: unsolicited, not compared.
        client.transport.deliver({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}})
    await client.list_tools()
    await client.call_tool("version", {})
    await client.call_tool("slow", {}, on_progress=lambda p: None)
    await client.call_tool("ask", {})
    await client.call_tool("log", {})
    hang = asyncio.create_task(client.call_tool("hang", {}))
    await client.transport.wait_sent(len(client.transport.sent) + 1)
    await asyncio.sleep(0.05)
    hang.cancel()
    with pytest.raises(asyncio.CancelledError):
        await hang
    await client.notify("notifications/roots/list_changed")
    with pytest.raises(Exception):
        await client.request("no/such", {})
    await client.transport.send('{"jsonrpc": "2.0", "id": 99, "method": ')  # malformed on purpose
    await client.close()
    return [e.to_dict() for e in events]


async def test_the_plan_is_the_clients_requests_in_order():
    rows = await record()
    rec = recording(rows)
    methods = [("notify", s.method) if isinstance(s, Notify) else (s.method, s.name) for s in rec.steps]
    assert methods == [
        ("tools/list", ""),
        ("tools/call", "version"),
        ("tools/call", "slow"),
        ("tools/call", "ask"),
        ("tools/call", "log"),
        ("tools/call", "hang"),
        ("notify", "notifications/roots/list_changed"),
        ("no/such", ""),
    ]
    slow, ask, log, hang = rec.exchanges[2:6]
    assert slow.progress and slow.params == {"name": "slow", "arguments": {}}  # the token is renumbered
    assert [s.method for s in slow.notifications] == ["notifications/progress"] * 2
    assert [s.method for s in ask.requests] == ["elicitation/create"]
    assert [s.method for s in log.notifications] == ["notifications/message"]
    assert hang.response is None and not hang.answered and 0.04 < hang.cancel_after < 5
    assert rec.exchanges[-1].response["error"]["code"] == -32601
    assert [(a.method, a.result) for a in rec.answers] == [
        ("elicitation/create", {"action": "accept", "content": {"name": "Ada"}})
    ]
    assert rec.capabilities == {"elicitation": {"form": {}}}
    assert rec.unsolicited == 1
    assert len(rec.skipped) == 1 and "not JSON" in rec.skipped[0]


async def test_a_modern_input_round_is_one_request_and_its_answer_is_recorded():
    rec = recording(await record(modern=True))
    ask = next(e for e in rec.exchanges if e.name == "ask")
    assert ask.response == {"result": {"content": [{"type": "text", "text": "Hello, Ada!"}]}}
    assert "inputResponses" not in ask.params and "_meta" not in ask.params
    assert [s.method for s in ask.requests] == ["elicitation/create"]
    assert [(a.method, a.result) for a in rec.answers] == [
        ("elicitation/create", {"action": "accept", "content": {"name": "Ada"}})
    ]
    assert [e.name for e in rec.exchanges].count("ask") == 1


def test_interleaved_input_rounds_are_matched_by_their_request_state():
    """Two tools/calls both waiting for input, retried in the order they were asked: each retry
    continues the call whose requestState it echoes, and a later hand-made request carrying a
    requestState nobody issued is a request of its own."""
    tap = Tap()
    events = []
    tap.subscribe(events.append)

    def send(rid, params):
        tap.frame("send", json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}))

    def recv(rid, result):
        tap.frame("recv", json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))

    def waiting(state, who):
        return {
            "resultType": "input_required",
            "requestState": state,
            "inputRequests": {
                "q": {"method": "elicitation/create", "params": {"message": f"Name for {who}?", "requestedSchema": {}}}
            },
        }

    send(1, {"name": "ask", "arguments": {"who": "a"}})
    send(2, {"name": "ask", "arguments": {"who": "b"}})
    recv(1, waiting("state-a", "a"))
    recv(2, waiting("state-b", "b"))
    send(
        3,
        {
            "name": "ask",
            "arguments": {"who": "a"},
            "requestState": "state-a",
            "inputResponses": {"q": {"action": "accept", "content": {"name": "Ann"}}},
        },
    )
    send(
        4,
        {
            "name": "ask",
            "arguments": {"who": "b"},
            "requestState": "state-b",
            "inputResponses": {"q": {"action": "accept", "content": {"name": "Bo"}}},
        },
    )
    recv(3, {"resultType": "complete", "content": [{"type": "text", "text": "Hello, Ann!"}]})
    recv(4, {"resultType": "complete", "content": [{"type": "text", "text": "Hello, Bo!"}]})
    send(5, {"name": "ask", "arguments": {"who": "c"}, "requestState": "made-up"})
    recv(5, {"resultType": "complete", "content": [{"type": "text", "text": "?"}]})
    rec = recording([e.to_dict() for e in events])
    assert [(e.params["arguments"]["who"], e.response["result"]["content"][0]["text"]) for e in rec.exchanges] == [
        ("a", "Hello, Ann!"),
        ("b", "Hello, Bo!"),
        ("c", "?"),
    ]
    assert [(a.params["message"], a.result["content"]["name"]) for a in rec.answers] == [
        ("Name for a?", "Ann"),
        ("Name for b?", "Bo"),
    ]


async def replay(rows, build: str, *, modern: bool = False, ignore=()):
    client, tap, events = client_for(server(build, modern=modern), era="modern" if modern else "legacy")
    replayer = Replayer(recording(rows), tap=tap, ignore=list(ignore))
    client.responder = replayer.responder(NoResponder())
    await client.start()
    if not modern:
        await client.initialize()
    seen = []

    async def on_row(row):
        seen.append(row)

    report = await replayer.run(client, on_row)
    await client.close()
    assert seen == report["rows"]
    return report, [e.to_dict() for e in events]


async def replay_against(rec, handler, *, responder=None, timeout: float = 5.0, ignore=()) -> dict:
    """`rec` replayed against the legacy server `handler`; what the recording cannot answer, `responder` does."""
    client, tap, _ = client_for(handler)
    client.timeout = timeout
    replayer = Replayer(rec, tap=tap, ignore=list(ignore))
    client.responder = replayer.responder(responder or NoResponder())
    await client.start()
    await client.initialize()
    report = await replayer.run(client)
    await client.close()
    return report


@pytest.mark.parametrize("modern", [False, True])
async def test_replayed_against_the_same_build_everything_is_the_same(modern):
    rows = await record(modern=modern)
    report, events = await replay(rows, "a", modern=modern)
    assert {r["status"] for r in report["rows"]} == {"same"}, report["rows"]
    assert report["requests"] == len(recording(rows).exchanges) == 7
    assert report["answered_from_recording"] == 1 and report["state"] == "done"
    sent = [e["message"] for e in events if e["dir"] == "send" and isinstance(e["message"], dict)]
    # Progress token and ids renumbered consistently: the new token names the new request's id.
    slow = next(m for m in sent if (m.get("params") or {}).get("name") == "slow")
    assert slow["params"]["_meta"]["progressToken"] == f"progress-{slow['id']}"
    # The hanging call was cancelled again, by its new id, as it was in the recording.
    hang = next(m for m in sent if (m.get("params") or {}).get("name") == "hang")
    cancelled = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [hang["id"]]
    assert any(m.get("method") == "notifications/roots/list_changed" for m in sent)
    notes = [e for e in events if e.get("kind") == "diff"]
    assert [n["data"]["seq"] for n in notes] == [r["seq"] for r in report["rows"]]


async def test_responses_are_compared_off_the_event_loop(monkeypatch):
    import threading

    from playground.mcp.replay import diff

    threads = []
    real = diff.diff

    def spy(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(diff, "diff", spy)
    rows = await record()
    report, _ = await replay(rows, "a")
    assert report["answered_from_recording"] == 1  # a recorded answer looked up, too
    assert len(threads) >= 7 and threading.main_thread() not in threads


async def test_against_another_build_exactly_what_changed_shows():
    rows = await record()
    report, _ = await replay(rows, "b")
    different = [r for r in report["rows"] if r["status"] != "same"]
    assert [(r["status"], r["kind"], r["method"], r.get("name")) for r in different] == [
        ("changed", "request", "tools/call", "version"),
        ("missing", "notification", "notifications/message", None),
    ]
    version, missing = different
    assert version["changes"] == [{"path": "/result/content/0/text", "old": "1.0", "new": "2.0"}]  # _meta ignored
    assert json.loads(version["old_raw"])["result"]["content"][0]["text"] == "1.0"
    assert json.loads(version["new_raw"])["result"]["content"][0]["text"] == "2.0"
    assert missing["during"]["name"] == "log" and isinstance(missing["seq"], int)
    assert report["counts"] == {"same": 6, "changed": 1, "missing": 1}
    report, _ = await replay(rows, "b", ignore=["/result/content/*/text"])
    assert [r["status"] for r in report["rows"] if r["kind"] == "request"] == ["same"] * 7

    # The other way round: what build "a" sends now and "b" did not (a log entry during `log`) is new.
    report, _ = await replay(await record(build="b"), "a")
    new = [r for r in report["rows"] if r["status"] == "new"]
    assert [(r["kind"], r["method"], r["during"]["name"]) for r in new] == [
        ("notification", "notifications/message", "log")
    ]
    assert "seq" not in new[0] and isinstance(new[0]["new_seq"], int)  # nothing recorded: only now
    assert report["counts"] == {"same": 6, "changed": 1, "new": 1}


async def test_without_a_recorded_answer_the_fallback_is_asked_and_the_request_is_new():
    rows = await record()
    rec = recording(rows)
    rec.answers.clear()
    report = await replay_against(
        rec, server("a"), responder=StaticResponder(elicitation="accept", elicitation_content={"name": "Bo"})
    )
    ask = next(r for r in report["rows"] if r.get("name") == "ask")
    assert ask["status"] == "changed" and ask["changes"][0]["new"] == "Hello, Bo!"
    assert report["answered_from_recording"] == 0


async def test_the_servers_ignore_rules_do_not_match_its_requests_to_recorded_answers():
    """The ignore rules say what may differ in a server's responses. Matching its requests to the
    recorded answers with them, `/params/*` would answer a question the recording never saw with
    the answer another one got: only the default rules (ids, _meta, progress tokens) apply there."""
    rec = recording(await record())
    decline = StaticResponder(elicitation="decline")
    report = await replay_against(rec, server("a", question="Your password?"), responder=decline, ignore=["/params/*"])
    ask = next(r for r in report["rows"] if r.get("name") == "ask")
    assert report["answered_from_recording"] == 0 and ask["changes"][0]["new"] == "Hello, ?!"
    rec = recording(await record())
    report = await replay_against(rec, server("a"), responder=decline, ignore=["/params/*"])
    assert report["answered_from_recording"] == 1  # the same question: the recorded answer


async def test_a_request_never_answered_nor_cancelled_waits_as_long_as_the_replay_runs():
    """A call still hanging when the recorded session ended (or an open subscriptions/listen):
    "same" however long the replay runs, not "timed out" once it outlasts the request timeout."""
    rows = await record()
    sent = [r for r in rows if r["dir"] == "send" and isinstance(r["message"], dict)]
    hang = next(r["seq"] for r in sent if (r["message"].get("params") or {}).get("name") == "hang")
    rows = [r for r in rows if not (r in sent and r["message"].get("method") == "notifications/cancelled")]
    rec = recording(rows)
    assert next(e for e in rec.exchanges if e.seq == hang).cancel_after is None
    timeout = 0.3

    async def slow_last(t, msg):
        if msg.get("method") == "no/such":  # the step after the hanging call: outlasts its timeout
            await asyncio.sleep(3 * timeout)
        await server("a")(t, msg)

    report = await replay_against(rec, slow_last, timeout=timeout)
    row = next(r for r in report["rows"] if r.get("name") == "hang")
    assert row["status"] == "same" and row["detail"] == "no response, as recorded", row


async def test_a_failure_where_it_succeeded_is_an_error_row():
    rows = await record()

    async def refusing(t, msg):
        if (msg.get("params") or {}).get("name") == "version":
            t.error(msg, -32603, "broken")
        else:
            await server("a")(t, msg)

    report = await replay_against(recording(rows), refusing)
    version = next(r for r in report["rows"] if r.get("name") == "version")
    assert version["status"] == "error" and "succeeded in the recording, failed now" in version["detail"]


def test_files_in_both_export_formats_and_what_is_not_a_transcript():
    lines = [
        {"seq": 2, "t": 0.1, "dir": "send", "raw": "", "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
        {"seq": 1, "t": 0.0, "dir": "note", "message": None, "kind": "connected", "text": "x"},
    ]
    jsonl = "\n".join(json.dumps(line) for line in lines) + "\n"
    document = json.dumps({"session": {"id": 1}, "events": lines}) + "\n"
    assert [r["seq"] for r in read_rows(jsonl)] == [r["seq"] for r in read_rows(document)] == [1, 2]
    for bad in ["not json\n", '{"seq": "x", "dir": "send"}\n', "[1, 2]\n"]:
        with pytest.raises(RecordingError):
            read_rows(bad)


@pytest.mark.parametrize(
    "field, value, why",
    [
        ("t", [], "t is [], not a number of seconds"),
        ("t", "0.5", 't is "0.5", not a number of seconds'),
        ("t", True, "t is true"),
        ("reply_to", [1], "reply_to is [1], not an event number"),
        ("reply_to", "2", 'reply_to is "2"'),
        ("seq", True, "every line needs seq (an integer)"),
    ],
)
def test_every_malformed_value_in_a_recording_is_a_recording_error(field, value, why):
    """What a plan reads of a line is checked: a file edited by hand (or by a broken tool) is a
    usage error naming the line, never a TypeError out of the middle of the reading."""
    good = [
        {"seq": 1, "t": 0.0, "dir": "send", "raw": "", "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}},
        {
            "seq": 2,
            "t": 0.1,
            "dir": "send",
            "raw": "",
            "message": {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        },
        {"seq": 3, "t": 0.2, "dir": "recv", "raw": "x" * 10, "message": None, "truncated": True, "reply_to": 1},
    ]
    recording(read_rows("\n".join(json.dumps(line) for line in good)))
    for i in range(len(good)):
        lines = [dict(line) for line in good]
        lines[i][field] = value
        with pytest.raises(RecordingError, match=re.escape(why)):
            recording(read_rows("\n".join(json.dumps(line) for line in lines)))


def test_user_params_leave_out_what_the_client_adds():
    params = {
        "name": "t",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 3, "mine": 1},
    }
    assert user_params(params) == {"name": "t", "_meta": {"mine": 1}}
    assert user_params({"_meta": {"progressToken": 1}}) == {}


def timing_server(when: str):
    """A server announcing a changed tool list at a moment that depends on timing (`when`: during
    tools/list, during the call, or never), and asking by URL-mode elicitation with a new random
    elicitationId each run."""
    import secrets as random

    asked: dict[str, dict] = {}
    changed = {"method": "notifications/tools/list_changed", "jsonrpc": "2.0"}

    async def handle(t: MemoryTransport, msg: dict) -> None:
        method = msg.get("method")
        if method is None:
            waiting = asked.pop(str(msg.get("id")), None)
            if waiting is not None:
                t.reply(waiting, {"content": [{"type": "text", "text": (msg.get("result") or {}).get("action", "?")}]})
            return
        if method == "initialize":
            t.reply(
                msg,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "timing", "version": when},
                },
            )
        elif method == "tools/list":
            if when == "list":
                t.deliver(changed)
            t.reply(msg, {"tools": [{"name": "link", "inputSchema": {"type": "object"}}]})
        elif method == "tools/call":
            if when == "call":
                t.deliver(changed)
            asked["e1"] = msg
            elicitation = random.token_hex(8)
            t.deliver(
                {
                    "jsonrpc": "2.0",
                    "id": "e1",
                    "method": "elicitation/create",
                    "params": {
                        "mode": "url",
                        "message": "Sign in",
                        "url": "https://example.com/sign-in",
                        "elicitationId": elicitation,
                    },
                }
            )

    return handle


async def _timing_recording() -> Any:
    responder = StaticResponder(elicitation="accept")
    client, tap, events = client_for(timing_server("list"), responder=responder)
    await client.start()
    await client.initialize()
    await client.list_tools()
    await client.call_tool("link", {})
    await client.close()
    return recording([e.to_dict() for e in events])


async def test_a_url_elicitation_with_a_new_id_gets_its_recorded_answer_and_timing_is_not_a_difference():
    """Replay stalled on URL-mode elicitation (a new random elicitationId defeated the recorded
    answer's match) and showed a list_changed sent at another moment as missing here and new
    there (issue 31): neither is a difference."""
    rec = await _timing_recording()
    report = await replay_against(rec, timing_server("call"), timeout=3)
    assert report["answered_from_recording"] == 1
    assert [(r["status"], r["kind"], r["method"]) for r in report["rows"]] == [
        ("same", "request", "tools/list"),
        ("same", "request", "tools/call"),
    ]


async def test_a_timed_notification_that_no_longer_comes_is_one_row_over_the_whole_replay():
    rec = await _timing_recording()
    report = await replay_against(rec, timing_server("never"), timeout=3)
    rows = [r for r in report["rows"] if r["status"] != "same"]
    assert [(r["status"], r["method"], r["during"]["method"]) for r in rows] == [
        ("missing", "notifications/tools/list_changed", "the whole replay")
    ]
    assert rows[0]["detail"].startswith("1 fewer than recorded (1 then, 0 now) over the whole replay")


def _swapped_before(rows: list[dict], first: int, second: int) -> list[dict]:
    """`rows` with row `second` moved before row `first` and the lines renumbered, as a capture
    made before the ordering fix recorded a reply ahead of what it answers (unpaired: no reply_to)."""
    moved = [
        *rows[:first],
        {k: v for k, v in rows[second].items() if k != "reply_to"},
        *rows[first:second],
        *rows[second + 1 :],
    ]
    renumber = {row["seq"]: n for n, row in enumerate(moved, 1)}
    return [
        {**row, "seq": renumber[row["seq"]]}
        | ({"reply_to": renumber[row["reply_to"]]} if row.get("reply_to") in renumber else {})
        for row in moved
    ]


async def test_a_recording_with_replies_ahead_of_what_they_answer_is_read_as_if_in_order():
    """Captures made before the capture recorded each chunk before passing it on can hold a tool's
    response before its request, or the host's answer before the server's request: each is held
    until what it answers turns up, and the replay is the same as for the ordered recording."""
    rows = await record()
    messages = [r.get("message") if isinstance(r.get("message"), dict) else {} for r in rows]
    call = next(n for n, m in enumerate(messages) if (m.get("params") or {}).get("name") == "version")
    response = next(n for n, r in enumerate(rows) if r.get("reply_to") == rows[call]["seq"])
    misordered = _swapped_before(rows, call, response)
    messages = [r.get("message") if isinstance(r.get("message"), dict) else {} for r in misordered]
    asked = next(n for n, m in enumerate(messages) if m.get("method") == "elicitation/create")
    answer = next(
        n
        for n, r in enumerate(misordered)
        if r["dir"] == "send" and messages[n].get("id") == messages[asked]["id"] and "result" in messages[n]
    )
    misordered = _swapped_before(misordered, asked, answer)
    ordered, read = recording(rows), recording(misordered)
    assert [(s.method, s.name, s.response) for s in read.exchanges] == [
        (s.method, s.name, s.response) for s in ordered.exchanges
    ]
    assert [(a.method, a.result) for a in read.answers] == [(a.method, a.result) for a in ordered.answers]
    report, _events = await replay(misordered, "a")
    assert {r["status"] for r in report["rows"]} == {"same"}, report["rows"]
    assert report["answered_from_recording"] == 1 and report["state"] == "done"


def test_a_response_paired_with_a_request_not_replayed_is_not_held_for_a_later_one():
    """Only what the recording could not pair waits for its request: the handshake's answer
    (paired, not replayed) is not taken by a later request that reuses its id."""
    rows = [
        {"seq": 1, "dir": "send", "message": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}},
        {"seq": 2, "dir": "recv", "reply_to": 1, "message": {"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {}}}},
        {"seq": 3, "dir": "send", "message": {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}}},
    ]
    (listed,) = recording(rows).exchanges
    assert listed.method == "tools/list" and listed.response is None
