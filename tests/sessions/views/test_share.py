"""Share links of saved sessions: read-only, revocable, every secret masked (in every spelling)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.registry.models import Server
from playground.transcripts.models import Event, Session, ShareLink

pytestmark = pytest.mark.django_db


def test_share_is_read_only_redacted_and_revocable(client, saved):
    response = client.post(reverse("sessions:share", args=[saved.pk]))
    link = ShareLink.objects.get(session=saved)
    assert len(link.token) >= 43 and "Share link" in response.content.decode()
    client.logout()
    urls = [
        reverse(n, args=[link.token]) for n in ("sessions:share_page", "sessions:share_jsonl", "sessions:share_json")
    ]
    for url in urls:
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response.status_code == 200
        assert b"sk-live-0123456789abcdef" not in body and b"you sent" in body
    page = client.get(urls[0]).content.decode()
    assert "hx-ws:connect" not in page and "hx-ws:send" not in page and "Call tool" not in page
    json.loads(b"".join(client.get(urls[2]).streaming_content))  # the JSON export is one valid document
    client.force_login(saved.owner)
    client.post(reverse("sessions:revoke", args=[link.token]))
    client.logout()
    assert all(client.get(url).status_code == 404 for url in urls)


def test_a_secret_echoed_with_other_json_escaping_is_masked_in_the_share_and_its_exports(client):
    r"""PHP writes `/` as `\/`, Go `&` as `\u0026`: the raw frame held the configured secret in a
    spelling `json.dumps` never gives, and the share page and both share exports showed it."""
    secret = "a/b&c-SECRET"
    user = get_user_model().objects.create_user("carol", password="pw")
    server = Server.objects.create(
        name="php", transport="http", url="http://127.0.0.1:1/mcp", headers={"X-Api-Key": secret}, owner=user
    )
    session = Session.objects.create(
        server=server, server_name="php", owner=user, status="ended", secret_values=server.to_config().secret_values()
    )
    raw = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"you sent a\\/b\\u0026c-SECRET"}]}}'
    assert json.loads(raw)["result"]["content"][0]["text"] == f"you sent {secret}"
    Event.objects.create(
        session=session,
        seq=1,
        t=0.1,
        dir="recv",
        data={"seq": 1, "t": 0.1, "dir": "recv", "raw": raw, "message": json.loads(raw)},
    )
    link = ShareLink.objects.create(session=session, created_by=user)
    bodies = {}
    for name in ("sessions:share_page", "sessions:share_jsonl", "sessions:share_json"):
        response = client.get(reverse(name, args=[link.token]))
        assert response.status_code == 200
        bodies[name] = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
    assert [name for name, body in bodies.items() if "c-SECRET" in body] == []  # in no spelling at all
    assert all("you sent ••••" in body for body in bodies.values())
    exported = json.loads(bodies["sessions:share_jsonl"])
    assert exported["raw"] == raw.replace("a\\/b\\u0026c-SECRET", "••••")
    assert json.loads(bodies["sessions:share_json"])["events"] == [exported]
