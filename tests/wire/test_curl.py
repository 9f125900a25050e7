"""Copy as curl: the command a transcript line gives repeats the request — run with the curl
binary against a live SDK peer (Streamable HTTP with the live session's id; HTTP+SSE, whose
answer comes on the session's stream), it gets the same answer; a GET stream's and a DELETE's
lines too; masked by default (and still a command that runs), the real values for the owner
only, never on a share."""
from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import AsyncClient

from playground.mcp.auth import AuthRecord, TokenSet
from playground.mcp.config import ServerConfig
from playground.mcp.connect import open_client
from playground.mcp.events import Tap
from playground.mcp.secrets import MASK, Redactor
from playground.oauth.models import OAuthRecord
from playground.registry.models import Server
from playground.sessions.lines import is_request
from playground.transcripts import curl
from playground.transcripts.models import Session, ShareLink
from playground.transcripts.recorder import save_events
from tests.core.test_http_transports import sdk_http, sdk_sse  # noqa: F401  (the fixtures)

SECRET = "k-curl-0123456789abcdef"
TEXT = "it's \"quoted\" $HOME `uname` \\ and\na new line, é"


async def _run(command: str) -> str:
    """A copied command run by bash, as someone pasting it would (its output; it must succeed)."""
    ran = await asyncio.to_thread(subprocess.run, ["bash", "-c", command], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def _answer(output: str) -> dict[str, Any]:
    """The JSON-RPC message in a response body: JSON, or the data of an SSE stream's events."""
    text = output.strip()
    if text.startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    messages = [json.loads(d) for d in data if d]
    return next(m for m in messages if "result" in m or "error" in m)


@pytest.mark.django_db(transaction=True)
async def test_the_copied_command_gets_the_same_answer_from_the_peer(sdk_http):  # noqa: F811
    user = await sync_to_async(get_user_model().objects.create_user)("curl", password="pw")
    server = await sync_to_async(Server.objects.create)(name="sdk", transport="http", url=sdk_http,
                                                        headers={"X-Api-Key": SECRET}, owner=user)
    session = await sync_to_async(Session.objects.create)(
        server=server, server_name="sdk", owner=user, status="connected", transport="streamable-http",
        secret_values=server.to_config().secret_values())
    tap = Tap()
    rows: list[dict[str, Any]] = []
    tap.subscribe(lambda e: rows.append(e.to_dict()))
    # The client sends a bearer token the server's form does not hold: as an OAuth flow's would be.
    client = await open_client(ServerConfig(transport="http", url=sdk_http, timeout=20,
                                            headers={"X-Api-Key": SECRET, "Authorization": "Bearer tok-then"}), tap=tap)
    record = await sync_to_async(OAuthRecord.objects.create)(server=server, issuer="https://as.example", data=AuthRecord(
        "https://as.example", resource=sdk_http, tokens=TokenSet("tok-for-this-url")).to_dict())
    try:
        await client.call_tool("echo", {"text": TEXT})
        await sync_to_async(save_events)(session.pk, rows)
        call = next(r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "tools/call")
        recorded = next(r for r in rows if r.get("reply_to") == call["seq"])["message"]
        browser = AsyncClient()
        await browser.aforce_login(user)
        url = f"/sessions/{session.pk}/curl/{call['seq']}/"

        masked = (await browser.get(url)).content.decode()
        assert SECRET not in masked and f"X-Api-Key: {MASK}" in masked and masked.startswith("# masked")
        for header in ("Mcp-Session-Id: ", "MCP-Protocol-Version: ", "Accept: application/json, text/event-stream",
                       "Content-Type: application/json"):
            assert header in masked
        assert f"curl -sS -N {sdk_http}" in masked and "--data-raw '" in masked

        full = await browser.get(url + "?secrets=1")
        command = full.content.decode()
        assert full["Cache-Control"] == "no-store" and f"X-Api-Key: {SECRET}" in command and MASK not in command
        assert "Authorization: Bearer tok-for-this-url" in command
        answer = _answer(await _run(command))
        assert answer["id"] == call["message"]["id"] and answer["result"] == recorded["result"]
        assert answer["result"]["content"][0]["text"] == TEXT                  # the body went byte for byte

        # A token issued for another URL is not filled in; a request that went to another URL
        # than the server's now gets none of its values: the command says why it stays masked.
        record.data = AuthRecord("https://as.example", resource="http://127.0.0.1:9/elsewhere",
                                 tokens=TokenSet("tok-for-elsewhere")).to_dict()
        await sync_to_async(record.save)()
        command = (await browser.get(url + "?secrets=1")).content.decode()
        assert f"X-Api-Key: {SECRET}" in command and f"Authorization: Bearer {MASK}" in command
        assert command.startswith(f"# the OAuth token is not filled in: the stored ones were issued for another "
                                  f"URL than {sdk_http}\n") and "tok-for" not in command
        server.url = sdk_http.replace("/mcp", "/moved/mcp")
        await sync_to_async(server.save)()
        command = (await browser.get(url + "?secrets=1")).content.decode()
        assert command.startswith(f"# secrets not filled in: this request went to {sdk_http}, not to the "
                                  f"server's URL now ({server.url})\n")
        assert SECRET not in command and f"X-Api-Key: {MASK}" in command and "tok-" not in command

        # A share never gives the real values, whatever the query says.
        link = await sync_to_async(ShareLink.objects.create)(session=session, created_by=user)
        shared = (await AsyncClient().get(f"/share/{link.token}/curl/{call['seq']}/?secrets=1")).content.decode()
        assert SECRET not in shared and f"X-Api-Key: {MASK}" in shared
        # Someone else's session is not there at all; a line that is no HTTP request neither.
        other = await sync_to_async(get_user_model().objects.create_user)("eve", password="pw")
        intruder = AsyncClient()
        await intruder.aforce_login(other)
        assert (await intruder.get(url + "?secrets=1")).status_code == 404
        note = next(r for r in rows if r["dir"] == "note" and not r.get("http"))
        assert (await browser.get(f"/sessions/{session.pk}/curl/{note['seq']}/")).status_code == 404

        # The standalone GET stream's line and, once the client closes, the DELETE's.
        saved = len(rows)
        await client.close()
        await sync_to_async(save_events)(session.pk, rows[saved:])
        opened = {r["http"]["method"]: r for r in rows if is_request(r) and r["dir"] == "note"}
        session_id = next(v for k, v in call["http"]["headers"].items() if k.lower() == "mcp-session-id")
        stream = (await browser.get(f"/sessions/{session.pk}/curl/{opened['GET']['seq']}/")).content.decode()
        assert f"curl -sS -N {sdk_http} \\\n" in stream and "-X " not in stream and "--data-raw" not in stream
        for header in ("Accept: text/event-stream", f"Mcp-Session-Id: {session_id}", f"X-Api-Key: {MASK}"):
            assert header in stream
        ended = (await browser.get(f"/sessions/{session.pk}/curl/{opened['DELETE']['seq']}/")).content.decode()
        assert f"curl -sS -X DELETE {sdk_http} \\\n" in ended and "--data-raw" not in ended
        assert f"Mcp-Session-Id: {session_id}" in ended and f"X-Api-Key: {MASK}" in ended
        # Masked, it still runs: the session it names has ended, which the peer says with a 404.
        status = await _run(ended.rstrip("\n") + " -o /dev/null -w '%{http_code}'")
        assert opened["DELETE"]["http"]["status"] == 200 and status == "404"
    finally:
        await client.close()


@pytest.mark.timeout(60)
async def test_an_http_sse_post_repeated_is_answered_on_the_session_stream(sdk_sse):  # noqa: F811
    """HTTP+SSE: the POST goes to the endpoint the stream named (its session in the query) and is
    accepted (202); the answer comes on the open stream, the same as the one recorded."""
    tap = Tap()
    rows: list[dict[str, Any]] = []
    tap.subscribe(lambda e: rows.append(e.to_dict()))
    client = await open_client(ServerConfig(transport="sse", url=sdk_sse, timeout=20), tap=tap)
    try:
        await client.call_tool("echo", {"text": TEXT})
        call = next(r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "tools/call")
        recorded = next(r for r in rows if r.get("reply_to") == call["seq"])
        stream = next(r for r in rows if is_request(r) and r["http"]["method"] == "GET")
        assert curl.command(stream).startswith(f"curl -sS -N {sdk_sse} \\\n")
        command = curl.command(Redactor().obj(call))             # as the owner's and a share's (no secret here)
        endpoint = call["http"]["url"]
        assert "session_id=" in endpoint and f"curl -sS {shlex.quote(endpoint)} \\\n" in command
        assert "Content-Type: application/json" in command and "-X " not in command
        again = asyncio.Event()
        tap.subscribe(lambda e: again.set() if e.dir == "recv" and e.seq > recorded["seq"] and
                      (e.message or {}).get("id") == call["message"]["id"] else None)
        assert await _run(command) == "Accepted"
        await asyncio.wait_for(again.wait(), 20)
        repeated = next(r for r in rows if r["dir"] == "recv" and r["seq"] > recorded["seq"]
                        and (r["message"] or {}).get("id") == call["message"]["id"])
        assert repeated["message"]["result"] == recorded["message"]["result"]
        assert repeated["message"]["result"]["content"][0]["text"] == TEXT
    finally:
        await client.close()
