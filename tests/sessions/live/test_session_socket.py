"""A tab's socket: only the session's owner, from the app's own origin, opens one; it shows each
card once, though the worker's snapshot and a live broadcast may both announce it."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from playground.asgi import application
from playground.sessions.live.worker import start_session
from playground.sessions.protocol import group_name
from playground.sessions.routing import websocket_urlpatterns
from playground.transcripts.models import Session
from tests.sessions.helpers import communicator, live_tab, make_user_and_server, receive_until, send, stop_all

pytestmark = pytest.mark.django_db(transaction=True)


async def test_cards_are_not_duplicated_by_snapshot_and_broadcast():
    user = await database_sync_to_async(get_user_model().objects.create_user)("carol", password="pw")
    session = await database_sync_to_async(Session.objects.create)(server_name="x", owner=user, status="ended")
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/sessions/{session.pk}/")
    comm.scope["user"] = user
    assert (await comm.connect())[0]
    while not await comm.receive_nothing(timeout=0.5):
        await comm.receive_from()  # the replay on connect
    layer = get_channel_layer()
    request = {
        "key": "q1",
        "method": "elicitation/create",
        "params": {
            "message": "name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
    call = {"call_id": "c7", "command": "call_tool", "name": "slow"}
    # As after a reload: the snapshot lists them, and the live broadcasts arrive too.
    asked = {"type": "session.feature", "feature": "server_requests", "event": request}
    await layer.group_send(
        group_name(session.pk), {"type": "session.snapshot", "features": [asked], "inflight": [call]}
    )
    await layer.group_send(group_name(session.pk), asked)
    await layer.group_send(group_name(session.pk), {"type": "session.call_started", **call})
    received = []
    while not await comm.receive_nothing(timeout=0.5):
        received.append(await comm.receive_from())
    text = "\n".join(received)
    assert text.count('id="server-request-q1"') == 1 and text.count('id="call-c7"') == 1
    # Once answered, a new request with the same key is a new card.
    await layer.group_send(
        group_name(session.pk),
        {"type": "session.feature", "feature": "server_requests", "event": {"key": "q1", "done": True}},
    )
    await layer.group_send(group_name(session.pk), asked)
    received = []
    while not await comm.receive_nothing(timeout=0.5):
        received.append(await comm.receive_from())
    assert "\n".join(received).count('<section id="server-request-q1"') == 1
    await comm.disconnect()


async def test_other_users_and_foreign_origins_are_refused():
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    try:
        mallory = await database_sync_to_async(get_user_model().objects.create_user)("mallory", password="pw")
        comm = communicator(session.pk, mallory)
        connected, _ = await comm.connect()
        assert not connected
        # The real application checks Origin before anything else.
        foreign = WebsocketCommunicator(
            application,
            f"/ws/sessions/{session.pk}/",
            headers=[(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1")],
        )
        connected, _ = await foreign.connect()
        assert not connected
        anonymous = WebsocketCommunicator(
            application,
            f"/ws/sessions/{session.pk}/",
            headers=[(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1")],
        )
        connected, _ = await anonymous.connect()
        assert not connected
    finally:
        await stop_all()


async def test_a_new_tab_gets_the_transcript_replayed_from_the_database():
    async with live_tab() as (user, session, comm):
        await send(comm, action="call_tool", name="add", **{"args.a": "2", "args.b": "40"})
        await receive_until(comm, 'aria-label="Result"', 'data-method="tools/call"')
        # A new connection replays the transcript from the database.
        c = communicator(session.pk, user)
        await c.connect()
        replay = await c.receive_from(10)
        assert 'id="transcript-lines" hx-swap-oob="innerHTML"' in replay and "tools/call" in replay
        await c.disconnect()


async def test_a_tab_and_its_worker_in_one_process_talk_through_inboxes_of_the_embedded_layer(monkeypatch):
    """The in-process path (live/layers.py, worker.deliver): the tab's channel and the worker's are
    attached while they live; a call's command is handed to the worker without the channel
    layer's send (so with Redis too, when both live in one process) and its Result reaches the tab
    through its inbox; both detach at the end."""
    layer = get_channel_layer()
    sent_to: list[str] = []
    layer_send = layer.send

    async def spy(channel: str, message: dict) -> None:
        sent_to.append(channel)
        await layer_send(channel, message)

    async with live_tab() as (user, session, comm):
        row = await database_sync_to_async(Session.objects.get)(pk=session.pk)
        tabs = [channel for channel in layer.inboxes if channel != row.worker_channel]
        assert row.worker_channel in layer.inboxes and len(tabs) == 1
        monkeypatch.setattr(layer, "send", spy)
        await send(comm, action="call_tool", name="add", **{"args.a": "2", "args.b": "40"})
        seen = await receive_until(comm, 'aria-label="Result"')
        assert ">42<" in seen
        assert row.worker_channel not in sent_to and tabs[0] in sent_to  # (the Result: group_send -> send)
        assert not any(channel in layer.channels for channel in (row.worker_channel, *tabs))  # nothing queued there
    assert row.worker_channel not in layer.inboxes and not set(tabs) & set(layer.inboxes)


async def test_a_catalogue_listed_while_the_tab_connected_reaches_it(monkeypatch):
    """The worker saved and announced the lists right after the tab first read its session, before
    the tab joined the group: the tab's replay must show them (it used that first read)."""
    from playground.sessions.live.session_socket import SessionConsumer

    user = await database_sync_to_async(get_user_model().objects.create_user)("dave", password="pw")
    session = await database_sync_to_async(Session.objects.create)(server_name="x", owner=user, status="ended")
    tool = {"name": "late_tool", "inputSchema": {"type": "object"}}
    catalogue = {"tools": [tool], "resources": [], "templates": [], "prompts": [], "errors": {}}
    read = SessionConsumer.__dict__["_session"]  # (database_sync_to_async: bound through __get__)
    reads = []

    async def then_the_worker_lists(self):
        found = await read.__get__(self, SessionConsumer)()
        if not reads:  # as the worker does (catalogue.py): save, then announce to the group
            await database_sync_to_async(Session.objects.filter(pk=session.pk).update)(catalogue=catalogue)
            await get_channel_layer().group_send(
                group_name(session.pk), {"type": "session.catalogue", "catalogue": catalogue}
            )
        reads.append(found)
        return found

    monkeypatch.setattr(SessionConsumer, "_session", then_the_worker_lists)
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/sessions/{session.pk}/")
    comm.scope["user"] = user
    assert (await comm.connect())[0]
    assert not reads[0].catalogue  # the first read had none
    shown = await receive_until(comm, 'id="catalogue"')
    assert "late_tool" in shown
    await comm.disconnect()


async def test_a_tab_connecting_after_a_check_ended_gets_its_saved_report():
    """The page may have been rendered while the check ran ("Running…"), and its socket opened
    once the session had ended: no worker answers its sync, so the replay brings the report."""
    from playground.mcp.check import CheckResult, Report

    user = await database_sync_to_async(get_user_model().objects.create_user)("dora", password="pw")
    report = Report()
    report.add(CheckResult("ping", "pass", "answered <b>{}</b>", [3]))
    report.finished = True
    session = await database_sync_to_async(Session.objects.create)(
        server_name="x", owner=user, status="ended", kind=Session.Kind.CHECK, report=report.to_dict()
    )
    comm = communicator(session.pk, user)
    assert (await comm.connect())[0]
    received = []
    while not await comm.receive_nothing(timeout=0.5):
        received.append(await comm.receive_from())
    (frame,) = [f for f in received if 'id="check-report"' in f]
    assert 'hx-swap-oob="outerHTML' in frame and 'data-check="ping"' in frame
    assert "Running" not in frame and "1 passed" in frame and "&lt;b&gt;" in frame
    await comm.disconnect()
