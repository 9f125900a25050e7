"""The pages around a capture: the Watch a host region and its entries, the Capture tokens page,
a captured session in the server's list and on its page, its exports masked."""

from __future__ import annotations

import html
import json
import re
import sys
import uuid

import pytest
from django.conf import settings
from django.test import Client

from playground.capture.models import CaptureToken
from playground.transcripts.models import Session

from .helpers import ENV_SECRET, body, post

pytestmark = pytest.mark.django_db


def entries(page: str) -> list[dict]:
    """The JSON of each entry the region shows, as a person copies it."""
    region = page.split('id="watch-a-host"', 1)[1].split("</section>", 1)[0]
    return [
        json.loads(html.unescape(text))
        for text in re.findall(r'<pre class="mono" data-copy-value="(.*?)">', region, re.S)
    ]


def shown(page: str) -> list[dict]:
    """The JSON of each entry as the page prints it (secret-looking env values masked)."""
    region = page.split('id="watch-a-host"', 1)[1].split("</section>", 1)[0]
    return [json.loads(html.unescape(text)) for text in re.findall(r'<pre class="mono"[^>]*>(.*?)</pre>', region, re.S)]


def test_the_region_gives_each_host_a_valid_entry(owner, browser_of):
    _user, server, token = owner
    server.cwd = "/srv/sdk"
    server.save()
    page = browser_of.get(f"/servers/{server.pk}/").content.decode()
    assert page.count('data-copy="closest:.copyable pre"') >= 3
    first, vscode, cherry = entries(page)
    entry = first["mcpServers"]["sdk"]
    assert entry["command"] == sys.executable
    assert entry["args"] == [
        str(settings.BASE_DIR / "manage.py"),
        "mcp",
        "--capture",
        "http://testserver",
        "--capture-server",
        str(server.pk),
        "--cwd",
        "/srv/sdk",
        "--",
        *[server.command, *server.args],
    ]
    assert entry["env"] == {"PLAYGROUND_CAPTURE_TOKEN": token, "API_TOKEN": ENV_SECRET}
    assert vscode["servers"]["sdk"] == {"type": "stdio", **entry}
    assert cherry["mcpServers"]["sdk"] == {"name": "sdk", "type": "stdio", "isActive": True, **entry}
    assert 'href="/capture/tokens/"' in page
    printed = shown(page)[0]["mcpServers"]["sdk"]
    assert printed["env"] == {"PLAYGROUND_CAPTURE_TOKEN": token, "API_TOKEN": "••••"}
    assert {**printed, "env": entry["env"]} == entry


def test_without_a_token_the_region_offers_one(owner, browser_of):
    user, server, _token = owner
    CaptureToken.objects.filter(owner=user).update(revoked_at="2026-01-01T00:00:00Z")
    page = browser_of.get(f"/servers/{server.pk}/").content.decode()
    assert "Create a capture token" in page and not entries(page)
    answer = browser_of.post("/capture/tokens/create/", {"name": "desk", "next": f"/servers/{server.pk}/"})
    assert answer.status_code == 302 and answer["Location"] == f"/servers/{server.pk}/"
    made = CaptureToken.objects.get(owner=user, name="desk")
    assert (
        entries(browser_of.get(f"/servers/{server.pk}/").content.decode())[0]["mcpServers"]["sdk"]["env"][
            "PLAYGROUND_CAPTURE_TOKEN"
        ]
        == made.plain
    )


def test_the_tokens_page_creates_rotates_and_revokes(owner, browser_of, django_user_model):
    user, _server, token = owner
    listed = browser_of.get("/capture/tokens/").content.decode()
    assert "laptop" in listed and token not in listed  # the value is shown once, on creation
    created = browser_of.post("/capture/tokens/create/", {"name": "ci"}).content.decode()
    new = CaptureToken.objects.get(owner=user, name="ci")
    assert new.plain in created
    rotated = browser_of.post(f"/capture/tokens/{new.pk}/rotate/").content.decode()
    new.refresh_from_db()
    assert new.plain in rotated and CaptureToken.authenticate(new.plain) == new
    browser_of.post(f"/capture/tokens/{new.pk}/revoke/")
    assert CaptureToken.authenticate(new.plain) is None
    # Another user's tokens are not theirs to act on.
    other = Client()
    other.force_login(django_user_model.objects.create_user("mallory", password="pw"))
    mine = CaptureToken.objects.get(owner=user, name="laptop")
    assert other.post(f"/capture/tokens/{mine.pk}/revoke/").status_code == 404
    assert f"capture-token-{mine.pk}" not in other.get("/capture/tokens/").content.decode()
    assert CaptureToken.authenticate(token) == mine


def test_a_captured_session_in_the_list_and_on_its_page(exchange, owner, browser_of):
    _user, server, token = owner
    session_id = post(Client(), token, body(exchange, server.pk)).json()["session"]
    listing = browser_of.get(f"/servers/{server.pk}/").content.decode()
    assert f'<a href="/sessions/{session_id}/" class="badge captured">captured from test-host 9.8.7</a>' in listing
    page = browser_of.get(f"/sessions/{session_id}/").content.decode()
    host = page.split('id="captured-host"', 1)[1].split("</section>", 1)[0]
    assert "<strong>test-host</strong> 9.8.7" in host
    assert '<li data-capability="elicitation">elicitation: <strong>yes</strong></li>' in host
    assert '<li data-capability="sampling">sampling: <strong>no</strong></li>' in host
    assert "&quot;elicitation&quot;" in host  # the raw JSON
    assert 'data-dropped="0"' in host
    # No Send controls (no worker); share and exports as usual.
    for control in ('value="ping"', 'value="disconnect"', "Reconnect", "Raw request", 'name="action" value="refresh"'):
        assert control not in page
    assert f"/sessions/{session_id}/export.jsonl" in page and f"/sessions/{session_id}/share/" in page
    assert "hello capture" in page


def test_exports_mask_the_entry_env_values_and_the_token(exchange, owner, browser_of):
    _user, server, token = owner
    leak = {**exchange[0], "kind": "stderr", "text": f"env {ENV_SECRET} and token {token}"}
    records = [*exchange[:-1], {**leak, "i": len(exchange) - 1}]
    session_id = post(Client(), token, body(records, server.pk)).json()["session"]
    for kind in ("jsonl", "json"):
        masked = b"".join(browser_of.get(f"/sessions/{session_id}/export.{kind}").streaming_content).decode()
        assert ENV_SECRET not in masked and token not in masked and "hello capture" in masked
    kept = b"".join(browser_of.get(f"/sessions/{session_id}/export.jsonl?secrets=1").streaming_content).decode()
    assert ENV_SECRET in kept  # the owner's own choice
    shared = browser_of.post(f"/sessions/{session_id}/share/")
    assert shared.status_code == 200
    link = Session.objects.get(pk=session_id).shares.get()
    share_page = Client().get(f"/share/{link.token}/").content.decode()
    assert "hello capture" in share_page and ENV_SECRET not in share_page and token not in share_page


def test_another_capture_of_the_same_server_is_another_session(exchange, owner):
    _user, server, token = owner
    one = post(Client(), token, body(exchange, server.pk)).json()["session"]
    two = post(Client(), token, body(exchange, server.pk, capture=uuid.uuid4().hex)).json()["session"]
    assert one != two and Session.objects.filter(kind="captured").count() == 2
