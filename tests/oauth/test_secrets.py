"""OAuth tokens are secrets: a page session authorizes at the official SDK's authorization
server (tokens, a refresh token, a DCR client secret, codes), refreshes from the page, and the
values the store holds are then searched for in everything the session can be read through —
the session page (live and reloaded), the Authorization view, both exports, the share page and
both share exports. The server echoes the Authorization header it received, before and after
the refresh: the transcript keeps the frame as it came, and every way of reading it masks the
token — the owner's included."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from playground.oauth.models import OAuthRecord, ServerAuth
from playground.sessions.live.worker import start_session
from playground.transcripts.models import Event, ShareLink
from tests.auth_peer import sdk_auth_server
from tests.sessions.helpers import communicator, make_user_and_server, receive_until, stop_all

pytestmark = pytest.mark.django_db(transaction=True)


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait for a database condition (events are saved in batches)."""
    check = database_sync_to_async(condition)
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.05)


def stored_secrets(server_pk: int) -> list[str]:
    """Token and client secret values as the store holds them (not the session's own list)."""
    out = []
    for record in OAuthRecord.objects.filter(server_id=server_pk):
        tokens, client = record.data.get("tokens") or {}, record.data.get("client") or {}
        out += [tokens.get("access_token"), tokens.get("refresh_token"), client.get("client_secret")]
    return [s for s in out if s]


@pytest.mark.timeout(90)
async def test_oauth_tokens_never_reach_a_page_a_share_or_an_export():
    with sdk_auth_server() as url:
        user, server = await make_user_and_server(name="protected", transport="http", command="", args=[], url=url)
        await database_sync_to_async(ServerAuth.objects.create)(server=server, redirect_mode="headless")
        session = await start_session(server, user)
        comm = communicator(session.pk, user)
        owner = Client()
        await database_sync_to_async(owner.force_login)(user)
        try:
            await comm.connect()
            live = [await receive_until(comm, 'id="catalogue"', ">whoami<", ">echo_authorization<", timeout=30)]
            await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "whoami"}))
            live.append(await receive_until(comm, 'aria-label="Result"'))
            assert "authorized" in live[-1]
            first = await database_sync_to_async(stored_secrets)(server.pk)
            assert len(first) == 3  # access token (a JWT), refresh token, DCR client secret
            live.append(await echo(comm))

            response = await database_sync_to_async(owner.post)(
                reverse("oauth:token_action", args=[session.pk, "refresh"])
            )
            assert response.status_code == 302
            await until(
                lambda: Event.objects.filter(
                    session=session, data__kind="auth", data__data__step="refresh", data__data__status="ok"
                ).exists()
            )
            live.append(await echo(comm))  # with the refreshed token
            await until(lambda: len(echoed_frames(session.pk)) == 2)
            # The transcript lines of the answers (saved first, shown after), up to the last one's.
            last = await database_sync_to_async(lambda: echoed_seqs(session.pk)[-1])()
            live.append(await receive_until(comm, f'id="ev-{last}"'))
        finally:
            await comm.disconnect()
            await stop_all()
    secrets = sorted(set(first + await database_sync_to_async(stored_secrets)(server.pk)))
    assert len(secrets) == 5  # the refresh rotated both tokens
    texts = await database_sync_to_async(readable_texts)(owner, session.pk, user)
    texts["the owner's live page"] = "\n".join(live)
    texts["the owner's page, reconnected"] = await replayed(session.pk, user, last)
    for name, text in texts.items():
        assert not [s for s in secrets if s in text], name
        if name != "authorization view":  # (it lists the flow's steps, not tool results)
            assert ECHOED_MASKED in text, name
    # The database keeps each frame as it came: the server did echo both access tokens.
    raws = await database_sync_to_async(echoed_frames)(session.pk)
    assert len(raws) == 2 and all(any(s in raw for s in secrets) for raw in raws)
    # The exchanges are there, masked (token and refresh responses); the challenge is shown whole.
    events = [json.loads(line) for line in texts["export.jsonl"].splitlines()]
    bodies = [
        json.loads(e["data"]["response_body"])
        for e in events
        if e.get("kind") == "http" and (e.get("data") or {}).get("auth_step") in ("token", "refresh")
    ]
    assert [b["access_token"] for b in bodies] == ["••••", "••••"]
    challenges = [
        e["http"]["headers"]["www-authenticate"]
        for e in events
        if e.get("kind") == "http" and (e.get("data") or {}).get("auth_step") == "challenge"
    ]
    assert challenges and challenges[0].startswith('Bearer error="invalid_token"')


ECHOED = "you sent: Bearer "
ECHOED_MASKED = "you sent: Bearer \u2022\u2022\u2022\u2022"


def echoed_frames(session_pk: int) -> list[str]:
    """The server's answers to echo_authorization, as the database holds them."""
    return [d["raw"] for d in _echoed(session_pk)]


def echoed_seqs(session_pk: int) -> list[int]:
    return [d["seq"] for d in _echoed(session_pk)]


def _echoed(session_pk: int) -> list[dict]:
    rows = Event.objects.filter(session_id=session_pk, dir="recv").order_by("seq").values_list("data", flat=True)
    return [d for d in rows if ECHOED in (d.get("raw") or "")]


async def echo(comm) -> str:
    """Call the tool that answers with the Authorization header it got; what the page received."""
    await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "echo_authorization"}))
    return await receive_until(comm, 'aria-label="Result"', "you sent:")


async def replayed(session_pk: int, user, last: int) -> str:
    """What a tab (re)connecting to the session gets: the transcript replayed from the database
    (up to the line of event `last`), then the state and the catalogue, sent last."""
    comm = communicator(session_pk, user)
    try:
        await comm.connect()
        return await receive_until(comm, f'id="ev-{last}"', 'id="session-state"', 'id="catalogue"')
    finally:
        await comm.disconnect()


def readable_texts(owner: Client, session_pk: int, user) -> dict[str, str]:
    """Every way the session can be read: the owner's pages and exports, a share link's."""
    link = ShareLink.objects.create(session_id=session_pk, created_by=user)
    anonymous = Client()
    out = {}
    for name, client, path in [
        ("session page", owner, reverse("sessions:detail", args=[session_pk])),
        ("authorization view", owner, reverse("oauth:authorization", args=[session_pk])),
        ("export.jsonl", owner, reverse("sessions:export_jsonl", args=[session_pk])),
        ("export.json", owner, reverse("sessions:export_json", args=[session_pk])),
        ("share page", anonymous, reverse("sessions:share_page", args=[link.token])),
        ("share.jsonl", anonymous, reverse("sessions:share_jsonl", args=[link.token])),
        ("share.json", anonymous, reverse("sessions:share_json", args=[link.token])),
    ]:
        response = client.get(path)
        assert response.status_code == 200, name
        out[name] = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
    return out
