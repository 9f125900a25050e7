"""Shares never contain secret header or env values: a hostile server repeats the secrets it
was given (tool names and descriptions, instructions, stderr, results, error messages,
resources, prompts), and the share page and both share exports are searched for them."""

from __future__ import annotations

import json
import sys

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from playground.sessions.live.worker import start_session
from playground.transcripts.models import Event, ShareLink
from tests.conftest import PEERS
from tests.http_peers import free_port, start_peer, stop_peer
from tests.sessions.helpers import communicator, make_user_and_server, receive_until, stop_all

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = str(PEERS / "hostile_server.py")
ENV_SECRET = "env-s3cret-7f9a2c"
TOKEN_SECRET = "tok-s3cret-b81d44"
HEADER_SECRET = "hdr-s3cret-5e0c17"


async def exercise(session, user) -> None:
    """Everything that makes the server talk: list, call, fail, read, prompt."""
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', ">echo<", timeout=30)
        for action in (
            {"action": "call_tool", "name": "echo", "args.text": "hi"},
            {"action": "call_tool", "name": "fail"},
            {"action": "call_tool", "name": "tool_error"},
            {"action": "read_resource", "uri": "javascript:window.__pwned=1//res"},
            {"action": "get_prompt", "name": "hostile_prompt"},
        ):
            await comm.send_to(text_data=json.dumps(action))
            await receive_until(comm, 'aria-label="Result"')
    finally:
        await comm.disconnect()
        await stop_all()


@database_sync_to_async
def shared_texts(session, user) -> tuple[str, list[str]]:
    """The owner's raw transcript, and what a share link shows: page, JSONL, JSON."""
    owner = "\n".join(json.dumps(d) for d in Event.objects.filter(session=session).values_list("data", flat=True))
    link = ShareLink.objects.create(session=session, created_by=user)
    anonymous = Client()
    texts = []
    for suffix in ("", "export.jsonl", "export.json"):
        response = anonymous.get(f"/share/{link.token}/{suffix}")
        assert response.status_code == 200
        texts.append(b"".join(response.streaming_content).decode() if response.streaming else response.content.decode())
    return owner, texts


def assert_clean(owner: str, texts: list[str], secrets: list[str]) -> None:
    for secret in secrets:
        assert secret in owner or json.dumps(secret)[1:-1] in owner, f"the server never repeated {secret}"
        for text in texts:
            assert secret not in text
    page, jsonl, document = texts
    assert "••••" in page and "••••" in jsonl and json.loads(document)["events"]


async def test_env_secrets_repeated_everywhere_never_reach_a_share():
    user, server = await make_user_and_server(
        name="hostile",
        command=sys.executable,
        args=[HOSTILE, "stdio"],
        env={"API_KEY": ENV_SECRET, "SERVICE_TOKEN": TOKEN_SECRET, "HOSTILE_ECHO_ENV": "API_KEY,SERVICE_TOKEN"},
    )
    session = await start_session(server, user)
    await exercise(session, user)
    owner, texts = await shared_texts(session, user)
    assert f"leak_{ENV_SECRET}" in owner  # a tool named after it
    assert "tool error" in owner and owner.count(ENV_SECRET) >= 6  # descriptions, results, errors
    assert any("starting" in line and ENV_SECRET in line for line in owner.splitlines())  # stderr
    assert_clean(owner, texts, [ENV_SECRET, TOKEN_SECRET])


async def test_a_bearer_header_repeated_by_an_http_server_never_reaches_a_share():
    port = free_port()
    proc = start_peer([sys.executable, HOSTILE, "http", str(port)], port)
    try:
        user, server = await make_user_and_server(
            name="hostile-http",
            transport="http",
            command="",
            args=[],
            url=f"http://127.0.0.1:{port}/mcp",
            headers={"Authorization": f"Bearer {HEADER_SECRET}"},
        )
        session = await start_session(server, user)
        await exercise(session, user)
    finally:
        stop_peer(proc)
    owner, texts = await shared_texts(session, user)
    assert f"header: Bearer {HEADER_SECRET}" in owner  # results repeat it
    assert "failure" in owner and owner.count(HEADER_SECRET) >= 3  # and errors do
    assert_clean(owner, texts, [HEADER_SECRET, f"Bearer {HEADER_SECRET}"])
