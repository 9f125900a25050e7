"""A live session's share link streams to any number of viewers: read-only (nothing a viewer
sends acts), redacted for a share (header and env secrets masked, which the owner's tab shows),
the replay-then-follow path of the owner's tab; revoking the link closes its viewers' sockets;
a share of an ended session is a snapshot."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from playground.sessions.live.share_socket import CLOSE_ENDED, CLOSE_GONE
from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Event, ShareLink
from tests.conftest import PEERS
from tests.sessions.helpers import (
    closed_with,
    communicator,
    make_user_and_server,
    receive_until,
    share,
    stop_all,
    viewer,
)

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "s3cr3t-env-value-789"
MASK = "••••"
REVOKE_DEADLINE = 1.0  # seconds from the revoke to the last viewer's socket closed (issue 14)


async def owner_and_viewer(session, user) -> tuple[WebsocketCommunicator, WebsocketCommunicator, ShareLink]:
    """The owner's tab (the catalogue shown), then a new share link's viewer (its state shown)."""
    owner = communicator(session.pk, user)
    await owner.connect()
    await receive_until(owner, 'id="catalogue"')
    link = await share(session, user)
    v = viewer(link.token)
    await v.connect()
    await receive_until(v, 'id="session-state"')
    return owner, v, link


async def call_echo(owner: WebsocketCommunicator, text: str) -> None:
    await owner.send_to(text_data=json.dumps({"action": "call_tool", "name": "echo", "args.text": text}))


REPLY = re.compile(
    r'<details class="ev ev-recv[^"]*" id="ev-\d+" data-dir="recv" data-method="result" '
    r'data-reply-to="\d+">(?:(?!</details>\n</details>).)*plain text.*?</details>\n</details>',
    re.S,
)


async def reply_line(comm: WebsocketCommunicator) -> str:
    """The transcript line of the echo's response, as this tab received it."""
    seen = ""
    async with asyncio.timeout(20):
        while not (found := REPLY.search(seen)):
            seen += await comm.receive_from(20)
    return found.group(0)


@contextlib.asynccontextmanager
async def followed() -> AsyncIterator[tuple[Any, Any, WebsocketCommunicator, list[WebsocketCommunicator], ShareLink]]:
    """(user, session, owner's tab, viewers, link): a session whose server has an env secret, its
    owner's tab (the catalogue shown) and two viewers of a new share link, each having replayed
    the transcript and followed it; after, every socket closed and the session ended."""
    user, server = await make_user_and_server(env={"API_TOKEN": SECRET})
    session = await start_session(server, user)
    owner = communicator(session.pk, user)
    viewers = []
    try:
        await owner.connect()
        await receive_until(owner, 'id="catalogue"')
        link = await share(session, user)
        for _ in range(2):
            v = viewer(link.token)
            assert (await v.connect())[0]
            viewers.append(v)
            # The replay from the database, then what the worker saves after it (events still in
            # the recorder's buffer when the viewer joined come as live lines): nothing is missed.
            await receive_until(
                v,
                'id="transcript-lines" hx-swap-oob="innerHTML"',
                'id="session-state"',
                'data-method="initialize"',
                'data-method="tools/list"',
            )
        yield user, session, owner, viewers, link
    finally:
        for v in viewers:
            await v.disconnect()
        await owner.disconnect()
        await stop_all()


async def test_viewers_follow_live_masked():
    async with followed() as (_, session, owner, viewers, _link):
        worker = WORKERS[session.pk]
        assert (
            len(worker.audience.share_viewers) == 2 and worker.audience.share_redactor
        )  # rendered once more: env secrets

        await call_echo(owner, f"the token is {SECRET}")
        await receive_until(owner, f"the token is {SECRET}", 'data-method="tools/call"')  # the owner's, unmasked
        for v in viewers:  # live, without a reload, and masked
            seen = await receive_until(v, f"the token is {MASK}", 'data-method="tools/call"')
            assert SECRET not in seen and 'id="catalogue"' not in seen and 'aria-label="Result"' not in seen


async def test_nothing_a_viewer_sends_acts():
    """Whatever a viewer sends is ignored: no call, no disconnect, no command to the worker."""
    async with followed() as (_, session, owner, viewers, _link):
        calls = await database_sync_to_async(Event.objects.filter(session=session, method="tools/call").count)()
        for action in (
            {"action": "call_tool", "name": "echo", "args.text": "from a viewer"},
            {"action": "disconnect"},
            {"action": "raw", "frame": '{"jsonrpc":"2.0","id":99,"method":"ping"}'},
            {"command": "disconnect"},
        ):
            await viewers[0].send_to(text_data=json.dumps(action))
        await call_echo(owner, "after the viewer's attempts")
        await receive_until(viewers[1], "after the viewer&#x27;s attempts")
        assert (
            await database_sync_to_async(Event.objects.filter(session=session, method="tools/call").count)()
            == calls + 1
        )  # the owner's second call; nothing of the viewer's
        rows = await database_sync_to_async(
            lambda: list(Event.objects.filter(session=session).values_list("data", flat=True))
        )()
        assert session.pk in WORKERS and "from a viewer" not in json.dumps(rows)


async def test_revoking_the_link_closes_every_viewers_socket_within_a_second():
    """With a code the page does not reconnect on; a revoked link's socket gets the same answer."""
    async with followed() as (user, session, _owner, viewers, link):
        worker = WORKERS[session.pk]
        browser = Client()
        await database_sync_to_async(browser.force_login)(user)
        loop = asyncio.get_running_loop()
        revoked = loop.time()
        await database_sync_to_async(browser.post)(f"/share/{link.token}/revoke/")
        for v in viewers:
            await receive_until(v, "Revoked", "This share link was revoked.")
            assert await closed_with(v) == CLOSE_GONE
        took = loop.time() - revoked
        assert took < REVOKE_DEADLINE, f"the last viewer's socket closed {took:.2f} s after the revoke"
        async with asyncio.timeout(10):
            while worker.audience.share_viewers:  # their leaving reached the worker: no more share rendering
                await asyncio.sleep(0.01)
        # A revoked link's socket gets the same answer, and nothing of the session.
        late = viewer(link.token)
        await late.connect()
        assert "transcript-lines" not in await receive_until(late, "Revoked")
        assert await closed_with(late) == CLOSE_GONE


async def test_without_secrets_the_owners_lines_are_shared_as_they_are_and_the_end_is_a_snapshot():
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    try:
        owner, v, link = await owner_and_viewer(session, user)
        assert not WORKERS[session.pk].audience.share_redactor
        await call_echo(owner, "plain text")
        assert await reply_line(v) == await reply_line(owner)  # the same line (rendered for each)
        await owner.send_to(text_data=json.dumps({"action": "disconnect"}))
        seen = await receive_until(v, "status-ended", "Snapshot")
        assert 'id="transcript-follow" hx-swap-oob="delete"' in seen  # nothing more to follow
        assert await closed_with(v) == CLOSE_ENDED
        # A viewer of the ended session gets the snapshot and the socket closes.
        snap = viewer(link.token)
        await snap.connect()
        seen = await receive_until(snap, 'id="transcript-lines"', "Snapshot")
        assert "plain text" in seen
        assert await closed_with(snap) == CLOSE_ENDED
        page = (await database_sync_to_async(Client().get)(f"/share/{link.token}/")).content.decode()
        assert "hx-ws:connect" not in page and "data-follow" not in page and ">Snapshot<" in page
        await owner.disconnect()
    finally:
        await stop_all()


async def test_a_live_share_page_connects_and_says_live(settings):
    user, server = await make_user_and_server(command=sys.executable, args=[str(PEERS / "sdk_server.py"), "stdio"])
    session = await start_session(server, user)
    try:
        owner = communicator(session.pk, user)
        await owner.connect()
        await receive_until(owner, 'id="catalogue"')
        await owner.disconnect()
        await WORKERS[session.pk].recorder.flush()  # (the lists' frames saved: nothing comes after)
        link = await share(session, user)
        page = (await database_sync_to_async(Client().get)(f"/share/{link.token}/")).content.decode()
        socket = re.search(r'hx-ws:connect="(/ws/share/[^"]+)"', page)
        assert socket and ">Live<" in page and "data-follow" in page
        assert re.search(r'<p id="share-mode"[^>]* role="status">', page)
        assert "hx-ws:send" not in page and "<form" not in page.split("</header>")[1]
        # The page's socket says what its lines hold: nothing came since, so the worker's answer
        # brings the state and not the same lines again. A socket that does not say gets them.
        assert socket.group(1).startswith(f"/ws/share/{link.token}/?shown=")
        served = viewer(link.token, html.unescape(socket.group(1)).split("/", 4)[-1])
        await served.connect()
        assert "transcript-lines" not in await receive_until(served, 'id="session-state"')
        plain = viewer(link.token)
        await plain.connect()
        assert 'id="transcript-lines" hx-swap-oob="innerHTML"' in await receive_until(plain, 'id="session-state"')
        await served.disconnect()
        await plain.disconnect()
    finally:
        await stop_all()


async def test_a_replays_live_share_masks_its_sources_secrets_as_its_share_page_does():
    """A replay's session masks the secrets of the session it replays (the server's old token:
    its recorded frames reach this session) on its share page and exports; its live share
    lines mask them too."""
    old, new = "old-t0ken-4567", "new-t0ken-8910"
    user, server = await make_user_and_server(env={"API_TOKEN": old})
    source = await start_session(server, user)
    await WORKERS[source.pk].stop()
    server.env = {"API_TOKEN": new}
    await database_sync_to_async(server.save)()
    source = await database_sync_to_async(type(source).objects.get)(pk=source.pk)
    session = await start_session(server, user, replay_of=source)
    try:
        owner, v, _link = await owner_and_viewer(session, user)
        await call_echo(owner, f"old {old} new {new}")
        seen = await receive_until(v, f"old {MASK} new {MASK}")
        assert old not in seen and new not in seen
        await v.disconnect()
        await owner.disconnect()
    finally:
        await stop_all()
