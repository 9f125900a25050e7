"""Who may do what: login everywhere but share links, CSRF on forms and htmx requests, Host
validation for HTTP and websockets (DNS rebinding), and no socket that acts for a share page."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from playground.asgi import application
from playground.registry.models import Server
from playground.sessions.routing import websocket_urlpatterns
from playground.transcripts.models import Session, ShareLink

# Reachable without logging in, on purpose. Everything else must send an anonymous visitor to log in.
PUBLIC = {
    "login",
    "logout",
    "token_login",
    "sessions:share_page",
    "sessions:share_jsonl",
    "sessions:share_json",
    "sessions:share_har",
    "sessions:share_curl",
    "sessions:share_model_view_json",
    "sessions:share_model_view",
    "sessions:share_model_view_result",
    "sessions:share_lines",  # the share page's transcript window: its chunks and its filter
    "sessions:share_find",
    "chat:share",  # a chat's read-only share link (playground/chat/views.py: by its token only)
    "chat:share_export",  # its JSON export, by the same token
    "static",
    "admin:login",
    "admin:logout",
}
# Served to a capture process or a host, not a browser: a capture token authenticates them (the
# login and its cookie give nothing), and they are exempt from CSRF (playground/capture/views.py).
TOKEN_AUTH = {"capture:upload", "capture:http", "capture:http_below"}


def every_pattern(resolver: URLResolver | None = None, prefix: str = "", ns: str = ""):
    """(name, example path) for every URL pattern, nested includes included."""
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            space = f"{ns}{entry.namespace}:" if entry.namespace else ns
            yield from every_pattern(entry, prefix + str(entry.pattern), space)
        else:
            assert isinstance(entry, URLPattern)
            yield (ns + entry.name if entry.name else "static"), prefix + str(entry.pattern)


def example(pattern: str) -> str:
    path = re.sub(r"<int:[^>]+>", "1", pattern)
    path = re.sub(r"<(?:str:|path:)?[^>]+>", "x", path)
    path = re.sub(r"\^|\$|\(\?P<[^>]+>[^)]*\)", "", path)
    return "/" + path.replace("\\", "")


PATTERNS = sorted(set(every_pattern()))


def test_the_walk_finds_the_app_pages_and_every_public_one():
    names = {name for name, _ in PATTERNS}
    assert {
        "registry:home",
        "registry:add",
        "sessions:detail",
        "sessions:connect",
        "sessions:share",
        "sessions:export_jsonl",
        "sessions:revoke",
        "admin:index",
    } <= names
    assert names >= PUBLIC  # a renamed public page must not hide a private one's check


@pytest.mark.django_db
@pytest.mark.parametrize("name, pattern", [(n, p) for n, p in PATTERNS if n not in PUBLIC | TOKEN_AUTH])
def test_every_url_but_share_links_requires_login(client, name, pattern):
    path = example(pattern)
    for method in ("get", "post"):
        response = getattr(client, method)(path)
        if response.status_code == 405:  # the other method is the real one
            continue
        assert response.status_code == 302, (method, path, response.status_code)
        assert "/login/" in response["Location"], (method, path, response["Location"])


@pytest.fixture
def owner(db):
    user = get_user_model().objects.create_user("olga", password="pw")
    server = Server.objects.create(name="s", transport="http", url="http://127.0.0.1:9/mcp", owner=user)
    session = Session.objects.create(server=server, server_name="s", owner=user, status="ended")
    return user, session


def test_htmx_post_without_the_csrf_token_is_refused(owner):
    user, session = owner
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    page = browser.get(f"/sessions/{session.pk}/")
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page.content.decode()).group(1)
    htmx = {"HTTP_HX_REQUEST": "true"}
    refused = browser.post(f"/sessions/{session.pk}/share/", **htmx)
    assert refused.status_code == 403 and not ShareLink.objects.exists()
    accepted = browser.post(f"/sessions/{session.pk}/share/", HTTP_X_CSRFTOKEN=token, **htmx)
    assert accepted.status_code == 200 and ShareLink.objects.count() == 1
    form = browser.post(f"/servers/{session.server_id}/delete/")  # a plain form, no token
    assert form.status_code == 403 and Server.objects.exists()


@pytest.mark.parametrize("name, pattern", [(n, p) for n, p in PATTERNS if n in TOKEN_AUTH])
def test_the_capture_endpoints_refuse_anyone_without_a_capture_token(owner, name, pattern):
    """Logged in or not, a request without a capture token gets 401 (405 for a method not served)."""
    user, _session = owner
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    for client in (Client(), browser):
        for method in ("get", "post"):
            status = getattr(client, method)(example(pattern)).status_code
            assert status in (401, 405), (name, method, status)
    assert {getattr(Client(), m)(example(pattern)).status_code for m in ("get", "post")} & {401}


@pytest.mark.parametrize("name, pattern", [(n, p) for n, p in PATTERNS if n not in TOKEN_AUTH])
def test_every_post_without_the_csrf_token_is_refused(owner, name, pattern):
    """No view is exempt: a logged-in browser's POST without the token is refused everywhere."""
    user, session = owner
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    response = browser.post(example(pattern), {"name": "x"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 403, (name, response.status_code)


def test_another_user_can_neither_see_nor_share_nor_revoke(owner):
    user, session = owner
    link = ShareLink.objects.create(session=session, created_by=user)
    mallory = get_user_model().objects.create_user("mallory", password="pw")
    browser = Client()
    browser.force_login(mallory)
    for path in (f"/sessions/{session.pk}/", f"/sessions/{session.pk}/export.json"):
        assert browser.get(path).status_code == 404, path
    assert browser.post(f"/sessions/{session.pk}/share/").status_code == 404
    assert browser.post(f"/share/{link.token}/revoke/").status_code == 404
    link.refresh_from_db()
    assert link.revoked_at is None and ShareLink.objects.count() == 1
    assert browser.get(f"/share/{link.token}/").status_code == 200  # a share link is for anyone


def test_a_foreign_host_header_is_refused(owner):
    user, session = owner
    browser = Client()
    browser.force_login(user)
    assert browser.get("/", HTTP_HOST="127.0.0.1:8000").status_code == 200
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.nip.io"):
        assert browser.get("/", HTTP_HOST=host).status_code == 400, host
    link = ShareLink.objects.create(session=session)
    assert browser.get(f"/share/{link.token}/", HTTP_HOST="evil.example").status_code == 400


@pytest.mark.django_db(transaction=True)
async def test_websockets_check_host_and_origin_and_only_serve_owners():
    user, session, cookie = await database_sync_to_async(_owner_and_session)()

    async def attempt(host: bytes, origin: bytes | None, cookie: bytes = b"") -> bool:
        headers = [(b"host", host)] + ([(b"origin", origin)] if origin else []) + [(b"cookie", cookie)]
        comm = WebsocketCommunicator(application, f"/ws/sessions/{session.pk}/", headers=headers)
        connected, _ = await comm.connect()
        await comm.disconnect()
        return connected

    assert await attempt(b"127.0.0.1:8000", b"http://127.0.0.1:8000", cookie)  # the owner, from the app's page
    # DNS rebinding: the browser believes it talks to evil.example and says so in Host and Origin.
    assert not await attempt(b"evil.example:8000", b"http://evil.example:8000", cookie)
    assert not await attempt(b"evil.example:8000", b"http://127.0.0.1:8000", cookie)  # foreign Host alone
    assert not await attempt(b"127.0.0.1:8000", b"http://evil.example:8000", cookie)  # foreign Origin alone
    assert not await attempt(b"127.0.0.1:8000", None, cookie)  # no Origin
    # Another port, scheme or a null Origin is another page: a dev server, a page a server opened.
    for foreign in (
        b"http://127.0.0.1:3000",
        b"http://localhost:8000",
        b"https://127.0.0.1:8000",
        b"null",
        b"http://127.0.0.1",
    ):
        assert not await attempt(b"127.0.0.1:8000", foreign, cookie), foreign
    assert not await attempt(b"127.0.0.1:8000", b"http://127.0.0.1:8000")  # anonymous
    other = await database_sync_to_async(_logged_in_cookie)("mallory")
    assert not await attempt(b"127.0.0.1:8000", b"http://127.0.0.1:8000", other)  # someone else
    # Two socket routes: the owner's session socket, and a share link's read-only one (whose
    # Host and Origin are checked the same way; what it does: tests/sessions/live/test_share_socket.py).
    assert [str(p.pattern) for p in websocket_urlpatterns] == ["ws/sessions/<int:session_id>/", "ws/share/<str:token>/"]
    link = await database_sync_to_async(ShareLink.objects.create)(session=session)

    async def share_attempt(host: bytes, origin: bytes | None) -> bool:
        headers = [(b"host", host)] + ([(b"origin", origin)] if origin else [])
        comm = WebsocketCommunicator(application, f"/ws/share/{link.token}/", headers=headers)
        connected, _ = await comm.connect()
        await comm.disconnect()
        return connected

    assert await share_attempt(b"127.0.0.1:8000", b"http://127.0.0.1:8000")  # anyone with the link
    for host, origin in (
        (b"evil.example:8000", b"http://evil.example:8000"),
        (b"127.0.0.1:8000", None),
        (b"127.0.0.1:8000", b"http://127.0.0.1:3000"),
        (b"127.0.0.1:8000", b"null"),
    ):
        assert not await share_attempt(host, origin), (host, origin)


def _logged_in_cookie(username: str) -> bytes:
    browser = Client()
    browser.force_login(get_user_model().objects.create_user(username, password="pw"))
    return f"sessionid={browser.cookies['sessionid'].value}".encode()


def _owner_and_session():
    cookie = _logged_in_cookie("pat")
    user = get_user_model().objects.get(username="pat")
    return user, Session.objects.create(server_name="s", owner=user, status="ended"), cookie


def test_every_page_sends_a_content_security_policy_without_inline_script(owner):
    browser = Client()
    browser.force_login(owner[0])
    for path in ("/login/", "/", "/servers/add/", "/admin/login/"):
        policy = browser.get(path)["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
        assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
        assert "ws://testserver" in directives["connect-src"]
