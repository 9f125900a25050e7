"""The Model providers pages and the chats list: the key stored and never rendered back, the
address guard on the base URL, each user's own providers and chats."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.chat.models import Chat, Provider

pytestmark = pytest.mark.django_db
KEY = "sk-proj-verysecret-0123456789abcdef"


@pytest.fixture
def user(client):
    user = get_user_model().objects.create_user("ann", password="pw")
    client.force_login(user)
    return user


def post(client, url, **fields):
    data = {"api": "openai", "base_url": "http://127.0.0.1:11434/v1", "api_key": "", "model": "qwen3", **fields}
    return client.post(url, data)


def test_a_key_is_stored_never_shown_and_kept_when_left_blank(client, user):
    response = post(client, reverse("chat:provider_add"), api_key=KEY)
    assert response.status_code == 302
    provider = Provider.objects.get(owner=user)
    assert provider.api_key == KEY and provider.base_url == "http://127.0.0.1:11434/v1"  # loopback allowed
    for url in (reverse("chat:providers"), reverse("chat:provider_edit", args=[provider.pk])):
        page = client.get(url).content.decode()
        assert KEY not in page and KEY[:12] not in page and "sk-••••" in page
    post(client, reverse("chat:provider_edit", args=[provider.pk]), model="llama3.2")  # key left blank
    provider.refresh_from_db()
    assert (provider.model, provider.api_key) == ("llama3.2", KEY)
    chat = Chat.objects.create(owner=user, provider=provider)
    assert KEY not in client.get(reverse("chat:chat", args=[chat.pk])).content.decode()
    post(client, reverse("chat:provider_edit", args=[provider.pk]), clear_key="on")
    provider.refresh_from_db()
    assert provider.api_key == ""


def test_the_base_url_passes_the_address_guard(client, user, settings):
    settings.PLAYGROUND_HTTP_ALLOW_PRIVATE = False
    response = post(client, reverse("chat:provider_add"), base_url="http://169.254.169.254/v1")
    assert response.status_code == 200 and "a cloud metadata address" in response.content.decode()
    settings.PLAYGROUND_HTTP_ALLOW_LOOPBACK = False
    response = post(client, reverse("chat:provider_add"), base_url="http://127.0.0.1:11434/v1")
    assert "PLAYGROUND_HTTP_ALLOW_LOOPBACK is off" in response.content.decode()
    assert not Provider.objects.exists()


def test_providers_and_chats_are_their_owners(client, user):
    other = get_user_model().objects.create_user("bob", password="pw")
    theirs = Provider.objects.create(owner=other, api="anthropic", base_url="https://api.anthropic.com", model="m")
    their_chat = Chat.objects.create(owner=other)
    assert client.get(reverse("chat:provider_edit", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("chat:provider_delete", args=[theirs.pk])).status_code == 404
    assert client.get(reverse("chat:chat", args=[their_chat.pk])).status_code == 404
    response = client.post(reverse("chat:chats"))
    mine = Chat.objects.get(owner=user)
    assert response["Location"] == reverse("chat:chat", args=[mine.pk])
    page = client.get(reverse("chat:chats")).content.decode()
    assert f'href="{reverse("chat:chat", args=[mine.pk])}"' in page
    assert reverse("chat:chat", args=[their_chat.pk]) not in page
    assert client.post(reverse("chat:provider_delete", args=[theirs.pk])).status_code == 404
    assert Provider.objects.filter(pk=theirs.pk).exists()


def test_the_chats_list_counts_without_reading_the_conversations(client, user):
    """A chat's items and model lane grow with every step (each request whole): the list shows
    titles and counts, counted by the database, and reads neither."""
    user_message = {"role": "user", "text": "What is the weather in Lima?"}
    Chat.objects.create(
        owner=user,
        messages=[user_message, {"role": "assistant", "text": "Sunny."}, {"role": "user", "text": "Thanks"}],
        items=[{"kind": "message", "text": "x" * 1000}] * 40,
        lane=[{"request": {"messages": ["y" * 1000] * 30}}] * 25,
    )
    response = client.get(reverse("chat:chats"))
    (listed,) = response.context["chats"]
    assert {"items", "lane"} <= listed.get_deferred_fields()
    page = response.content.decode()
    assert "What is the weather in Lima?" in page and "3 messages · 25 model requests" in page


def test_a_share_shows_the_chat_read_only_masked_and_stops_when_revoked(client, user):
    from django.test import Client

    from playground.registry.models import Server
    from playground.transcripts.models import Session, ShareLink

    header = "Bearer hdr-secret-778899"
    server = Server.objects.create(owner=user, name="remote", transport="http", url="http://127.0.0.1:9/mcp")
    session = Session.objects.create(server=server, server_name="remote", owner=user, secret_values=[header])
    session_share = ShareLink.objects.create(session=session)
    provider = Provider.objects.create(
        owner=user, api="openai", base_url="http://127.0.0.1:1/v1", api_key=KEY, model="m"
    )
    chat = Chat.objects.create(
        owner=user,
        provider=provider,
        items=[
            {"kind": "user", "text": "what is my header?"},
            {
                "kind": "card",
                "id": "t1",
                "name": "whoami",
                "tool": "whoami",
                "server": "remote",
                "session_id": session.pk,
                "arguments": "{}",
                "state": "done",
                "result": {"content": [{"type": "text", "text": f"you sent {header}"}]},
            },
            {"kind": "reply", "id": "r1", "text": f"It is {header}; the key was {KEY}"},
        ],
        lane=[
            {
                "api": "openai",
                "url": "http://127.0.0.1:1/v1/chat/completions",
                "request_headers": {},
                "request": {"messages": [{"role": "tool", "content": f"you sent {header}"}]},
                "status": 200,
                "chunks": [],
                "response": {"content": header},
                "usage": {},
                "error": None,
                "ms": 1.0,
            }
        ],
    )
    chat.sessions.add(session)
    client.post(reverse("chat:share_create", args=[chat.pk]))
    link = chat.shares.get()
    anyone = Client()
    page = anyone.get(link.get_absolute_url()).content.decode()
    assert "what is my header?" in page and "whoami" in page
    assert "hdr-secret-778899" not in page and KEY not in page and "••••" in page
    assert reverse("sessions:share_page", args=[session_share.token]) in page  # the session's own share
    assert "hx-ws:connect" not in page and "<textarea" not in page and f"/sessions/{session.pk}/" not in page
    # The exports (the owner's and the share's): the same chat as JSON, masked the same way.
    exported = [client.get(reverse("chat:export", args=[chat.pk])), anyone.get(f"{link.get_absolute_url()}export.json")]
    assert reverse("chat:share_export", args=[link.token]) in page
    for response in exported:
        assert response.status_code == 200 and response["Content-Disposition"].endswith(f'"chat-{chat.pk}.json"')
        document = json.loads(response.content)
        assert document["format"] == "mcp-playground-chat/1" and document["title"] == chat.title
        assert [i["kind"] for i in document["items"]] == ["user", "card", "reply"]
        assert document["sessions"] == [{"id": session.pk, "server": "remote", "transport": session.transport}]
        assert document["provider"] == {"api": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m"}
        assert "hdr-secret-778899" not in response.content.decode() and KEY not in response.content.decode()
        assert "you sent ••••" in document["lane"][0]["request"]["messages"][0]["content"]
    assert Client().get(reverse("chat:export", args=[chat.pk])).status_code == 302  # the owner's: logged in
    client.post(reverse("chat:share_revoke", args=[chat.pk, link.token]))
    assert anyone.get(link.get_absolute_url()).status_code == 404
    assert anyone.get(f"{link.get_absolute_url()}export.json").status_code == 404
