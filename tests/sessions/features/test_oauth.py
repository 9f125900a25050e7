"""Authorization (OAuth): its cards, and none for stdio servers."""

from __future__ import annotations

from playground.sessions.features import BY_NAME
from tests.sessions.fakes import FakeSession, FakeTab


def test_authorization_cards_show_once_per_tab_and_leave_when_done():
    oauth = BY_NAME["oauth"]
    tab = FakeTab()
    pending = {
        "state": "s1.abc",
        "url": "https://as.example/authorize?x=<b>",
        "issuer": "https://as.example",
        "redirect_uri": "http://127.0.0.1:8000/oauth/callback/",
        "scope": "read",
        "client_id": "c",
    }
    (card,) = oauth.fragments({"pending": pending}, tab)
    assert oauth.fragments({"pending": pending}, tab) == []  # the snapshot and the broadcast
    assert 'id="server-requests" hx-swap-oob="beforeend"' in card and "&lt;b&gt;" in card and "<b>" not in card
    (gone,) = oauth.fragments({"done": "s1.abc"}, tab)
    assert 'hx-swap-oob="delete"' in gone and oauth.fragments({"pending": pending}, tab) != []


def test_stdio_servers_get_no_authorization():
    server = type("Server", (), {"transport": "stdio", "pk": 1, "url": ""})()
    assert BY_NAME["oauth"].prepare(server, callback_url="http://x/") == {}
    assert BY_NAME["oauth"](FakeSession(), {}).client_auth() is None
