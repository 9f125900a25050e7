"""Hostile servers through the whole live path: server → worker → database → consumer → page.

Every case checks the same four things: a clear event in the saved transcript says what went
wrong; the page still answers (a `ping` from the page gets its answer, or the notice that the
session ended); the worker either carries on or ends the session cleanly; and the transcript
is saved, every event in order, up to the failure.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from channels.db import database_sync_to_async

from playground.mcp import jsontext
from playground.sessions.fragments import lines
from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Event, Session
from tests.http_peers import FaultServer, Request, head
from tests.sessions.helpers import MISBEHAVING, communicator, make_user_and_server, receive_until, stop_all

pytestmark = pytest.mark.django_db(transaction=True)

Row = dict[str, Any]


async def rows_of(session_id: int) -> list[Row]:
    return await database_sync_to_async(
        lambda: list(Event.objects.filter(session_id=session_id).order_by("seq").values_list("data", flat=True))
    )()


async def assert_saved(session_id: int, recorded: int) -> tuple[Session, list[Row]]:
    """Ended cleanly, with every one of the `recorded` events the tap numbered saved, in order."""
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    rows = await rows_of(session_id)
    assert session.status in ("ended", "failed") and session.worker_channel == ""
    assert [r["seq"] for r in rows] == list(range(1, recorded + 1))
    assert session.event_count == recorded
    return session, rows


async def page_answers_ping(comm, alive: bool) -> None:
    await comm.send_to(text_data=json.dumps({"action": "ping"}))
    await receive_until(comm, "<strong>ping</strong>" if alive else "This session has ended")


async def call_go(comm, *, timeout: str = "10") -> str:
    """Wait for the catalogue, call `go`; return what the page got so far."""
    seen = await receive_until(comm, 'id="catalogue"', ">go<")
    await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "go", "timeout": timeout}))
    return seen


async def drive(
    user: Any, srv: Any, *, until: tuple[str, ...], alive: bool, clear: Callable[[Row], bool], timeout: str = "10"
) -> tuple[Session, list[Row], str]:
    """Connect to the server, call `go`, wait for `until`, then check the four things: a clear
    event saved, the page answering, the worker carrying on (`alive`) or ended, and every
    recorded event saved. Returns the session, its rows and everything the page got."""
    session = await start_session(srv, user)
    worker = WORKERS[session.pk]
    comm = communicator(session.pk, user)
    try:
        assert (await comm.connect())[0]
        before = await call_go(comm, timeout=timeout)
        seen = before + "\n" + await receive_until(comm, *until, timeout=60)
        await page_answers_ping(comm, alive)
        assert (session.pk in WORKERS) == alive
    finally:
        await comm.disconnect()
        await stop_all()
    saved, rows = await assert_saved(session.pk, worker.tap.seq)
    assert any(clear(r) for r in rows), f"no clear event for {srv.name}"
    return saved, rows, seen


async def hostile(
    mode: str, *, until: tuple[str, ...], alive: bool, clear: Callable[[Row], bool], timeout: str = "10", **server: Any
) -> tuple[Session, list[Row], str]:
    """`drive` the misbehaving stdio peer in `mode`."""
    user, srv = await make_user_and_server(name=mode, command=sys.executable, args=[MISBEHAVING, mode], **server)
    return await drive(user, srv, until=until, alive=alive, clear=clear, timeout=timeout)


def note(kind: str, words: str) -> Callable[[Row], bool]:
    return lambda r: r["dir"] == "note" and r.get("kind") == kind and words in (r.get("text") or "")


def problem(words: str) -> Callable[[Row], bool]:
    return lambda r: any(words in p for p in (r.get("problems") or []) + [r.get("parse_error") or ""])


# --- stdio ---------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1800, 100_000])
async def test_deeply_nested_json_is_saved_from_its_raw_text_and_nothing_after_it_is_lost(depth):
    """A frame nested deeper than any encoder goes (1,800 levels: json reads it; 100,000: nothing
    does) is saved with its whole raw text and a problem noted; the call's result reaches the page,
    and every later event is saved."""
    user, srv = await make_user_and_server(
        name=f"deep{depth}", command=sys.executable, args=[MISBEHAVING, "deep", str(depth)]
    )
    _, rows, seen = await drive(
        user,
        srv,
        until=("<strong>tools/call</strong>", "deep done", "after deep"),
        alive=True,
        clear=problem("nested deeper than 200 levels" if depth < 5000 else "recursion"),
    )
    deep = next(r for r in rows if r["dir"] == "recv" and "notifications/message" in r["raw"] and "[[[" in r["raw"])
    assert deep["raw"].count("[") == depth  # the whole text
    if depth < 5000:
        cut = deep["message"]["params"]["data"]
        for _ in range(197):
            cut = cut[0]
        assert cut == [jsontext.CUT]  # the parsed form, cut at 200 levels
    else:
        assert deep["message"] is None and "recursion" in deep["parse_error"]
    assert [
        r["message"]["params"]["data"]
        for r in rows
        if r["dir"] == "recv" and (r.get("message") or {}).get("method") == "notifications/message"
    ][-1] == "after deep"


def test_a_row_that_cannot_be_encoded_is_saved_from_its_raw_text_with_the_rest_of_its_batch():
    """The last line of defence, below the tap's cut: save_events stores such a row without its
    parsed form, says why, and saves the others of the batch."""
    from playground.transcripts.recorder import save_events

    session = Session.objects.create(server_name="unencodable")
    deep: Any = []
    for _ in range(1800):
        deep = [deep]
    rows = [
        {"seq": 1, "t": 0.0, "dir": "recv", "raw": "[[[...]]]", "message": deep, "http": {"status": 200}},
        {"seq": 2, "t": 0.1, "dir": "recv", "raw": "{}", "message": {}},
    ]
    save_events(session.pk, rows)
    saved = list(Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True))
    assert [r["seq"] for r in saved] == [1, 2] and saved[1] == rows[1]
    assert saved[0]["message"] is None and saved[0]["raw"] == "[[[...]]]" and saved[0]["http"] == {"status": 200}
    assert saved[0]["problems"] == [
        "stored from its raw text: the parsed frame could not be encoded again (nested too deep)"
    ]


async def test_a_result_checked_against_a_catastrophic_pattern_is_shown_without_stalling():
    """outputSchema pattern ^(a+)+$ and "a" * 40 + "!": minutes with a backtracking engine (every
    request of the process waited); now the Result says it does not match, and the page answers."""
    _, _, seen = await hostile(
        "redos",
        until=("redos done", "does not match"),
        alive=True,
        clear=lambda r: r["dir"] == "recv" and "structuredContent" in (r.get("raw") or ""),
    )
    assert "^(a+)+$" in html.unescape(seen)


@pytest.mark.parametrize("mode", ["schema-bomb", "unique-bomb"])
async def test_a_result_too_costly_to_check_says_not_checked_and_the_page_answers_meanwhile(mode):
    """An outputSchema and a structuredContent that jsonschema checks for ever (a doubling $ref
    chain) or for minutes (uniqueItems, pairwise): the check runs in the sandbox, is stopped at
    its deadline, and the Result says it was not checked, never that it matches; the page
    answers throughout."""
    _, _, seen = await hostile(
        mode,
        until=(f"{mode} done", "not checked against outputSchema"),
        alive=True,
        clear=lambda r: r["dir"] == "recv" and "structuredContent" in (r.get("raw") or ""),
    )
    result = seen.split('aria-label="Result"', 1)[1]
    assert "Not checked: checking it took longer than" in html.unescape(result)
    assert "matches outputSchema" not in result


async def test_elicitation_schemas_that_double_at_every_level_become_json_fields_and_the_page_answers():
    """Six elicitation/create requests on notifications/initialized, each a doubling allOf chain
    26 deep (2^26 merges for the form builder: the process answered nothing for minutes): each
    card is built within the elicitation budget, offers one JSON field saying why, and the page
    answers meanwhile."""
    user, srv = await make_user_and_server(
        name="elicit-bomb", command=sys.executable, args=[MISBEHAVING, "elicit-bomb"]
    )
    session = await start_session(srv, user)
    comm = communicator(session.pk, user)
    try:
        assert (await comm.connect())[0]
        seen = html.unescape(await receive_until(comm, *(f"bomb {i}" for i in range(6)), timeout=60))
        await page_answers_ping(comm, True)
    finally:
        await comm.disconnect()
        await stop_all()
    cards = seen.split('id="server-request-')[1:]
    assert len(cards) == 6
    for card in cards:
        assert "the schema is too large to turn into a form here: more than 10,000 steps of work" in card
        assert 'data-sf-kind="json"' in card and "data-sf-root" in card


async def test_garbage_and_partial_lines():
    _, rows, seen = await hostile(
        "garbage",
        until=("<strong>tools/call</strong>", "done"),
        alive=True,
        clear=lambda r: r["dir"] == "recv" and r.get("parse_error"),
    )
    assert [r["raw"] for r in rows if r["dir"] == "recv" and r.get("parse_error")] == [
        "this is not json",
        '{"jsonrpc": "2.0", "id": ',
        "",
        "[1, 2",
    ]
    line = lines.line(next(r for r in rows if r.get("parse_error")))
    assert line["is_error"] and line["problems"][0].startswith("not JSON")  # the page says so on the line


async def test_invalid_utf8():
    await hostile("utf8", until=("<strong>tools/call</strong>", "done"), alive=True, clear=problem("invalid UTF-8"))


async def test_crash_in_the_middle_of_a_call():
    session, rows, seen = await hostile(
        "crash",
        until=("status-ended", 'aria-label="Result"'),
        alive=False,
        clear=lambda r: r["dir"] == "stderr" and "going down" in r["text"],
    )
    assert "exited with code 3" in session.end_reason and "exited with code 3" in seen
    assert any(r["dir"] == "recv" and r.get("parse_error") and r["raw"].startswith('{"jsonrpc"') for r in rows)
    # The call's own answer says why it got none (it was not the user who cancelled it).
    result = seen.split('aria-label="Result"', 1)[1]
    assert "no answer: the session ended (server process exited with code 3)" in result
    assert "cancelled by the user" not in result


async def test_a_server_that_never_answers():
    _, rows, _ = await hostile(
        "silent", until=("timed out",), alive=True, timeout="1", clear=note("timeout", "tools/call")
    )
    call = next(r for r in rows if (r["message"] or {}).get("method") == "tools/call")
    cancelled = [r for r in rows if (r["message"] or {}).get("method") == "notifications/cancelled"]
    assert cancelled[0]["message"]["params"]["requestId"] == call["message"]["id"]  # we told the server


async def test_fifty_megabyte_message_is_recorded_truncated_with_its_size(settings):
    settings.PLAYGROUND_MAX_FRAME_BYTES = 100_000
    _, rows, seen = await hostile(
        "big",
        # (The frame's transcript line may come after the Result and the log panel: wait for it too.)
        until=("<strong>tools/call</strong>", "done", 'id="feed-log"', "truncated: "),
        alive=True,
        clear=lambda r: r.get("truncated") and r["size"] > 50_000_000,
    )
    big = next(r for r in rows if r.get("truncated"))
    assert len(big["raw"]) == 100_000 and big["message"] is None
    assert f"truncated: {big['size']} bytes" in seen  # the line says so
    assert lines.line(big)["label"] == "truncated"  # not "unparsed": it was parsed and delivered
    log = seen[seen.index('id="feed-log"') :]  # the log panel shows the message, cut
    shown = int(re.search(r"… \((\d+) characters\)", log).group(1))
    assert 50_000_000 <= shown < big["size"]


async def test_megabytes_of_text_in_names_instructions_and_errors_keep_every_fragment_sendable(settings):
    """3 MB in the server's name, instructions, a tool's title and description, a log message and
    an error: each place shows a cut, the page gets its state and catalogue, and goes on."""
    settings.PLAYGROUND_MAX_FRAME_BYTES = 20_000_000
    saved, rows, seen = await hostile(
        "huge",
        until=("<strong>tools/call</strong>", "failed: xxx", 'id="feed-log"'),
        alive=True,
        clear=lambda r: (r.get("message") or {}).get("error"),
    )
    name, instructions = saved.server_info["name"], saved.instructions
    assert len(instructions) > 1_000_000 and len(name) > 1_000_000
    for text in (name, instructions):
        assert f"({len(text)} characters; the transcript has all of it)" in seen
    assert 'id="catalogue"' in seen and ">go<" in seen
    error = next(r["message"]["error"]["message"] for r in rows if (r.get("message") or {}).get("error"))
    assert f"({len(error)} characters in all)" in seen  # the error message, cut


async def test_nul_and_unpaired_surrogates_reach_the_page_and_the_database():
    """JSON escapes the page cannot encode ("\\ud800") and NUL, escaped and raw: the page shows
    them replaced, the frames are saved (on PostgreSQL too, see tests/scaleout)."""
    _, rows, seen = await hostile(
        "escapes",
        until=("<strong>tools/call</strong>", "done \ufffd"),
        alive=True,
        clear=lambda r: r["dir"] == "recv" and r.get("parse_error") and "\x00" in r["raw"],
    )
    note = next(r for r in rows if (r.get("message") or {}).get("method") == "notifications/message")
    assert note["message"]["params"]["data"] == "lone \ud800 nul \x00 end"  # SQLite keeps them exactly


async def test_a_long_history_of_big_frames_replays_in_sendable_fragments():
    """1,000 events of a few KB each, replayed on connect: several fragments, the first replacing
    the lines and the others appending, all of them arriving (one 3 MB message closed the socket)."""
    user, _ = await make_user_and_server()

    def history() -> Session:
        session = Session.objects.create(server_name="busy", owner=user, status=Session.Status.ENDED)
        for seq in range(1, 1001):
            message = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": f"{seq} " + "é" * 1000}}
            Event.objects.create(
                session=session,
                seq=seq,
                t=seq / 100,
                dir="recv",
                data={"seq": seq, "t": seq / 100, "dir": "recv", "raw": json.dumps(message), "message": message},
            )
        return session

    session = await database_sync_to_async(history)()
    comm = communicator(session.pk, user)
    try:
        assert (await comm.connect())[0]
        seen = await receive_until(comm, 'id="ev-1000"', 'id="session-state"')
    finally:
        await comm.disconnect()
    fragments = seen.split('\n<div id="transcript-lines"')
    assert len(fragments) > 2 and seen.startswith('<div id="transcript-lines" hx-swap-oob="innerHTML">')
    assert [int(n) for n in re.findall(r'<details class="ev[^"]*" id="ev-(\d+)"', seen)] == list(range(1, 1001))


async def test_a_flood_of_notifications_keeps_the_page_windowed(settings):
    settings.PLAYGROUND_PAGE_MAX_LINES = 100
    session, rows, seen = await hostile(
        "flood", until=("flood done", "data-skipped="), alive=True, clear=lambda r: r["dir"] == "recv"
    )
    notes = [r for r in rows if (r.get("message") or {}).get("method") == "notifications/message"]
    assert len(notes) == 100_000  # the database has every one
    shown = set(re.findall(r'id="ev-(\d+)"', seen))
    skipped = sum(int(n) for n in re.findall(r'data-skipped="(\d+)"', seen))
    assert skipped > 0 and "more events (see" in seen
    assert len(shown) < 10_000 and len(shown) + skipped <= len(rows)
    # The Log panel too gets the latest of each burst and a count of the rest, not 100,000 entries.
    logged = len(re.findall(r'<li class="feed-entry level-', seen))
    left_out = sum(int(n) for n in re.findall(r"… (\d+) more notifications", seen))
    assert 0 < logged < 10_000 and left_out > 0 and logged + left_out <= len(notes)


async def test_a_flood_on_stderr():
    # The result and the stderr lines come on two pipes: either may be read first.
    _, rows, seen = await hostile(
        "stderr", until=("stderr done", "&lt;script&gt;alert(1)"), alive=True, clear=lambda r: r["dir"] == "stderr"
    )
    assert sum(r["dir"] == "stderr" for r in rows) == 20_000
    assert "<script>alert(1)</script>" not in seen and "&lt;script&gt;" in seen


def result_section(seen: str) -> str:
    """The last Result region the page got, alone (not the fragments after it)."""
    return re.findall(r'<section id="result".*?</section>', seen, re.S)[-1]


def assert_ids_flagged(rows: list[Row], seen: str) -> None:
    """An answer to id 999, one without an id, the call's answer, the same answer again: the
    first, second and fourth are flagged, and the call took the first answer."""
    call = next(r["message"] for r in rows if (r["message"] or {}).get("method") == "tools/call")
    texts = [r.get("text") or "" for r in rows if r["dir"] == "note"]
    assert [t for t in texts if "unknown or already answered id" in t] == [
        "response with unknown or already answered id 999",
        f"response with unknown or already answered id {call['id']}",
    ]
    assert "frame is not a JSON-RPC request, notification or response" in texts
    assert '<pre class="text">first</pre>' in result_section(seen)


async def test_unknown_duplicate_and_missing_ids():
    _, rows, seen = await hostile(
        "ids",
        until=("<strong>tools/call</strong>", "first"),
        alive=True,
        clear=note("error", "unknown or already answered id 999"),
    )
    assert_ids_flagged(rows, seen)


WRONG_JSONRPC = "jsonrpc field is &#x27;1.0&#x27;, expected &#x27;2.0&#x27;"  # as a transcript line shows it


async def test_wrong_jsonrpc_field():
    """Taken leniently: the call gets its result, and the line of the answer says what is wrong."""
    _, _, seen = await hostile(
        "jsonrpc",
        until=("<strong>tools/call</strong>", WRONG_JSONRPC),
        alive=True,
        clear=problem("jsonrpc field is '1.0'"),
    )
    assert '<pre class="text">old</pre>' in result_section(seen)
    assert f'<ul class="problems"><li>{WRONG_JSONRPC}</li></ul>' in seen


async def test_killing_the_server_mid_flood_saves_every_recorded_event():
    user, srv = await make_user_and_server(command=sys.executable, args=[MISBEHAVING, "endless"])
    session = await start_session(srv, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await call_go(comm)
        await receive_until(comm, "notifications/message")  # the flood is under way
        worker = WORKERS[session.pk]
        os.kill(worker.client.transport.pid, signal.SIGKILL)
        await receive_until(comm, "status-ended", timeout=60)
    finally:
        await comm.disconnect()
        await stop_all()
    saved, rows = await assert_saved(session.pk, worker.tap.seq)
    assert "SIGKILL" in saved.end_reason, saved.end_reason


# --- HTTP ----------------------------------------------------------------------------------


def fault_server(fault: Callable[[Request, asyncio.StreamWriter], Any]):
    """A Streamable HTTP server that handshakes and lists `go` properly, then `fault`s the call."""

    async def handler(req: Request, w: asyncio.StreamWriter) -> None:
        body = json.loads(req.body or b"{}") if req.method == "POST" else {}
        method, rid = body.get("method"), body.get("id")
        if req.method != "POST":
            w.write(head("405 Method Not Allowed", None, "Content-Length: 0\r\n"))
        elif method == "tools/call":
            await fault(req, w)
        elif rid is None:
            w.write(head("202 Accepted", None, "Content-Length: 0\r\n"))
        else:
            result: Any = (
                {"tools": [{"name": "go", "inputSchema": {"type": "object"}}]} if method == "tools/list" else {}
            )
            if method == "initialize":
                result = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fault", "version": "0"},
                }
            w.write(
                head("200 OK", "application/json")
                + json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
            )
        await w.drain()

    return FaultServer(handler)


async def http_case(
    fault, *, until: tuple[str, ...], clear: Callable[[Row], bool], timeout: str = "10"
) -> tuple[list[Row], str]:
    """`drive` over Streamable HTTP: the worker carries on (HTTP has no connection to lose)."""
    async with fault_server(fault) as server:
        user, srv = await make_user_and_server(transport="http", command="", args=[], url=server.url)
        _, rows, seen = await drive(user, srv, until=until, alive=True, clear=clear, timeout=timeout)
    return rows, seen


def result_of(seen: str) -> str:
    """The last Result region the page got."""
    return seen.rsplit('aria-label="Result"', 1)[1]


def reply(rid: Any, message: dict) -> dict:
    """`message` as the answer to the request of id `rid`."""
    return {"jsonrpc": "2.0", "id": rid, **message}


def answer(req: Request, message: dict) -> dict:
    """`message` as the answer to the request `req` carries (its id added)."""
    return reply(json.loads(req.body)["id"], message)


def sse(*frames: bytes | dict) -> bytes:
    """An SSE body: one `data:` event per frame."""
    return b"".join(b"data: " + (f if isinstance(f, bytes) else json.dumps(f).encode()) + b"\n\n" for f in frames)


DONE = {"result": {"content": [{"type": "text", "text": "done"}]}}
LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "log"}}

# Both HTTP transports carry answers as SSE events: Streamable HTTP on the POST's response, the
# old HTTP+SSE (2024-11-05) on its one GET stream. The cases written as events run over both.
TRANSPORTS = [pytest.param("http", id="streamable-http"), pytest.param("sse", id="http+sse")]
Events = Callable[[Any], Iterable[bytes | None]]  # the call's id -> chunks of SSE (None: cut)


def legacy_sse_server(on_call: Events) -> FaultServer:
    """An HTTP+SSE server: POSTs get 202 and every answer goes on the GET stream. It handshakes and
    lists `go` properly; `tools/call` puts `on_call(id)` on the stream, chunk by chunk (None ends
    the stream there)."""
    to_stream: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def handler(req: Request, w: asyncio.StreamWriter) -> None:
        if req.method == "GET":
            w.write(head("200 OK", "text/event-stream") + b"event: endpoint\ndata: /messages\n\n")
            await w.drain()
            while (chunk := await to_stream.get()) is not None:
                w.write(chunk)
                await w.drain()
            w.close()
            return
        body = json.loads(req.body)
        w.write(head("202 Accepted", None, "Content-Length: 0\r\n"))
        await w.drain()
        method, rid = body.get("method"), body.get("id")
        if method == "tools/call":
            for chunk in on_call(rid):
                await to_stream.put(chunk)
        elif rid is not None:
            result: Any = (
                {"tools": [{"name": "go", "inputSchema": {"type": "object"}}]} if method == "tools/list" else {}
            )
            if method == "initialize":
                result = {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "old-sse", "version": "0"},
                }
            await to_stream.put(sse(reply(rid, {"result": result})))

    return FaultServer(handler)


async def stream_case(
    transport: str, events: Events, *, until: tuple[str, ...], clear: Callable[[Row], bool], timeout: str = "10"
) -> tuple[list[Row], str]:
    """`drive` with the call answered by the SSE `events(id)` over `transport`; the session carries on."""
    if transport == "http":

        async def fault(req: Request, w: asyncio.StreamWriter) -> None:
            w.write(head("200 OK", "text/event-stream"))
            for chunk in events(json.loads(req.body)["id"]):
                if chunk is None:
                    break
                w.write(chunk)
                await w.drain()

        return await http_case(fault, until=until, clear=clear, timeout=timeout)
    async with legacy_sse_server(events) as server:
        user, srv = await make_user_and_server(transport="sse", command="", args=[], url=server.url)
        saved, rows, seen = await drive(user, srv, until=until, alive=True, clear=clear, timeout=timeout)
    assert saved.transport == "sse" and saved.protocol_version == "2024-11-05"
    return rows, seen


@pytest.mark.parametrize(
    "status", ["400 Bad Request", "404 Not Found", "500 Internal Server Error", "503 Service Unavailable"]
)
async def test_http_error_statuses(status):
    async def fail(req, w):
        w.write(head(status, "text/plain") + b"<script>alert(1)</script> broken")

    code = status.split()[0]
    rows, seen = await http_case(
        fail, until=("<strong>tools/call</strong>",), clear=lambda r: (r.get("http") or {}).get("status") == int(code)
    )
    result = result_of(seen)
    assert "transport error" in result and f"HTTP {code}: &lt;script&gt;alert(1)&lt;/script&gt; broken" in result
    assert any(r["dir"] == "recv" and r["raw"] == "<script>alert(1)</script> broken" for r in rows)  # the body


async def test_http_wrong_content_type():
    async def html(req, w):
        w.write(head("200 OK", "text/html") + b"<html><img src=x onerror=alert(1)></html>")

    _, seen = await http_case(
        html,
        until=("<strong>tools/call</strong>",),
        clear=lambda r: r["dir"] == "recv" and r.get("parse_error") and "onerror" in r["raw"],
    )
    assert "unexpected Content-Type &#x27;text/html&#x27;" in result_of(seen)


async def test_http_sse_stream_cut_mid_event():
    async def cut(req, w):
        w.write(
            head("200 OK", "text/event-stream")
            + b'data: {"jsonrpc":"2.0","id":'
            + str(json.loads(req.body)["id"]).encode()
        )

    _, seen = await http_case(
        cut, until=("<strong>tools/call</strong>",), clear=note("error", "cut in the middle of an event")
    )
    assert "SSE stream ended before the response" in result_of(seen)


async def test_http_slow_trickle_of_bytes_times_out():
    async def trickle(req, w):
        w.write(head("200 OK", "text/event-stream") + b"data: ")
        await w.drain()
        for _ in range(200):
            w.write(b" ")
            await w.drain()
            await asyncio.sleep(0.05)  # the peer's pace, not a wait for our side

    _, seen = await http_case(
        trickle,
        timeout="1",
        until=("<strong>tools/call</strong>",),
        clear=lambda r: r["dir"] == "note" and r.get("kind") == "timeout",
    )
    assert "timed out" in result_of(seen)


async def test_http_slow_trickle_that_completes_is_answered():
    """A whole response, a few bytes at a time: the client reassembles it."""

    async def trickle(req, w):
        body = sse(LOG, answer(req, DONE))
        w.write(head("200 OK", "text/event-stream"))
        for i in range(0, len(body), 7):
            w.write(body[i : i + 7])
            await w.drain()
            await asyncio.sleep(0.005)

    rows, seen = await http_case(
        trickle,
        until=("<strong>tools/call</strong>", "done"),
        clear=lambda r: (r.get("message") or {}).get("method") == "notifications/message",
    )
    assert "badge bad" not in result_of(seen)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_http_garbage_and_partial_events_on_the_stream(transport):
    def garbage(rid):
        yield (
            sse(b"this is not json", b'{"jsonrpc": "2.0", "id": ', b"[1, 2")
            + b": a comment\n\nevent: odd\ndata: {}\n\n"
            + sse(reply(rid, DONE))
        )

    rows, seen = await stream_case(
        transport,
        garbage,
        until=("<strong>tools/call</strong>", "done"),
        clear=lambda r: r["dir"] == "recv" and r.get("parse_error"),
    )
    assert [r["raw"] for r in rows if r["dir"] == "recv" and r.get("parse_error")] == [
        "this is not json",
        '{"jsonrpc": "2.0", "id": ',
        "[1, 2",
    ]
    assert any("SSE event type 'odd'" in p for r in rows for p in r.get("problems") or [])


async def test_http_garbage_json_body():
    async def garbage(req, w):
        w.write(head("200 OK", "application/json") + b"this is not json {")

    _, seen = await http_case(
        garbage,
        until=("<strong>tools/call</strong>",),
        clear=lambda r: r["dir"] == "recv" and r.get("parse_error") and r["raw"] == "this is not json {",
    )
    assert "response body is not valid JSON" in result_of(seen)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_http_invalid_utf8(transport):
    def bad(rid):
        yield (
            b'data: {"jsonrpc":"2.0","method":"notifications/message",'
            b'"params":{"level":"info","data":"\xff\xfe bad \xc3"}}\n\n' + sse(reply(rid, DONE))
        )

    rows, _ = await stream_case(
        transport, bad, until=("<strong>tools/call</strong>", "done"), clear=problem("invalid UTF-8")
    )
    bad_note = next(r for r in rows if "invalid UTF-8" in " ".join(r.get("problems") or []))
    assert bad_note["message"]["params"]["data"] == "\ufffd\ufffd bad \ufffd"  # delivered, bytes replaced


async def test_http_connection_dropped_in_the_middle_of_a_response():
    """The HTTP form of a crash: headers promise a body, half of it comes, the connection closes."""

    async def crash(req, w):
        body = json.dumps(answer(req, DONE)).encode()
        w.write(head("200 OK", "application/json", f"Content-Length: {len(body)}\r\n") + body[: len(body) // 2])
        await w.drain()
        w.close()

    _, seen = await http_case(
        crash, until=("<strong>tools/call</strong>",), clear=note("error", "the server broke the HTTP exchange")
    )
    assert "the server broke the HTTP exchange" in result_of(seen)


async def test_http_server_that_never_answers():
    async def silent(req, w):
        await asyncio.Event().wait()  # holds the request open until the server is closed

    rows, seen = await http_case(
        silent, timeout="1", until=("<strong>tools/call</strong>",), clear=note("timeout", "tools/call")
    )
    assert "timed out" in result_of(seen)
    call = next(r for r in rows if (r["message"] or {}).get("method") == "tools/call")
    cancelled = [r for r in rows if (r["message"] or {}).get("method") == "notifications/cancelled"]
    assert cancelled[0]["message"]["params"]["requestId"] == call["message"]["id"]


async def test_http_fifty_megabyte_response_is_recorded_truncated_with_its_size(settings):
    settings.PLAYGROUND_MAX_FRAME_BYTES = 100_000

    async def big(req, w):
        w.write(
            head("200 OK", "application/json")
            + json.dumps(answer(req, {"result": {"content": [{"type": "text", "text": "a" * 50_000_000}]}})).encode()
        )
        await w.drain()

    rows, seen = await http_case(
        big,
        until=("<strong>tools/call</strong>", "50000000 characters in all"),
        clear=lambda r: r.get("truncated") and r["size"] > 50_000_000,
    )
    frame = next(r for r in rows if r.get("truncated"))
    assert len(frame["raw"]) == 100_000 and frame["message"] is None
    assert "cut here: 50000000 characters in all" in result_of(seen)  # the page shows the text, cut


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_http_a_flood_of_notifications_on_the_stream_keeps_the_page_windowed(settings, transport):
    settings.PLAYGROUND_PAGE_MAX_LINES = 100
    count = 100_000  # as over stdio (the flood)

    def flood(rid):
        for start in range(0, count, 1000):
            yield sse(*({**LOG, "params": {"level": "info", "data": i}} for i in range(start, start + 1000)))
        yield sse(reply(rid, {"result": {"content": [{"type": "text", "text": "flood done"}]}}))

    rows, seen = await stream_case(
        transport, flood, until=("flood done", "data-skipped="), clear=lambda r: r["dir"] == "recv"
    )
    logged = [
        r["message"]["params"]["data"]
        for r in rows
        if (r.get("message") or {}).get("method") == "notifications/message"
    ]
    assert logged == list(range(count))  # every one saved, in order
    skipped = sum(int(n) for n in re.findall(r'data-skipped="(\d+)"', seen))
    assert skipped > 0 and len(set(re.findall(r'id="ev-(\d+)"', seen))) < count


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_http_unknown_duplicate_and_missing_ids(transport):
    def ids(rid):
        yield sse(
            reply(999, DONE),
            {"jsonrpc": "2.0", "result": {"content": []}},
            reply(rid, {"result": {"content": [{"type": "text", "text": "first"}]}}),
            reply(rid, {"result": {"content": [{"type": "text", "text": "duplicate"}]}}),
        )

    rows, seen = await stream_case(
        transport,
        ids,
        until=("<strong>tools/call</strong>", "first"),
        clear=note("error", "unknown or already answered id 999"),
    )
    assert_ids_flagged(rows, seen)


async def test_http_json_body_answering_another_id():
    async def other(req, w):
        w.write(head("200 OK", "application/json") + json.dumps({"jsonrpc": "2.0", "id": 999, **DONE}).encode())

    _, seen = await http_case(
        other, until=("<strong>tools/call</strong>",), clear=note("error", "unknown or already answered id 999")
    )
    assert "does not answer this request" in result_of(seen)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_http_wrong_jsonrpc_field(transport):
    """Streamable HTTP answers with a JSON body here, HTTP+SSE with an event on its stream."""

    async def old_body(req, w):
        w.write(head("200 OK", "application/json") + json.dumps(answer(req, {**DONE, "jsonrpc": "1.0"})).encode())

    def old_event(rid):
        yield sse(reply(rid, {**DONE, "jsonrpc": "1.0"}))

    until, clear = ("<strong>tools/call</strong>", WRONG_JSONRPC), problem("jsonrpc field is '1.0'")
    if transport == "http":
        _, seen = await http_case(old_body, until=until, clear=clear)
    else:
        _, seen = await stream_case(transport, old_event, until=until, clear=clear)
    assert '<pre class="text">done</pre>' in result_section(seen)
    assert f'<ul class="problems"><li>{WRONG_JSONRPC}</li></ul>' in seen


async def test_legacy_sse_stream_cut_mid_event_ends_the_session_cleanly():
    """HTTP+SSE (2024-11-05): the GET stream is the connection. Cut in the middle of the call's
    answer, the session ends with a note saying so, and the call says it got no answer."""

    def cut(rid):
        yield b'data: {"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":{"con'
        yield None

    async with legacy_sse_server(cut) as server:
        user, srv = await make_user_and_server(transport="sse", command="", args=[], url=server.url)
        saved, _, seen = await drive(
            user,
            srv,
            until=("status-ended", 'aria-label="Result"'),
            alive=False,
            clear=note("error", "cut in the middle of an event"),
        )
    assert "cut in the middle of an event" in saved.end_reason
    assert "no answer: the session ended" in result_of(seen)


async def test_unpaired_surrogates_in_names_and_uris_keep_the_catalogue_the_result_and_the_session_page():
    """A tool's, a resource's, a template's and a prompt's name or URI, and a result's resource
    link, hold "\\ud800": none can be URL-encoded for its link as it is. The tab gets the
    catalogue and the Result (U+FFFD in their place), so does a reconnecting tab (its replay and
    snapshot render them again), and the session page and its share page open (their transcript
    lines hold them too)."""
    user, srv = await make_user_and_server(name="lone", command=sys.executable, args=[MISBEHAVING, "lone-surrogates"])
    session = await start_session(srv, user)
    shown = "lone \ufffd end"
    link = 'href="resource/?uri=file%3A%2F%2F%2Flone%20%EF%BF%BD%20end"'
    try:
        for _ in range(2):  # the first tab, then a reconnecting one
            comm = communicator(session.pk, user)
            try:
                assert (await comm.connect())[0]
                seen = await receive_until(comm, 'id="catalogue"', ">go<", f">{shown}<")
                if _ == 0:
                    await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "go"}))
                seen += await receive_until(comm, 'aria-label="Result"', "linked", link)
                catalogue = seen[seen.index('<div id="catalogue"') :]
                assert "?uri=file%3A///lone%20%EF%BF%BD%20end" in catalogue  # the resource
                assert "?name=lone%20%EF%BF%BD%20end" in catalogue  # the tool, the prompt
            finally:
                await comm.disconnect()
        async with asyncio.timeout(20):  # the transcript saved, up to the call's answer
            while not any('"linked"' in (r.get("raw") or "") for r in await rows_of(session.pk)):
                await asyncio.sleep(0.05)
        for page in await database_sync_to_async(pages_of)(user, session):
            assert page.status_code == 200 and f'"uri": "file:///{shown}"' in html.unescape(page.content.decode())
    finally:
        await stop_all()


def pages_of(user: Any, session: Session) -> list[Any]:
    """The session page, and its share page."""
    from django.test import Client

    from playground.transcripts.models import ShareLink

    client = Client()
    client.force_login(user)
    link = ShareLink.objects.create(session=session, created_by=user)
    return [client.get(f"/sessions/{session.pk}/"), Client().get(f"/share/{link.token}/")]
