"""The live path without a browser: worker ↔ channel layer ↔ consumer, against a real server."""
from __future__ import annotations

import json
import re
import sys

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from playground.asgi import application
from playground.sessions.live.worker import start_session
from playground.transcripts.models import Session
from tests.sessions.helpers import communicator, events, make_user_and_server, receive_until, stop_all, watch

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


async def test_crashing_server_ends_the_session_with_the_transcript_saved():
    script = "import sys; sys.stdin.readline(); print('not json'); sys.stderr.write('dying\\n'); sys.exit(3)"
    user, server = await make_user_and_server(command=sys.executable, args=["-c", script])
    session, rows, _ = await watch(await start_session(server, user), user, "status-failed")
    assert session.status == "failed" and "exited with code 3" in session.end_reason
    assert any(r["dir"] == "recv" and r["raw"] == "not json" and r["parse_error"] for r in rows), rows
    assert any(r["dir"] == "stderr" and r["text"] == "dying" for r in rows)


async def test_other_users_and_foreign_origins_are_refused():
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    try:
        mallory = await database_sync_to_async(get_user_model().objects.create_user)("mallory", password="pw")
        comm = communicator(session.pk, mallory)
        connected, _ = await comm.connect()
        assert not connected
        # The real application checks Origin before anything else.
        foreign = WebsocketCommunicator(application, f"/ws/sessions/{session.pk}/",
                                        headers=[(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1")])
        connected, _ = await foreign.connect()
        assert not connected
        anonymous = WebsocketCommunicator(application, f"/ws/sessions/{session.pk}/",
                                          headers=[(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1")])
        connected, _ = await anonymous.connect()
        assert not connected
    finally:
        await stop_all()


async def test_the_protocol_version_set_on_the_server_is_the_one_offered():
    """A server set to offer 2025-03-26: the initialize frame offers it, the SDK server (which
    knows it) agrees, and the page shows the version in use."""
    user, server = await make_user_and_server(protocol_version="2025-03-26")
    session, rows, seen = await watch(await start_session(server, user), user, "status-connected", 'id="catalogue"')
    sent = [r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "initialize"]
    offered = [json.loads(r["raw"]) for r in sent]
    answered = [json.loads(r["raw"]) for r in rows if r["dir"] == "recv" and r.get("reply_to") == sent[0]["seq"]]
    assert [m["params"]["protocolVersion"] for m in offered] == ["2025-03-26"]
    assert answered[0]["result"]["protocolVersion"] == "2025-03-26" == session.protocol_version
    assert "2025-03-26" in seen
