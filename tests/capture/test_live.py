"""An open session page follows its capture: each upload's lines reach the page's socket, and
the capture's end its state."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from playground.capture.models import CaptureToken
from playground.registry.models import Server
from playground.sessions.live.share_socket import CLOSE_ENDED
from playground.transcripts.models import Session
from tests.sessions.helpers import closed_with, communicator, receive_until, send, share, viewer

from .helpers import ENV_SECRET, SDK_SERVER, body, post

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def setup() -> tuple[Any, Server, str]:
    user = get_user_model().objects.create_user("alice", password="pw")
    server = Server.objects.create(
        owner=user, name="sdk", command=SDK_SERVER[0], args=SDK_SERVER[1:], env={"API_TOKEN": ENV_SECRET}
    )
    return user, server, CaptureToken.issue(user, "laptop")[1]


@database_sync_to_async
def upload(token: str, data: bytes) -> dict[str, Any]:
    response = post(Client(), token, data)
    assert response.status_code == 200, response.content
    return response.json()


async def test_the_session_page_follows_the_capture_live(exchange):
    user, server, token = await setup()
    echo = next(r["i"] for r in exchange if r["kind"] == "frame" and "hello capture" in r.get("text", ""))
    session_id = (await upload(token, body(exchange[:echo], server.pk)))["session"]
    tab = communicator(session_id, user)
    connected, _ = await tab.connect()
    assert connected
    try:
        await receive_until(tab, 'id="transcript-lines"', "sdk-peer")  # the replay from the database
        await send(tab, action="call_tool", name="echo", **{"args.text": "from the page"})  # no worker to send it
        await receive_until(tab, "A captured session: the host is the client")
        await upload(token, body(exchange[echo:-1], server.pk))
        seen = await receive_until(tab, "hello capture", "Hello, Ada!", "a line on stderr")
        assert "beforeend" in seen  # appended lines, as a live session's
        await upload(token, body(exchange[-1:], server.pk))
        await receive_until(tab, "the capture ended", "state-strip status-ended")
    finally:
        await tab.disconnect()


async def test_a_share_link_follows_the_capture_live_masked(exchange):
    user, server, token = await setup()
    echo = next(r["i"] for r in exchange if r["kind"] == "frame" and "hello capture" in r.get("text", ""))
    session_id = (await upload(token, body(exchange[:echo], server.pk)))["session"]
    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    link = await share(session, user)
    watcher = viewer(link.token)
    connected, _ = await watcher.connect()
    assert connected
    try:
        await receive_until(watcher, 'id="transcript-lines"', "sdk-peer")
        await upload(token, body(exchange[echo:-1], server.pk))
        seen = await receive_until(watcher, "hello capture", "key ••••")
        assert ENV_SECRET not in seen and token not in seen
        await upload(token, body(exchange[-1:], server.pk))
        assert await closed_with(watcher) == CLOSE_ENDED  # the capture ended: a snapshot now
    finally:
        await watcher.disconnect()
