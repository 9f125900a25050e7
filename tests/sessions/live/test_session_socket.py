"""A tab shows each card once, though the worker's snapshot and a live broadcast may both announce it."""
from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from playground.sessions.routing import websocket_urlpatterns
from playground.sessions.protocol import group_name
from playground.transcripts.models import Session

pytestmark = pytest.mark.django_db(transaction=True)


async def test_cards_are_not_duplicated_by_snapshot_and_broadcast():
    user = await database_sync_to_async(get_user_model().objects.create_user)("carol", password="pw")
    session = await database_sync_to_async(Session.objects.create)(server_name="x", owner=user, status="ended")
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/sessions/{session.pk}/")
    comm.scope["user"] = user
    assert (await comm.connect())[0]
    while not await comm.receive_nothing(timeout=0.5):
        await comm.receive_from()                       # the replay on connect
    layer = get_channel_layer()
    request = {"key": "q1", "method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {
        "type": "object", "properties": {"name": {"type": "string"}}}}}
    call = {"call_id": "c7", "command": "call_tool", "name": "slow"}
    # As after a reload: the snapshot lists them, and the live broadcasts arrive too.
    asked = {"type": "session.feature", "feature": "server_requests", "event": request}
    await layer.group_send(group_name(session.pk), {"type": "session.snapshot", "features": [asked],
                                                    "inflight": [call]})
    await layer.group_send(group_name(session.pk), asked)
    await layer.group_send(group_name(session.pk), {"type": "session.call_started", **call})
    received = []
    while not await comm.receive_nothing(timeout=0.5):
        received.append(await comm.receive_from())
    text = "\n".join(received)
    assert text.count('id="server-request-q1"') == 1 and text.count('id="call-c7"') == 1
    # Once answered, a new request with the same key is a new card.
    await layer.group_send(group_name(session.pk), {"type": "session.feature", "feature": "server_requests",
                                                    "event": {"key": "q1", "done": True}})
    await layer.group_send(group_name(session.pk), asked)
    received = []
    while not await comm.receive_nothing(timeout=0.5):
        received.append(await comm.receive_from())
    assert "\n".join(received).count('<section id="server-request-q1"') == 1
    await comm.disconnect()
