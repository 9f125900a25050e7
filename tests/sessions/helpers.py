"""What the tests of the live side share (the fakes of a session and a tab are fakes.py's): a
user and a server, a tab's socket and a share viewer's, reading a tab until it has seen what a
test waits for, the saved transcript, the peers."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
import sys
from collections.abc import AsyncIterator
from typing import Any

import daphne.server
import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import AsyncClient

from playground.registry.models import Server
from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from playground.sessions.routing import websocket_urlpatterns
from playground.transcripts.models import Event, Session, ShareLink
from tests.conftest import NPM_BIN, PEERS

EVERYTHING = NPM_BIN / "mcp-server-everything"
MISBEHAVING = str(PEERS / "misbehaving.py")
VARIANT = str(PEERS / "sdk_variant.py")
BREAKER = str(PEERS / "schema_breaker.py")

# The secret header of the `saved` session's server (tests/sessions/views/conftest.py), echoed by it.
SAVED_SECRET = "Bearer sk-live-0123456789abcdef"

# version -> (definition, pointer, message): the one problem each version's breaker commits.
BROKEN = {
    "2024-11-05": ("ListToolsResult", "/result/tools/0", "'inputSchema' is a required property"),
    "2025-03-26": (
        "LoggingMessageNotification",
        "/params/level",
        "'loud' is not one of ['alert', 'critical', 'debug', 'emergency', 'error', 'info', 'notice', 'warning']",
    ),
    "2025-06-18": ("ProgressNotification", "/params/progress", "'half' is not of type 'number'"),
    "2025-11-25": ("CallToolResult", "/result/content/0", "'text' is a required property"),
    "2026-07-28": ("CallToolResult", "/result", "'resultType' is a required property"),
}


def everything_server(**settings: Any) -> dict[str, Any]:
    """A server-everything server's settings (stdio): the test fails when it is not installed."""
    if not EVERYTHING.exists():
        pytest.fail("server-everything is not installed: run `make peers`")
    return dict(name="everything", command=str(EVERYTHING), args=["stdio"], **settings)


# A user, a server, a session ---------------------------------------------------------------


@database_sync_to_async
def make_user_and_server(**server):
    user = get_user_model().objects.create_user("alice", password="pw")
    defaults = {
        "name": "peer",
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(PEERS / "sdk_server.py"), "stdio"],
    }
    defaults.update(server)
    return user, Server.objects.create(owner=user, **defaults)


async def stop_all() -> None:
    for worker in list(WORKERS.values()):
        await worker.stop()


async def events(session_id: int) -> list[dict]:
    """A session's saved rows, in order."""
    return await database_sync_to_async(
        lambda: list(Event.objects.filter(session_id=session_id).order_by("seq").values_list("data", flat=True))
    )()


def sent(rows: list[dict], method: str) -> list[dict]:
    """The messages the client sent with `method`."""
    return [r["message"] for r in rows if r["dir"] == "send" and (r.get("message") or {}).get("method") == method]


@database_sync_to_async
def edit_server(user, pk: int, data: dict[str, str]) -> None:
    """The server's edit page, as a browser uses it: GET the form, POST it with the CSRF token."""
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    assert browser.get(f"/servers/{pk}/edit/").status_code == 200
    response = browser.post(f"/servers/{pk}/edit/", {**data, "csrfmiddlewaretoken": browser.cookies["csrftoken"].value})
    assert response.status_code == 302, response.content.decode()[:2000]


# A tab ---------------------------------------------------------------------------------------


def communicator(session_id: int, user) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/sessions/{session_id}/")
    comm.scope["user"] = user
    return comm


# What daphne refuses to send (it closes the socket instead): a message over its default limit,
# or text it cannot encode as UTF-8. The test communicator would pass both along.
DAPHNE_LIMIT = inspect.signature(daphne.server.Server).parameters["websocket_max_message_size"].default


def sendable(text: str) -> str:
    size = len(text.encode("utf-8"))  # raises on unpaired surrogates, as daphne does
    assert size <= DAPHNE_LIMIT, f"a {size}-byte message would close the page's socket (daphne: {DAPHNE_LIMIT})"
    return text


async def receive_until(comm: WebsocketCommunicator, *needles: str, timeout: float = 20) -> str:
    """Collect fragments until every needle was seen; return everything received. Each must be
    one daphne would send; on a timeout, say what did arrive."""
    seen: list[str] = []
    try:
        async with asyncio.timeout(timeout):
            while not all(any(n in text for text in seen) for n in needles):
                seen.append(sendable(await comm.receive_from(timeout)))
    except TimeoutError:
        missing = [n for n in needles if not any(n in text for text in seen)]
        raise AssertionError(f"never received {missing}; got:\n" + "\n".join(t[:600] for t in seen[-15:])) from None
    return "\n".join(seen)


async def receive_fragment(comm, *needles: str, timeout: float = 20) -> str:
    """The first single fragment that holds every needle (others are skipped): needles spread
    over several fragments (a transcript line, a feed entry) do not count."""
    seen: list[str] = []
    try:
        async with asyncio.timeout(timeout):
            while True:
                seen.append(await comm.receive_from(timeout))
                if all(n in seen[-1] for n in needles):
                    return seen[-1]
    except TimeoutError:
        raise AssertionError(
            f"no fragment held all of {list(needles)}; got:\n" + "\n".join(t[:600] for t in seen[-15:])
        ) from None


async def send(comm, **content) -> None:
    """A page action."""
    await comm.send_to(text_data=json.dumps(content))


@contextlib.asynccontextmanager
async def live_tab(*needles: str, **server: Any) -> AsyncIterator[tuple[Any, Session, WebsocketCommunicator]]:
    """(user, session, tab): a session of the SDK peer (or of a server with `server`'s settings)
    and a tab on it that has seen `needles` (the catalogue, by default); after, the tab is
    closed and every session ended (its saved rows: `events(session.pk)`)."""
    user, srv = await make_user_and_server(**server)
    session = await start_session(srv, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, *(needles or ('id="catalogue"',)))
        yield user, session, comm
    finally:
        await comm.disconnect()
        await stop_all()


async def watch(session: Session, user, *needles: str) -> tuple[Session, list[dict], str]:
    """Open a tab on the session until every needle was seen, end the session, and return it as
    saved, its saved rows and what the tab saw."""
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        seen = await receive_until(comm, *needles)
    finally:
        await comm.disconnect()
        await stop_all()
    session = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    return session, await events(session.pk), seen


def card_key(text: str) -> str:
    """The key of a Server request card."""
    return re.search(r'id="server-request-(q\d+)"', text).group(1)


def task_status(fragment: str) -> str:
    """The status a Task group shows (fragments/result.py renders it as a badge)."""
    task = fragment.split('aria-label="Task"', 1)[1]
    return re.search(r'<span class="badge task-([a-z_]+)">\1</span>', task).group(1)


# A share viewer ------------------------------------------------------------------------------


def viewer(token: str, query: str = "") -> WebsocketCommunicator:
    return WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/share/{token}/{query}")


async def share(session, user) -> ShareLink:
    return await database_sync_to_async(ShareLink.objects.create)(session=session, created_by=user)


async def closed_with(comm: WebsocketCommunicator, timeout: float = 10) -> int:
    """Read until the socket closes; its close code."""
    async with asyncio.timeout(timeout):
        while True:
            output = await comm.output_queue.get()
            if output["type"] == "websocket.close":
                return output.get("code")


# A recorded session ----------------------------------------------------------------------------


async def record_session(user, server) -> Session:
    """A session with build "a" of the variant peer: the lists, three calls, an elicitation
    answered by the person, a prompt got."""
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', "ask_name")
        await send(comm, action="call_tool", name="echo", **{"args.text": "hi"})
        await receive_until(comm, 'aria-label="Result"', "hi")
        await send(comm, action="call_tool", name="version")
        await receive_until(comm, "release 1.0 (stable)")
        await send(comm, action="call_tool", name="ask_name")
        card = await receive_until(comm, 'aria-label="Server request"')
        await send(
            comm,
            action="answer",
            key=card_key(card),
            result=json.dumps({"action": "accept", "content": {"name": "Ada"}}),
        )
        await receive_until(comm, "Hello, Ada!")
        await send(comm, action="get_prompt", name="greeting", **{"args.name": "Ada"})
        await receive_until(comm, 'aria-label="Result"', "Say hello to Ada.")
    finally:
        await comm.disconnect()
        await stop_all()
    return session


@database_sync_to_async
def a_stranger(user):
    """Another user of the playground."""
    return type(user).objects.create_user("mallory", password="pw")


async def logged_in(user) -> AsyncClient:
    client = AsyncClient()
    await database_sync_to_async(client.force_login)(user)
    return client
