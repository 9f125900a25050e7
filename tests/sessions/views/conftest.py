"""The views' shared fixture: a saved session whose server's secret header a response echoed."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from playground.registry.models import Server
from playground.transcripts.models import Event, Session
from tests.sessions.helpers import SAVED_SECRET


@pytest.fixture
def saved(client):
    user = get_user_model().objects.create_user("bob", password="pw")
    server = Server.objects.create(
        name="s", transport="http", url="http://127.0.0.1:1/mcp", headers={"Authorization": SAVED_SECRET}, owner=user
    )
    session = Session.objects.create(
        server=server, server_name="s", owner=user, status="ended", secret_values=server.to_config().secret_values()
    )
    echoed = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": f"you sent {SAVED_SECRET}"}]}}
    Event.objects.create(
        session=session,
        seq=1,
        t=0.1,
        dir="recv",
        data={"seq": 1, "t": 0.1, "dir": "recv", "raw": json.dumps(echoed), "message": echoed},
    )
    client.force_login(user)
    return session
