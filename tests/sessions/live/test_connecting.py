"""Connecting, as the state strip tells it: what the session waits for while it connects, a
transcript that says "connected" only once the server answered, and a failed connection on the
wrong transport offering the switch to Auto (live, after a reload, and the switch itself)."""

from __future__ import annotations

import json
import shlex
import sys
from html import unescape

import pytest
from channels.db import database_sync_to_async
from django.test import AsyncClient, Client

from playground.mcp.config import ServerConfig
from playground.mcp.events import Tap
from playground.registry.models import Server
from playground.sessions.live.connecting import ConnectWatch, with_hint
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Session
from tests.conftest import PEERS
from tests.http_peers import free_port, start_peer, stop_peer
from tests.sessions.helpers import communicator, events, make_user_and_server, receive_until, stop_all

WAITING_INITIALIZE = "waiting for the server&#x27;s answer to initialize"


def test_each_step_of_a_connection_is_said_in_words():
    tap = Tap()
    watch = ConnectWatch(ServerConfig(transport="stdio", command="npx"))
    assert watch.text == "starting the process: npx"
    steps = []
    tap.subscribe(lambda event: watch.observe(event) and steps.append(watch.text))
    tap.note("started", "spawned npx (pid 42)", pid=42)
    tap.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
    tap.recv(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}))
    tap.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))  # not awaited: no step
    tap.note("auth", "authorization request to https://as.example/authorize", step="authorization-request")
    assert steps == [
        "process started (pid 42), about to send initialize",
        "waiting for the server's answer to initialize",
        "waiting for you to authorize (the Authorization required card)",
    ]
    assert (
        ConnectWatch(ServerConfig(transport="sse", url="http://u:pw@h/sse")).text
        == "opening the SSE stream at http://u:••••@h/sse"
    )


async def test_a_step_that_changes_while_the_strip_is_being_sent_is_sent_too():
    """The strip's send is under way (a slow channel layer) when the next step comes: that step
    is sent after it, not at the change after (which may be minutes away)."""
    import asyncio

    from playground.sessions.live.worker import SessionWorker

    worker = SessionWorker(1, ServerConfig(transport="stdio", command="npx"))
    worker.strip._state = {"status": "connecting"}
    sent: list[str] = []
    release = asyncio.Event()

    async def slow_broadcast(message: dict) -> None:
        sent.append(message["state"]["waiting"])
        if len(sent) == 1:
            await release.wait()

    worker.audience.broadcast = slow_broadcast  # type: ignore[method-assign]
    tap = worker.tap
    tap.note("started", "spawned npx (pid 42)", pid=42)  # a step: the strip is due
    async with asyncio.timeout(10):
        while not sent:
            await asyncio.sleep(0.01)
        tap.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))  # meanwhile
        release.set()
        while len(sent) < 2:
            await asyncio.sleep(0.01)
    assert sent == [
        "process started (pid 42), about to send initialize",
        "waiting for the server's answer to initialize",
    ]
    await worker.strip._steps_done()


def test_a_failed_sessions_hint_is_found_in_its_transcript():
    hint_row = {
        "dir": "note",
        "kind": "hint",
        "text": "This looks like an SSE endpoint …",
        "data": {"suggest": "auto", "looks_like": "sse"},
    }
    rows = [{"dir": "send"}, hint_row, {"dir": "note", "kind": "closed"}]
    assert with_hint({"status": "failed"}, rows)["hint"] == {
        "suggest": "auto",
        "looks_like": "sse",
        "text": "This looks like an SSE endpoint …",
    }
    assert "hint" not in with_hint({"status": "ended"}, rows)
    assert "hint" not in with_hint({"status": "failed"}, rows[:1])


@pytest.mark.django_db(transaction=True)
async def test_the_strip_says_what_a_slow_server_is_awaited_for(tmp_path):
    """A real server slow to start (as npx downloading a package is): until it answers, the tab
    is told what the session waits for; the transcript says "connected" only after the answer."""
    go = tmp_path / "go"
    peer = shlex.join([sys.executable, str(PEERS / "sdk_server.py"), "stdio"])
    script = f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done; exec {peer}"
    user, server = await make_user_and_server(command="sh", args=["-c", script])
    from playground.sessions.live.worker import start_session

    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        seen = await receive_until(comm, WAITING_INITIALIZE)
        strip = seen[seen.rindex('<div id="session-state"') :]
        assert 'class="status" role="status">connecting<' in strip
        assert 'class="elapsed" data-since="' in strip and 'title="a request gives up after 60 s' in strip
        # A reloading tab is told too (the worker's snapshot carries the strip while connecting).
        late = communicator(session.pk, user)
        await late.connect()
        await receive_until(late, WAITING_INITIALIZE)
        await late.disconnect()
        go.touch()
        await receive_until(comm, 'role="status">connected<', 'id="catalogue"')
    finally:
        await comm.disconnect()
        await stop_all()
    notes = [(r["kind"], r["seq"]) for r in await events(session.pk) if r["dir"] == "note"]
    rows = await events(session.pk)
    answered = next(r["seq"] for r in rows if r["dir"] == "recv" and (r["message"] or {}).get("id") == 1)
    assert notes[0][0] == "started"
    assert [seq for kind, seq in notes if kind == "connected"] and all(
        seq > answered for kind, seq in notes if kind == "connected"
    )


@pytest.fixture
def sdk_sse():
    port = free_port()
    proc = start_peer([sys.executable, str(PEERS / "sdk_server.py"), "sse", str(port)], port)
    yield f"http://127.0.0.1:{port}/sse"
    stop_peer(proc)


@pytest.mark.django_db(transaction=True)
async def test_the_wrong_transport_offers_auto_and_the_switch_connects(sdk_sse):
    user, server = await make_user_and_server(transport="http", url=sdk_sse, command="")
    from playground.sessions.live.worker import start_session

    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        seen = unescape(await receive_until(comm, "status-failed", "Switch to Auto and retry"))
        assert "This looks like an SSE endpoint (POST answered HTTP 405" in seen
    finally:
        await comm.disconnect()
    browser = Client()
    await database_sync_to_async(browser.force_login)(user)
    page = unescape((await database_sync_to_async(browser.get)(f"/sessions/{session.pk}/")).content.decode())
    assert "This looks like an SSE endpoint" in page and "Switch to Auto and retry" in page  # after a reload
    # The share of that session shows what failed, not the switch.
    share = await database_sync_to_async(browser.post)(f"/sessions/{session.pk}/share/")
    token = share.content.decode().split("/share/")[1].split("/")[0]
    shared = (await database_sync_to_async(Client().get)(f"/share/{token}/")).content.decode()
    assert "HTTP 405" in shared and "Switch to" not in shared and "/retry/" not in shared

    owner = AsyncClient()  # (async: the new session's worker lives in this test's loop)
    await owner.aforce_login(user)
    response = await owner.post(f"/sessions/{session.pk}/retry/", {"transport": "auto"}, headers={"HX-Request": "true"})
    assert response.status_code == 204
    new_pk = int(response["HX-Redirect"].strip("/").split("/")[-1])
    assert (await database_sync_to_async(Server.objects.get)(pk=server.pk)).transport == "auto"
    tab = communicator(new_pk, user)
    try:
        await tab.connect()
        await receive_until(tab, 'role="status">connected<', 'id="catalogue"')
    finally:
        await tab.disconnect()
        await stop_all()
    assert not WORKERS
    new = await database_sync_to_async(Session.objects.get)(pk=new_pk)
    assert new.transport == "sse" and new.status == "ended"
    # Only its owner may switch, and only to a URL transport.
    other = Client()
    await database_sync_to_async(other.force_login)(
        await database_sync_to_async(type(user).objects.create_user)("mallory", password="pw")
    )
    assert (
        await database_sync_to_async(other.post)(f"/sessions/{session.pk}/retry/", {"transport": "auto"})
    ).status_code == 404
    assert not WORKERS
    assert (await owner.post(f"/sessions/{session.pk}/retry/", {"transport": "stdio"})).status_code == 400
