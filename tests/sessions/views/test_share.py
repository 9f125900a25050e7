"""Pages around saved sessions: share links (read-only, revocable, redacted), exports, home."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.registry.models import Server
from playground.sessions.templatetags.sessions_tags import safe_icon
from playground.transcripts.models import Event, Session, ShareLink

pytestmark = pytest.mark.django_db
SECRET = "Bearer sk-live-0123456789abcdef"


@pytest.fixture
def saved(client):
    user = get_user_model().objects.create_user("bob", password="pw")
    server = Server.objects.create(name="s", transport="http", url="http://127.0.0.1:1/mcp",
                                   headers={"Authorization": SECRET}, owner=user)
    session = Session.objects.create(server=server, server_name="s", owner=user, status="ended",
                                     secret_values=server.to_config().secret_values())
    echoed = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": f"you sent {SECRET}"}]}}
    Event.objects.create(session=session, seq=1, t=0.1, dir="recv", data={
        "seq": 1, "t": 0.1, "dir": "recv", "raw": json.dumps(echoed), "message": echoed})
    client.force_login(user)
    return session


def test_share_is_read_only_redacted_and_revocable(client, saved):
    response = client.post(reverse("sessions:share", args=[saved.pk]))
    link = ShareLink.objects.get(session=saved)
    assert len(link.token) >= 43 and "Share link" in response.content.decode()
    client.logout()
    urls = [reverse(n, args=[link.token]) for n in ("sessions:share_page", "sessions:share_jsonl", "sessions:share_json")]
    for url in urls:
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response.status_code == 200
        assert b"sk-live-0123456789abcdef" not in body and b"you sent" in body
    page = client.get(urls[0]).content.decode()
    assert "hx-ws:connect" not in page and "hx-ws:send" not in page and "Call tool" not in page
    json.loads(b"".join(client.get(urls[2]).streaming_content))      # the JSON export is one valid document
    client.force_login(saved.owner)
    client.post(reverse("sessions:revoke", args=[link.token]))
    client.logout()
    assert all(client.get(url).status_code == 404 for url in urls)


def test_a_secret_echoed_with_other_json_escaping_is_masked_in_the_share_and_its_exports(client):
    r"""PHP writes `/` as `\/`, Go `&` as `\u0026`: the raw frame held the configured secret in a
    spelling `json.dumps` never gives, and the share page and both share exports showed it."""
    secret = "a/b&c-SECRET"
    user = get_user_model().objects.create_user("carol", password="pw")
    server = Server.objects.create(name="php", transport="http", url="http://127.0.0.1:1/mcp",
                                   headers={"X-Api-Key": secret}, owner=user)
    session = Session.objects.create(server=server, server_name="php", owner=user, status="ended",
                                     secret_values=server.to_config().secret_values())
    raw = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"you sent a\\/b\\u0026c-SECRET"}]}}'
    assert json.loads(raw)["result"]["content"][0]["text"] == f"you sent {secret}"
    Event.objects.create(session=session, seq=1, t=0.1, dir="recv", data={
        "seq": 1, "t": 0.1, "dir": "recv", "raw": raw, "message": json.loads(raw)})
    link = ShareLink.objects.create(session=session, created_by=user)
    bodies = {}
    for name in ("sessions:share_page", "sessions:share_jsonl", "sessions:share_json"):
        response = client.get(reverse(name, args=[link.token]))
        assert response.status_code == 200
        bodies[name] = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
    assert [name for name, body in bodies.items() if "c-SECRET" in body] == []      # in no spelling at all
    assert all("you sent ••••" in body for body in bodies.values())
    exported = json.loads(bodies["sessions:share_jsonl"])
    assert exported["raw"] == raw.replace("a\\/b\\u0026c-SECRET", "••••")
    assert json.loads(bodies["sessions:share_json"])["events"] == [exported]


def test_owner_export_is_exact_and_home_shows_the_last_session(client, saved):
    response = client.get(reverse("sessions:export_jsonl", args=[saved.pk]))
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert json.loads(lines[0])["message"]["result"]["content"][0]["text"].endswith(SECRET)
    home = client.get(reverse("registry:home")).content.decode()
    assert saved.started_at.strftime("%Y-%m-%d %H:%M") in home


def test_other_users_cannot_open_a_session(client, saved):
    get_user_model().objects.create_user("eve", password="pw")
    client.login(username="eve", password="pw")
    assert client.get(reverse("sessions:detail", args=[saved.pk])).status_code == 404
    assert client.get(reverse("sessions:export_jsonl", args=[saved.pk])).status_code == 404


def test_only_inline_raster_icons_are_shown():
    png = "data:image/png;base64,iVBORw0KGgo="
    assert safe_icon([{"src": png}]) == png
    assert safe_icon([{"src": "https://tracker.example/pixel.png"}]) == ""
    assert safe_icon([{"src": "data:image/svg+xml;base64,PHN2Zz4="}]) == ""
    assert safe_icon([{"src": "javascript:alert(1)"}, {"src": png}]) == png


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
        save_events(session.pk, [{"seq": i, "t": i / 1000, "dir": "note", "message": None, "kind": "info",
                                  "text": f"event {i}"} for i in range(1, 2501)])
        return user, session

    user, session = await sync_to_async(seed)()
    client = AsyncClient()
    await client.aforce_login(user)
    response = await client.get(reverse("sessions:export_jsonl", args=[session.pk]))
    assert response.status_code == 200 and response.is_async
    chunks = [chunk async for chunk in response.streaming_content]
    assert len(chunks) == 3                                   # 1,000 lines a batch
    lines = b"".join(chunks).decode().splitlines()
    assert [json.loads(line)["text"] for line in lines] == [f"event {i}" for i in range(1, 2501)]


def test_result_fragments_stay_under_the_websocket_message_limit():
    """daphne closes the socket for a message over 1 MiB: big media must not end up inline."""
    import base64

    from playground.sessions.fragments.result import result_frames
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 3_000_000).decode()
    outcome = {"call_id": "c1", "command": "call_tool", "name": "big", "result": {"content": [
        {"type": "image", "mimeType": "image/png", "data": png},
        {"type": "resource", "resource": {"uri": "x://blob", "mimeType": "image/png", "blob": png}},
        {"type": "text", "text": "é" * 2_000_000}]}}
    frames = result_frames(outcome)
    assert all(len(frame.encode()) < 1024 * 1024 for frame in frames)
    assert "too large to show in the page" in frames[0]
    small = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 100).decode()
    outcome["result"]["content"] = [{"type": "image", "mimeType": "image/png", "data": small}]
    assert f"data:image/png;base64,{small}" in result_frames(outcome)[0]
