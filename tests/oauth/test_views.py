"""The OAuth pages: the Authorization view of a flow that failed (recorded from a real
authorization server), the callback's routing, the settings form's secret handling."""

from __future__ import annotations

import asyncio
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.mcp.auth import OAuth
from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.events import Tap
from playground.oauth.models import ServerAuth
from playground.registry.models import Server
from playground.transcripts.models import Session
from playground.transcripts.recorder import save_events
from tests.auth_peer import auth_mock

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(client):
    user = get_user_model().objects.create_user("ann", password="pw")
    client.force_login(user)
    return user


def _record_refused_flow() -> list[dict]:
    """The transcript of a client refusing a wrong `iss` (auth/iss-wrong-issuer's real mock)."""

    async def run() -> list[dict]:
        tap = Tap()
        rows: list[dict] = []
        tap.subscribe(lambda e: rows.append(e.to_dict()))
        with auth_mock("auth/iss-wrong-issuer", "2026-07-28") as url:
            with pytest.raises(ConnectError):
                await open_client(
                    ServerConfig(transport="http", url=url, era="modern", timeout=20), tap=tap, auth=OAuth(tap, url)
                )
        return rows

    return asyncio.run(run())


@pytest.mark.timeout(60)
def test_authorization_view_shows_each_step_and_what_the_spec_expected_where_it_failed(client, user) -> None:
    session = Session.objects.create(server_name="s", owner=user, status="failed", transport="http")
    save_events(session.pk, _record_refused_flow())
    page = client.get(reverse("oauth:authorization", args=[session.pk])).content.decode()
    for step in (
        "challenge",
        "resource-metadata",
        "authorization-server-metadata",
        "registration",
        "authorization-request",
    ):
        assert f'data-step="{step}"' in page
    assert 'data-step="authorization-response" data-status="refused"' in page
    assert "is not the recorded issuer" in page
    assert "The spec expects:</strong> iss identical to the issuer" in page
    assert 'data-step="token"' not in page  # the code never went to the token endpoint
    assert "WWW-Authenticate: Bearer" in page
    # On top, where the flow stopped and why, linked to its step.
    outcome = page[page.index('aria-label="Authorization outcome"') : page.index("<h2>Token</h2>")]
    refused = re.search(r'<li class="auth-step status-refused" id="(step-\d+)"', page)
    assert f'Authorization refused at <a href="#{refused.group(1)}">authorization-response</a>' in outcome
    assert "is not the recorded issuer" in outcome and "The spec expects:</strong> iss identical" in outcome
    # The authorization request's parameters, as a table.
    params = dict(re.findall(r'<tr><th class="mono">([^<]+)</th><td class="mono">([^<]*)</td></tr>', page))
    assert params["code_challenge_method"] == "S256" and params["response_type"] == "code"
    assert params["resource"].startswith("http://localhost:") and len(params["code_challenge"]) == 43


def test_callback_only_reaches_the_callers_own_live_session(client, user) -> None:
    other = get_user_model().objects.create_user("eve", password="pw")
    theirs = Session.objects.create(server_name="s", owner=other, worker_channel="specific.x!y")
    assert client.get(reverse("oauth:callback"), {"state": f"s{theirs.pk}.abc", "code": "c"}).status_code == 404
    assert client.get(reverse("oauth:callback"), {"state": "no-prefix", "code": "c"}).status_code == 404
    mine = Session.objects.create(server_name="s", owner=user, worker_channel="")
    assert client.get(reverse("oauth:callback"), {"state": f"s{mine.pk}.abc", "code": "c"}).status_code == 410


def test_settings_keep_the_secret_unless_cleared_and_never_show_it(client, user) -> None:
    server = Server.objects.create(name="p", transport="http", url="http://127.0.0.1:1/mcp", owner=user)
    url = reverse("oauth:settings", args=[server.pk])
    form = {
        "enabled": "on",
        "client_id": "cid",
        "client_secret": "s3cret-value",
        "auth_method": "client_secret_post",
        "issuer": "https://as.example",
        "scopes": "a b",
        "client_metadata_url": "",
        "redirect_mode": "headless",
    }
    assert client.post(url, form).status_code == 302
    client.post(url, {**form, "client_secret": ""})
    settings = ServerAuth.objects.get(server=server).auth_settings()
    assert (settings.client_id, settings.client_secret, settings.scopes) == ("cid", "s3cret-value", ["a", "b"])
    page = client.get(url).content.decode()
    assert "s3cret-value" not in page and "A secret is stored" in page
    client.post(url, {**form, "client_secret": "", "clear_secret": "on"})
    assert ServerAuth.objects.get(server=server).auth_settings().client_secret == ""
