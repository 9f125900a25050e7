"""A page's call through the live path without a browser — tab ↔ consumer ↔ channel layer ↔ worker,
against a real server (live/calls.py): relayed to every tab and saved, shown in flight,
cancelled, its form checked; a reload in the middle of a call still shows its result."""

from __future__ import annotations

import json
import re

import pytest
from channels.testing import WebsocketCommunicator

from playground.sessions.live.worker import start_session
from tests.sessions.helpers import (
    communicator,
    events,
    live_tab,
    make_user_and_server,
    receive_fragment,
    receive_until,
    send,
    sent,
    stop_all,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_call_reaches_every_tab_and_its_exchange_is_saved_paired(monkeypatch):
    # A call is shown in flight only once it lasts (here: far longer than this one can take).
    monkeypatch.setattr("playground.sessions.live.calls.INFLIGHT_AFTER", 30)
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    a, b = communicator(session.pk, user), communicator(session.pk, user)
    try:
        assert (await a.connect())[0] and (await b.connect())[0]
        await receive_until(a, 'id="catalogue"')  # the tool list arrived
        await a.send_to(
            text_data=json.dumps({"action": "call_tool", "name": "add", "args.a": "2", "args.b": "40", "headers": {}})
        )
        for tab in (a, b):  # the second tab sees it too
            # The Result region, the request's line and the reply's line (its compact preview):
            # lines are broadcast only once saved, so the database has both afterwards.
            got = await receive_until(
                tab,
                'aria-label="Result"',
                'data-method="tools/call"',
                "&quot;structuredContent&quot;: {&quot;result&quot;: 42}",
            )
            assert "&quot;result&quot;: 42" in got
            # A quick call: no in-flight card was sent, so the Result has none to remove.
            assert 'class="inflight"' not in got and 'hx-swap-oob="delete"' not in got
        # The database has the exchange, in order, with the response paired to its request.
        rows = await events(session.pk)
        assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
        call = next(r for r in rows if (r["message"] or {}).get("method") == "tools/call")
        params = call["message"]["params"]
        assert params["name"] == "add" and params["arguments"] == {"a": 2, "b": 40}
        assert params["_meta"]["progressToken"]  # page calls always carry a progress token
        reply = next(r for r in rows if r.get("reply_to") == call["seq"])
        assert reply["message"]["result"]["structuredContent"] == {"result": 42}
    finally:
        await a.disconnect()
        await b.disconnect()
        await stop_all()


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
        await comm.send_to(
            text_data=json.dumps({"action": "call_tool", "name": "add", "args.a": "2", "send_anyway": "1"})
        )
        result = await receive_until(comm, 'aria-label="Result"')
        assert "isError" in result  # the server itself rejected the bad call
        assert '<div id="form-errors" hx-swap-oob="innerHTML"></div>' in result  # the errors shown were cleared
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
        replay = await receive_until(second, f"server-request-{key}")  # the worker's sync snapshot
        assert "What is your name?" in replay
        await second.send_to(
            text_data=json.dumps(
                {"action": "answer", "key": key, "result": json.dumps({"action": "accept", "content": {"name": "Ada"}})}
            )
        )
        assert "Hello, Ada!" in await receive_until(second, 'aria-label="Result"', "Hello, Ada!")
        await second.disconnect()
    finally:
        await stop_all()


@pytest.mark.django_db(transaction=True)
async def test_a_reload_during_a_long_call_shows_it_in_flight_and_then_its_result():
    try:
        second, _ = await reload_mid_call(
            {"action": "call_tool", "name": "slow", "args.steps": "50", "args.delay": "0.1"}, "step 1"
        )
        seen = await receive_until(second, 'aria-label="Result"', "done after 50 steps")
        assert 'class="inflight"' in seen.split('aria-label="Result"')[0]  # shown in flight first
        await second.disconnect()
    finally:
        await stop_all()


async def test_a_template_read_expands_its_variables_first():
    """A template read: the variable is expanded (RFC 6570) before resources/read."""
    async with live_tab('id="catalogue"', "peer://items/{item_id}") as (_, _session, comm):
        await send(comm, action="read_template", template="peer://items/{item_id}", **{"vars.item_id": "a b"})
        got = await receive_until(comm, 'aria-label="Result"', '<pre class="text">item a b</pre>')
        assert "<strong>resources/read</strong> peer://items/a%20b" in got


async def test_cancelling_a_call_in_flight_tells_the_server_and_the_result_says_so():
    async with live_tab('id="catalogue"', "peer://items/{item_id}") as (_, session, comm):
        await send(comm, action="call_tool", name="hang", call_id="")
        started = await receive_until(comm, "Cancel request", 'role="progressbar"')
        call_id = re.search(r'id="call-(c\d+)"', started).group(1)
        await send(comm, action="cancel", call_id=call_id)
        got = await receive_until(comm, ">cancelled</span>", 'data-method="notifications/cancelled"')
        assert "cancelled by the user" in got
    rows = await events(session.pk)
    hang = next(m for m in sent(rows, "tools/call") if m["params"]["name"] == "hang")
    assert sent(rows, "notifications/cancelled")[0]["params"]["requestId"] == next(
        r["message"]["id"] for r in rows if r["dir"] == "send" and r["message"] == hang
    )


async def test_a_raw_frame_goes_out_as_typed_and_one_with_an_id_of_its_own_gets_its_response():
    async with live_tab('id="catalogue"', "peer://items/{item_id}") as (_, session, comm):
        # A malformed frame goes out exactly as typed; the server's complaint is shown.
        await send(comm, action="raw", frame='{"jsonrpc": "2.0", "id": 99, "method": ')
        await receive_until(comm, "&quot;method&quot;: </pre>")
        # A hand-made request with an id of its own: its response is the call's result.
        await send(
            comm,
            action="raw",
            frame='{"jsonrpc": "2.0", "id": "mine", "method": "tools/call", '
            '"params": {"name": "echo", "arguments": {"text": "by hand"}}}',
        )
        await receive_until(comm, "<strong>request</strong>")
    rows = await events(session.pk)
    assert any(r["dir"] == "send" and r["raw"] == '{"jsonrpc": "2.0", "id": 99, "method": ' for r in rows)
    assert any(r["dir"] == "recv" and (r.get("message") or {}).get("id") == "mine" for r in rows)
    assert not any("unknown or already answered id 'mine'" in (r.get("text") or "") for r in rows)


async def test_a_forms_message_box_says_why_nothing_went_and_clears_once_a_request_goes():
    async with live_tab('id="catalogue"', "peer://items/{item_id}") as (_, _session, comm):
        # params that are not JSON are refused (the exact frame is the place for broken text).
        await send(comm, action="raw", method="tools/list", params="{")
        assert "params is not valid JSON" in await receive_until(comm, 'id="raw-errors"')
        # The error box goes once a request goes out, an exact frame as well.
        await send(comm, action="raw", frame='{"jsonrpc": "2.0", "id": "again", "method": "ping"}')
        await receive_fragment(comm, '<div id="raw-errors" hx-swap-oob="innerHTML"></div>')
        # A prompt form's notice, likewise.
        await send(comm, action="get_prompt", name="review", **{f"args.a{i}": "x" for i in range(2001)})
        assert "Not sent: the form has 2001 fields" in await receive_fragment(comm, 'id="notices"')
        await send(comm, action="get_prompt", name="review", **{"args.code": "print(1)"})
        await receive_fragment(comm, '<div id="notices" hx-swap-oob="innerHTML"></div>')
