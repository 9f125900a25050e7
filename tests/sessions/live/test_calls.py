"""A page's call through the live path without a browser — tab ↔ consumer ↔ channel layer ↔ worker,
against a real server (live/calls.py): relayed to every tab and saved, shown in flight,
cancelled, its form checked; a reload in the middle of a call still shows its result."""
from __future__ import annotations

import json
import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from playground.sessions.live.worker import start_session
from playground.transcripts.models import Session
from tests.sessions.helpers import communicator, events, make_user_and_server, receive_until, stop_all

pytestmark = pytest.mark.django_db(transaction=True)


async def test_call_tool_through_consumer_and_worker_persists_everything(monkeypatch):
    # A call is shown in flight only once it lasts (here: far longer than this one can take).
    monkeypatch.setattr("playground.sessions.live.calls.INFLIGHT_AFTER", 30)
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    a, b = communicator(session.pk, user), communicator(session.pk, user)
    try:
        assert (await a.connect())[0] and (await b.connect())[0]
        await receive_until(a, 'id="catalogue"')        # the tool list arrived
        await a.send_to(text_data=json.dumps({"action": "call_tool", "name": "add", "args.a": "2", "args.b": "40",
                                              "headers": {}}))
        for tab in (a, b):   # the second tab sees it too
            # The Result region, the request's line and the reply's line (its compact preview):
            # lines are broadcast only once saved, so the database has both afterwards.
            got = await receive_until(tab, 'aria-label="Result"', 'data-method="tools/call"',
                                      '&quot;structuredContent&quot;: {&quot;result&quot;: 42}')
            assert "&quot;result&quot;: 42" in got
            # A quick call: no in-flight card was sent, so the Result has none to remove.
            assert 'class="inflight"' not in got and 'hx-swap-oob="delete"' not in got
        # The database has the exchange, in order, with the response paired to its request.
        rows = await events(session.pk)
        assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
        call = next(r for r in rows if (r["message"] or {}).get("method") == "tools/call")
        params = call["message"]["params"]
        assert params["name"] == "add" and params["arguments"] == {"a": 2, "b": 40}
        assert params["_meta"]["progressToken"]     # page calls always carry a progress token
        reply = next(r for r in rows if r.get("reply_to") == call["seq"])
        assert reply["message"]["result"]["structuredContent"] == {"result": 42}
        # A new connection replays the transcript from the database.
        c = communicator(session.pk, user)
        await c.connect()
        replay = await c.receive_from(10)
        assert 'id="transcript-lines" hx-swap-oob="innerHTML"' in replay and "tools/call" in replay
        await c.disconnect()
    finally:
        await a.disconnect()
        await b.disconnect()
        await stop_all()
    session = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    assert session.status == "ended" and session.worker_channel == "" and session.event_count >= len(rows)
    assert session.era == "legacy" and session.protocol_version == "2025-11-25"
    assert session.server_info["name"] == "sdk-peer"


async def test_a_slow_call_shows_in_flight_and_can_be_cancelled():
    """A call is shown in flight (with "Cancel request") once it lasts; cancelling it answers."""
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"')
        await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "hang"}))
        started = await receive_until(comm, "Cancel request")
        call_id = re.search(r'class="inflight" id="call-([^"]+)"', started).group(1)
        await comm.send_to(text_data=json.dumps({"action": "cancel", "call_id": call_id}))
        result = await receive_until(comm, 'aria-label="Result"')
        assert f'<div id="call-{call_id}" hx-swap-oob="delete">' in result and "cancelled" in result
    finally:
        await comm.disconnect()
        await stop_all()


async def test_invalid_arguments_are_shown_and_can_be_sent_anyway():
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"')
        await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "add", "args.a": "2"}))
        errors = await receive_until(comm, "form-errors")
        assert "&#x27;b&#x27; is a required property" in errors or "required" in errors
        await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "add", "args.a": "2",
                                                 "send_anyway": "1"}))
        result = await receive_until(comm, 'aria-label="Result"')
        assert "isError" in result   # the server itself rejected the bad call
        assert '<div id="form-errors" hx-swap-oob="innerHTML"></div>' in result   # the errors shown were cleared
    finally:
        await comm.disconnect()
        await stop_all()


async def reload_mid_call(call: dict, under_way: str) -> tuple[WebsocketCommunicator, str]:
    """A tab starts `call` and goes (a reload) once it sees `under_way`; the next tab, connected,
    is returned with what the first one saw."""
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    first = communicator(session.pk, user)
    await first.connect()
    await receive_until(first, 'id="catalogue"')
    await first.send_to(text_data=json.dumps(call))
    seen = await receive_until(first, under_way)
    await first.disconnect()
    second = communicator(session.pk, user)
    await second.connect()
    return second, seen

@pytest.mark.django_db(transaction=True)
async def test_a_reload_mid_call_shows_the_pending_request_and_then_the_result():
    try:
        second, seen = await reload_mid_call({"action": "call_tool", "name": "ask_name"}, "server-request-q")
        key = re.search(r'id="server-request-(q\d+)"', seen).group(1)
        replay = await receive_until(second, f"server-request-{key}")   # the worker's sync snapshot
        assert "What is your name?" in replay
        await second.send_to(text_data=json.dumps({"action": "answer", "key": key, "result": json.dumps(
            {"action": "accept", "content": {"name": "Ada"}})}))
        assert "Hello, Ada!" in await receive_until(second, 'aria-label="Result"', "Hello, Ada!")
        await second.disconnect()
    finally:
        await stop_all()

@pytest.mark.django_db(transaction=True)
async def test_a_reload_during_a_long_call_shows_it_in_flight_and_then_its_result():
    try:
        second, _ = await reload_mid_call({"action": "call_tool", "name": "slow", "args.steps": "50",
                                           "args.delay": "0.1"}, "step 1")
        seen = await receive_until(second, 'aria-label="Result"', "done after 50 steps")
        assert 'class="inflight"' in seen.split('aria-label="Result"')[0]     # shown in flight first
        await second.disconnect()
    finally:
        await stop_all()
