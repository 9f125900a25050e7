"""`manage.py playground_setup` and the one-time login link it prints."""

from __future__ import annotations

import io
import re
import sys
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from playground.core.management.commands.playground_setup import DEMO_SERVER_NAME
from playground.registry.models import LoginToken, Server

pytestmark = pytest.mark.django_db

LINK = re.compile(r"^MCP Playground: (http://\S+/login/token/(\S+)/)$", re.M)


def run_setup(**kwargs) -> str:
    out = io.StringIO()
    call_command("playground_setup", stdout=out, **kwargs)
    return out.getvalue()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv("PLAYGROUND_USER", raising=False)
    monkeypatch.delenv("PLAYGROUND_PASSWORD", raising=False)


def test_setup_creates_user_and_demo_server_idempotently(settings):
    settings.PLAYGROUND_BIND, settings.PLAYGROUND_PORT = "127.0.0.1", 8123
    out = run_setup()
    user = get_user_model().objects.get(username="admin")
    assert not user.has_usable_password()
    demo = Server.objects.get(name=DEMO_SERVER_NAME)
    assert (demo.transport, demo.command, demo.args) == ("stdio", sys.executable, ["-m", "playground.demo_server"])
    assert demo.cwd == str(settings.BASE_DIR) and demo.era == "legacy"
    match = LINK.search(out)
    assert match and match.group(1).startswith("http://127.0.0.1:8123/login/token/")

    demo.args = ["-m", "playground.demo_server", "--edited"]
    demo.save()
    out2 = run_setup()
    assert get_user_model().objects.count() == 1
    assert Server.objects.filter(name=DEMO_SERVER_NAME).get().args[-1] == "--edited"  # not overwritten
    assert LINK.search(out2).group(2) != match.group(2)  # a fresh link


def test_setup_user_and_password_from_env(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_USER", "alice")
    monkeypatch.setenv("PLAYGROUND_PASSWORD", "correct horse")
    run_setup(no_link=True)
    user = get_user_model().objects.get(username="alice")
    assert user.check_password("correct horse")
    monkeypatch.setenv("PLAYGROUND_PASSWORD", "battery staple")
    out = run_setup(no_link=True)
    user.refresh_from_db()
    assert user.check_password("battery staple")
    assert not LINK.search(out) and not LoginToken.objects.exists()


def test_wildcard_bind_prints_loopback(settings):
    settings.PLAYGROUND_BIND, settings.PLAYGROUND_PORT = "0.0.0.0", 9000
    assert LINK.search(run_setup()).group(1).startswith("http://127.0.0.1:9000/")


def test_printed_link_logs_in_once(client):
    url = LINK.search(run_setup()).group(1)
    path = url.split("8000", 1)[1] if ":8000" in url else "/" + url.split("/", 3)[3]
    response = client.get(path)
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200
    client.logout()
    refused = client.get(path)
    assert refused.status_code == 403
    assert "invalid, already used or expired" in refused.content.decode()
    assert client.get("/").status_code == 302


def test_token_is_stored_hashed():
    token = LINK.search(run_setup()).group(2)
    stored = LoginToken.objects.get()
    assert token not in stored.token_hash and len(stored.token_hash) == 64


def test_expired_token_refused(client):
    user = get_user_model().objects.create_user("bob")
    token = LoginToken.issue(user)
    LoginToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert client.get(f"/login/token/{token}/").status_code == 403
    assert client.get("/").status_code == 302


def test_token_expires_after_an_hour():
    user = get_user_model().objects.create_user("carol")
    LoginToken.issue(user)
    stored = LoginToken.objects.get()
    assert stored.expires - stored.created == timedelta(hours=1)


def test_unknown_token_and_inactive_user_refused(client):
    assert client.get("/login/token/not-a-token/").status_code == 403
    user = get_user_model().objects.create_user("dave", is_active=False)
    token = LoginToken.issue(user)
    assert client.get(f"/login/token/{token}/").status_code == 403
    assert client.get("/").status_code == 302
