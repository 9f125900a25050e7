"""The session as files: the owner's export exact, streamed in batches under ASGI."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.transcripts.models import Session
from tests.sessions.helpers import SAVED_SECRET

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["export_jsonl", "export_json", "export_har"])
def test_owner_exports_mask_echoed_secrets_unless_asked_for_them(client, saved, name):
    """The owner's export is attached to bug reports: a server's echo of a configured secret was
    masked in a share's export but not in the owner's (issue 31)."""
    url = reverse(f"sessions:{name}", args=[saved.pk])
    masked = b"".join(client.get(url).streaming_content).decode()
    assert SAVED_SECRET not in masked
    if name != "export_har":  # (the saved session is stdio: its HAR has no entries)
        assert "••••" in masked
        assert SAVED_SECRET in b"".join(client.get(url + "?secrets=1").streaming_content).decode()


def test_owner_export_with_secrets_is_exact_and_home_shows_the_last_session(client, saved):
    response = client.get(reverse("sessions:export_jsonl", args=[saved.pk]) + "?secrets=1")
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert json.loads(lines[0])["message"]["result"]["content"][0]["text"].endswith(SAVED_SECRET)
    home = client.get(reverse("registry:home")).content.decode()
    assert saved.started_at.strftime("%Y-%m-%d %H:%M") in home


@pytest.mark.django_db(transaction=True)
async def test_export_is_streamed_in_batches_under_asgi():
    """Django's ASGI handler would turn a sync iterator into a list first (the whole export in
    memory before its first byte): under ASGI the export is an async iterator of batches."""
    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    from playground.transcripts.recorder import save_events

    def seed():
        user = get_user_model().objects.create_user("eve", password="pw")
        session = Session.objects.create(server_name="big", owner=user, status="ended")
        save_events(
            session.pk,
            [
                {"seq": i, "t": i / 1000, "dir": "note", "message": None, "kind": "info", "text": f"event {i}"}
                for i in range(1, 2501)
            ],
        )
        return user, session

    user, session = await sync_to_async(seed)()
    client = AsyncClient()
    await client.aforce_login(user)
    response = await client.get(reverse("sessions:export_jsonl", args=[session.pk]))
    assert response.status_code == 200 and response.is_async
    chunks = [chunk async for chunk in response.streaming_content]
    assert len(chunks) == 3  # 1,000 lines a batch
    lines = b"".join(chunks).decode().splitlines()
    assert [json.loads(line)["text"] for line in lines] == [f"event {i}" for i in range(1, 2501)]
