"""Hostile servers through the whole live path: server → worker → database → consumer → page.

Every case checks the same four things: a clear event in the saved transcript says what went
wrong; the page still answers (a `ping` from the page gets its answer, or the notice that the
session ended); the worker either carries on or ends the session cleanly; and the transcript
is saved, every event in order, up to the failure.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async

from playground.sessions import render
from playground.sessions.worker import WORKERS, start_session
from playground.transcripts.models import Event, Session
from tests.conftest import PEERS
from tests.core.http_peers import FaultServer, Request, head

from .test_live import communicator, make_user_and_server, receive_until, stop_all

pytestmark = pytest.mark.django_db(transaction=True)

MISBEHAVING = str(PEERS / "misbehaving.py")
Row = dict[str, Any]


async def rows_of(session_id: int) -> list[Row]:
    return await database_sync_to_async(lambda: list(
        Event.objects.filter(session_id=session_id).order_by("seq").values_list("data", flat=True)))()


async def assert_saved(session_id: int) -> tuple[Session, list[Row]]:
    """Ended cleanly, with every event the tap numbered saved in order."""
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    rows = await rows_of(session_id)
    assert session.status in ("ended", "failed") and session.worker_channel == ""
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    assert session.event_count == len(rows)
    return session, rows


async def page_answers_ping(comm, alive: bool) -> None:
    await comm.send_to(text_data=json.dumps({"action": "ping"}))
    await receive_until(comm, "<strong>ping</strong>" if alive else "This session has ended")


async def call_go(comm, *, timeout: str = "10") -> None:
    await receive_until(comm, 'id="catalogue"', ">go<")
    await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "go", "timeout": timeout}))


async def hostile(mode: str, *, until: tuple[str, ...], alive: bool, clear: Callable[[Row], bool],
                  timeout: str = "10", **server: Any) -> tuple[Session, list[Row], str]:
    """Connect to the misbehaving peer, call `go`, wait for `until`, then check the four things."""
    user, srv = await make_user_and_server(command=sys.executable, args=[MISBEHAVING, mode], **server)
    session = await start_session(srv, user)
    comm = communicator(session.pk, user)
    try:
        assert (await comm.connect())[0]
        await call_go(comm, timeout=timeout)
        seen = await receive_until(comm, *until, timeout=60)
        await page_answers_ping(comm, alive)
        assert (session.pk in WORKERS) == alive
    finally:
        await comm.disconnect()
        await stop_all()
    saved, rows = await assert_saved(session.pk)
    assert any(clear(r) for r in rows), f"no clear event for {mode}"
    return saved, rows, seen


def note(kind: str, words: str) -> Callable[[Row], bool]:
    return lambda r: r["dir"] == "note" and r.get("kind") == kind and words in (r.get("text") or "")


def problem(words: str) -> Callable[[Row], bool]:
    return lambda r: any(words in p for p in (r.get("problems") or []) + [r.get("parse_error") or ""])


# --- stdio ---------------------------------------------------------------------------------

async def test_garbage_and_partial_lines():
    _, rows, seen = await hostile("garbage", until=("<strong>call_tool</strong>", "done"), alive=True,
                                  clear=lambda r: r["dir"] == "recv" and r.get("parse_error"))
    assert [r["raw"] for r in rows if r["dir"] == "recv" and r.get("parse_error")] == [
        "this is not json", '{"jsonrpc": "2.0", "id": ', "", "[1, 2"]
    line = render.line(next(r for r in rows if r.get("parse_error")))
    assert line["is_error"] and line["problems"][0].startswith("not JSON")    # the page says so on the line


async def test_invalid_utf8():
    await hostile("utf8", until=("<strong>call_tool</strong>", "done"), alive=True,
                  clear=problem("invalid UTF-8"))


async def test_crash_in_the_middle_of_a_call():
    session, rows, seen = await hostile("crash", until=("status-ended",), alive=False,
                                        clear=lambda r: r["dir"] == "stderr" and "going down" in r["text"])
    assert "exited with code 3" in session.end_reason and "exited with code 3" in seen
    assert any(r["dir"] == "recv" and r.get("parse_error") and r["raw"].startswith('{"jsonrpc"') for r in rows)


async def test_a_server_that_never_answers():
    _, rows, _ = await hostile("silent", until=("timed out",), alive=True, timeout="1",
                               clear=note("timeout", "tools/call"))
    call = next(r for r in rows if (r["message"] or {}).get("method") == "tools/call")
    cancelled = [r for r in rows if (r["message"] or {}).get("method") == "notifications/cancelled"]
    assert cancelled[0]["message"]["params"]["requestId"] == call["message"]["id"]   # we told the server


async def test_fifty_megabyte_message_is_recorded_truncated_with_its_size(settings):
    settings.PLAYGROUND_MAX_FRAME_BYTES = 100_000
    _, rows, _ = await hostile("big", until=("<strong>call_tool</strong>", "done"), alive=True,
                               clear=lambda r: r.get("truncated") and r["size"] > 50_000_000)
    big = next(r for r in rows if r.get("truncated"))
    assert len(big["raw"]) == 100_000 and big["message"] is None


async def test_a_flood_of_notifications_keeps_the_page_windowed(settings):
    settings.PLAYGROUND_PAGE_MAX_LINES = 100
    session, rows, seen = await hostile("flood", until=("flood done",), alive=True,
                                        clear=lambda r: r["dir"] == "recv")
    notes = [r for r in rows if (r.get("message") or {}).get("method") == "notifications/message"]
    assert len(notes) == 100_000                              # the database has every one
    shown = set(re.findall(r'id="ev-(\d+)"', seen))
    skipped = sum(int(n) for n in re.findall(r'data-skipped="(\d+)"', seen))
    assert skipped > 0 and "more events (see" in seen
    assert len(shown) < 10_000 and len(shown) + skipped <= len(rows)
    # The Log panel too gets the latest of each burst and a count of the rest, not 100,000 entries.
    logged = len(re.findall(r'<li class="feed-entry level-', seen))
    left_out = sum(int(n) for n in re.findall(r"… (\d+) more notifications", seen))
    assert 0 < logged < 10_000 and left_out > 0 and logged + left_out <= len(notes)


async def test_a_flood_on_stderr():
    _, rows, seen = await hostile("stderr", until=("stderr done",), alive=True,
                                  clear=lambda r: r["dir"] == "stderr")
    assert sum(r["dir"] == "stderr" for r in rows) == 20_000
    assert "<script>alert(1)</script>" not in seen and "&lt;script&gt;" in seen


async def test_unknown_duplicate_and_missing_ids():
    _, rows, _ = await hostile("ids", until=("<strong>call_tool</strong>", "first"), alive=True,
                               clear=note("error", "unknown or already answered id 999"))
    texts = [r.get("text") or "" for r in rows if r["dir"] == "note"]
    assert sum("unknown or already answered id" in t for t in texts) == 2        # 999, then the duplicate
    assert any("not a JSON-RPC request, notification or response" in t or "without an id" in t for t in texts)


async def test_wrong_jsonrpc_field():
    await hostile("jsonrpc", until=("<strong>call_tool</strong>",), alive=True, clear=problem("jsonrpc"))


async def test_killing_the_server_mid_flood_saves_every_recorded_event():
    user, srv = await make_user_and_server(command=sys.executable, args=[MISBEHAVING, "endless"])
    session = await start_session(srv, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await call_go(comm)
        await receive_until(comm, "notifications/message")          # the flood is under way
        worker = WORKERS[session.pk]
        os.kill(worker.client.transport.pid, signal.SIGKILL)
        await receive_until(comm, "status-ended", timeout=60)
        recorded = worker.tap.seq
    finally:
        await comm.disconnect()
        await stop_all()
    saved, rows = await assert_saved(session.pk)
    assert len(rows) == recorded and "SIGKILL" in saved.end_reason, saved.end_reason


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
            result: Any = {"tools": [{"name": "go", "inputSchema": {"type": "object"}}]} if method == "tools/list" else {}
            if method == "initialize":
                result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "fault", "version": "0"}}
            w.write(head("200 OK", "application/json") + json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())
        await w.drain()
    return FaultServer(handler)


async def http_case(fault, *, until: tuple[str, ...], clear: Callable[[Row], bool], timeout: str = "10") -> list[Row]:
    async with fault_server(fault) as server:
        user, srv = await make_user_and_server(transport="http", command="", args=[], url=server.url)
        session = await start_session(srv, user)
        comm = communicator(session.pk, user)
        try:
            await comm.connect()
            await call_go(comm, timeout=timeout)
            await receive_until(comm, *until, timeout=30)
            await page_answers_ping(comm, alive=True)
            assert session.pk in WORKERS
        finally:
            await comm.disconnect()
            await stop_all()
    _, rows = await assert_saved(session.pk)
    assert any(clear(r) for r in rows)
    return rows


@pytest.mark.parametrize("status", ["400 Bad Request", "404 Not Found", "500 Internal Server Error",
                                    "503 Service Unavailable"])
async def test_http_error_statuses(status):
    async def fail(req, w):
        w.write(head(status, "text/plain") + b"<script>alert(1)</script> broken")
    code = status.split()[0]
    await http_case(fail, until=("<strong>call_tool</strong>", f"HTTP {code}"),
                    clear=lambda r: (r.get("http") or {}).get("status") == int(code))


async def test_http_wrong_content_type():
    async def html(req, w):
        w.write(head("200 OK", "text/html") + b"<html><img src=x onerror=alert(1)></html>")
    await http_case(html, until=("<strong>call_tool</strong>", "unexpected Content-Type"),
                    clear=lambda r: r["dir"] == "recv" and r.get("parse_error") and "onerror" in r["raw"])


async def test_http_sse_stream_cut_mid_event():
    async def cut(req, w):
        w.write(head("200 OK", "text/event-stream") + b'data: {"jsonrpc":"2.0","id":' + str(json.loads(req.body)["id"]).encode())
    await http_case(cut, until=("<strong>call_tool</strong>", "ended before the response"),
                    clear=note("error", "cut in the middle of an event"))


async def test_http_slow_trickle_of_bytes_times_out():
    async def trickle(req, w):
        w.write(head("200 OK", "text/event-stream") + b"data: ")
        await w.drain()
        for _ in range(200):
            w.write(b" ")
            await w.drain()
            await asyncio.sleep(0.05)
    await http_case(trickle, timeout="1", until=("<strong>call_tool</strong>",),
                    clear=lambda r: r["dir"] == "note" and r.get("kind") in ("error", "timeout"))
