"""Every server belongs to its owner: another user's server is a 404 on every page that takes
its id, is missing from every list and export, and an import's "replace" never touches it.
PLAYGROUND_STDIO_USERS=staff keeps stdio servers to staff."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from playground.oauth.models import ServerAuth
from playground.registry.models import Server
from playground.transcripts.models import Session

pytestmark = pytest.mark.django_db

SECRET = "s3cret-of-alice"


def browser_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_and_mallory():
    users = get_user_model().objects
    alice, mallory = users.create_user("alice", password="pw"), users.create_user("mallory", password="pw")
    server = Server.objects.create(
        owner=alice,
        name="shared-name",
        transport="http",
        url="https://a.example/mcp",
        headers={"Authorization": f"Bearer {SECRET}"},
        env={"API_KEY": SECRET},
    )
    ServerAuth.objects.create(server=server)
    return alice, mallory, server


PAGES = [
    "/servers/{pk}/",
    "/servers/{pk}/edit/",
    "/servers/{pk}/delete/",
    "/servers/{pk}/export/",
    "/servers/{pk}/oauth/",
]
POSTS = [
    "/servers/{pk}/edit/",
    "/servers/{pk}/delete/",
    "/servers/{pk}/connect/",
    "/servers/{pk}/oauth/",
    "/servers/{pk}/oauth/forget/",
]


@pytest.mark.parametrize("page", PAGES)
def test_another_users_server_is_a_404_on_every_page(alice_and_mallory, page):
    alice, mallory, server = alice_and_mallory
    assert browser_of(alice).get(page.format(pk=server.pk)).status_code == 200
    assert browser_of(mallory).get(page.format(pk=server.pk)).status_code == 404


@pytest.mark.parametrize("action", POSTS)
def test_another_user_can_change_nothing(alice_and_mallory, action):
    alice, mallory, server = alice_and_mallory
    response = browser_of(mallory).post(
        action.format(pk=server.pk),
        {"name": "hijacked", "transport": "http", "url": "https://evil.example/mcp", "era": "legacy"},
    )
    assert response.status_code == 404
    server.refresh_from_db()
    assert server.url == "https://a.example/mcp" and server.name == "shared-name"
    assert not Session.objects.exists() and ServerAuth.objects.filter(server=server).exists()


def test_lists_and_exports_hold_only_ones_own(alice_and_mallory):
    alice, mallory, server = alice_and_mallory
    mallory_browser = browser_of(mallory)
    assert "shared-name" not in mallory_browser.get("/").content.decode()
    exported = mallory_browser.get("/servers/export/").content.decode()
    assert SECRET not in exported and json.loads(exported) == {"mcpServers": {}}
    assert SECRET in browser_of(alice).get("/servers/export/").content.decode()  # her own file, whole


def test_import_replace_touches_only_ones_own_servers(alice_and_mallory):
    alice, mallory, server = alice_and_mallory
    text = json.dumps({"mcpServers": {"shared-name": {"url": "https://evil.example/mcp"}}})
    page = browser_of(mallory).post("/servers/import/", {"text": text, "replace": "on"}).content.decode()
    server.refresh_from_db()
    assert server.url == "https://a.example/mcp"
    mine = Server.objects.get(owner=mallory)
    assert mine.name == "shared-name" and "exists" not in page  # her own, under the same name


def test_the_edit_form_never_prints_a_secret_and_the_page_masks_the_url(alice_and_mallory):
    alice, _, server = alice_and_mallory
    url = f"https://user:{SECRET}@a.example/mcp?api_key={SECRET}&page=2"
    server.url = url
    server.save()
    browser = browser_of(alice)
    detail = browser.get(f"/servers/{server.pk}/").content.decode()
    assert SECRET not in detail and "a.example/mcp" in detail
    # The form shows the URL as typed (it is edited there); the header and env values stay masked.
    edit = browser.get(f"/servers/{server.pk}/edit/").content.decode()
    assert edit.count(SECRET) == url.count(SECRET) and f'value="{url.replace("&", "&amp;")}"' in edit


def test_another_users_sessions_are_404_and_ownerless_ones_are_nobodys(alice_and_mallory):
    alice, mallory, _ = alice_and_mallory
    session = Session.objects.create(server_name="s", owner=alice, status="ended")
    ownerless = Session.objects.create(server_name="old", owner=None, status="ended")
    assert browser_of(alice).get(f"/sessions/{session.pk}/").status_code == 200
    for pk in (session.pk, ownerless.pk):
        assert browser_of(mallory).get(f"/sessions/{pk}/").status_code == 404
        assert browser_of(mallory).get(f"/sessions/{pk}/export.jsonl").status_code == 404


def test_stdio_servers_are_for_staff_only_when_so_configured(settings):
    settings.PLAYGROUND_STDIO_USERS = "staff"
    users = get_user_model().objects
    dev, staff = users.create_user("dev", password="pw"), users.create_user("ops", password="pw", is_staff=True)
    form = {"name": "local", "transport": "stdio", "command": "python3", "era": "legacy"}
    refused = browser_of(dev).post("/servers/add/", form)
    assert refused.status_code == 200 and "Only staff may save or start stdio servers" in refused.content.decode()
    imported = browser_of(dev).post(
        "/servers/import/", {"text": json.dumps({"mcpServers": {"x": {"command": "python3"}}})}
    )
    assert "Only staff may" in imported.content.decode() and not Server.objects.filter(owner=dev).exists()
    assert browser_of(staff).post("/servers/add/", form).status_code == 302
    # One saved before the setting changed cannot be started by a non-staff owner.
    old = Server.objects.create(owner=dev, name="old", transport="stdio", command="python3")
    response = browser_of(dev).post(f"/servers/{old.pk}/connect/")
    assert response.status_code == 302 and not Session.objects.exists()


def test_the_admin_applies_the_same_policy_and_is_staff_only(settings):
    settings.PLAYGROUND_STDIO_COMMANDS = ["npx"]
    users = get_user_model().objects
    admin = users.create_superuser("root", password="pw")
    dev = users.create_user("dev", password="pw")
    assert browser_of(dev).get("/admin/registry/server/").status_code == 302  # to the admin's login
    response = browser_of(admin).post(
        "/admin/registry/server/add/",
        {
            "name": "x",
            "transport": "stdio",
            "command": "npx",
            "env": "NODE_OPTIONS=--require /tmp/evil.js",
            "era": "legacy",
            "protocol_version": "",
        },
    )
    assert response.status_code == 200 and "NODE_OPTIONS" in response.content.decode()
    assert not Server.objects.exists()


def test_the_admin_refuses_a_header_the_form_refuses():
    """The admin saves through the server form: a header name that is no HTTP token (issue 30)
    or a value with a NUL is refused there too, named."""
    admin = get_user_model().objects.create_superuser("root", password="pw")
    form = {"name": "x", "transport": "http", "url": "https://example.com/mcp", "era": "legacy", "protocol_version": ""}
    for headers, message in (
        ("X-Api-Key touch: k", "&#x27;X-Api-Key touch&#x27; is not a valid header name"),
        ("X-Api-Key;touch: k", "&#x27;X-Api-Key;touch&#x27; is not a valid header name"),
        ("X-A: a\x00b", "Null characters are not allowed"),
    ):
        response = browser_of(admin).post("/admin/registry/server/add/", {**form, "headers": headers})
        assert response.status_code == 200 and message in response.content.decode()
    assert not Server.objects.exists()
