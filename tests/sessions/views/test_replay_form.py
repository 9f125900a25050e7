"""Replaying a session: the form that starts it (the replay itself: features/test_replay.py)."""

from __future__ import annotations

import re
import sys

import pytest
from channels.db import database_sync_to_async

from playground.registry.models import Server
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Session
from tests.sessions.helpers import VARIANT, a_stranger, logged_in, make_user_and_server, record_session

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_replay_form_offers_the_users_servers_and_starts_only_on_theirs():
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    original = await record_session(user, build_a)
    client = await logged_in(user)
    stranger = await a_stranger(user)
    # The replay form lists the user's servers, this session's first; another user cannot start one.
    replay_form = (await client.get(f"/sessions/{original.pk}/replay/")).content.decode()
    assert re.search(rf'<option value="{build_a.pk}" selected>build a</option>', replay_form)
    assert (
        await (await logged_in(stranger)).post(f"/sessions/{original.pk}/replay/", {"target": build_a.pk})
    ).status_code == 404
    # Nor may the owner replay their session against another user's server: nothing starts.
    theirs = await database_sync_to_async(Server.objects.create)(
        owner=stranger, name="mallory's", transport="stdio", command=sys.executable, args=[VARIANT, "stdio", "b"]
    )
    sessions = await database_sync_to_async(Session.objects.count)()
    assert (await client.post(f"/sessions/{original.pk}/replay/", {"target": theirs.pk})).status_code == 404
    assert await database_sync_to_async(Session.objects.count)() == sessions and not WORKERS
