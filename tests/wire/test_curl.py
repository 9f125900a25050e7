"""Copy as curl: the command a transcript line gives repeats the request — run with the curl
binary against a live SDK peer (Streamable HTTP with the live session's id; HTTP+SSE, whose
answer comes on the session's stream), it gets the same answer; a GET stream's and a DELETE's
lines too; masked by default (and still a command that runs), the real values for the owner
only, never on a share."""

from __future__ import annotations

import asyncio
import json
import os
import select
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import AsyncClient, Client

from playground.mcp.auth import AuthRecord, TokenSet
from playground.mcp.config import ServerConfig
from playground.mcp.connect import open_client
from playground.mcp.events import Tap
from playground.mcp.secrets import MASK, Redactor
from playground.oauth.models import OAuthRecord
from playground.registry.models import Server
from playground.sessions.fragments.lines import is_request
from playground.transcripts import curl
from playground.transcripts.models import Event, Session, ShareLink
from playground.transcripts.recorder import save_events

SECRET = "k-curl-0123456789abcdef"
TEXT = 'it\'s "quoted" $HOME `uname` \\ and\na new line, é'


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
async def test_the_copied_command_gets_the_same_answer_from_the_peer(sdk_http):
    user = await sync_to_async(get_user_model().objects.create_user)("curl", password="pw")
    server = await sync_to_async(Server.objects.create)(
        name="sdk", transport="http", url=sdk_http, headers={"X-Api-Key": SECRET}, owner=user
    )
    session = await sync_to_async(Session.objects.create)(
        server=server,
        server_name="sdk",
        owner=user,
        status="connected",
        transport="streamable-http",
        secret_values=server.to_config().secret_values(),
    )
    tap = Tap()
    rows: list[dict[str, Any]] = []
    tap.subscribe(lambda e: rows.append(e.to_dict()))
    # The client sends a bearer token the server's form does not hold: as an OAuth flow's would be.
    client = await open_client(
        ServerConfig(
            transport="http",
            url=sdk_http,
            timeout=20,
            headers={"X-Api-Key": SECRET, "Authorization": "Bearer tok-then"},
        ),
        tap=tap,
    )
    record = await sync_to_async(OAuthRecord.objects.create)(
        server=server,
        issuer="https://as.example",
        data=AuthRecord("https://as.example", resource=sdk_http, tokens=TokenSet("tok-for-this-url")).to_dict(),
    )
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
        for header in (
            "Mcp-Session-Id: ",
            "MCP-Protocol-Version: ",
            "Accept: application/json, text/event-stream",
            "Content-Type: application/json",
        ):
            assert header in masked
        assert f"curl -sS -N {sdk_http}" in masked and "--data-raw '" in masked

        full = await browser.get(url + "?secrets=1")
        command = full.content.decode()
        assert full["Cache-Control"] == "no-store" and f"X-Api-Key: {SECRET}" in command and MASK not in command
        assert "Authorization: Bearer tok-for-this-url" in command
        answer = _answer(await _run(command))
        assert answer["id"] == call["message"]["id"] and answer["result"] == recorded["result"]
        assert answer["result"]["content"][0]["text"] == TEXT  # the body went byte for byte

        # A token issued for another URL is not filled in; a request that went to another URL
        # than the server's now gets none of its values: the command says why it stays masked.
        record.data = AuthRecord(
            "https://as.example", resource="http://127.0.0.1:9/elsewhere", tokens=TokenSet("tok-for-elsewhere")
        ).to_dict()
        await sync_to_async(record.save)()
        command = (await browser.get(url + "?secrets=1")).content.decode()
        assert f"X-Api-Key: {SECRET}" in command and f"Authorization: Bearer {MASK}" in command
        assert (
            command.startswith(
                f"# the OAuth token is not filled in: the stored ones were issued for another URL than {sdk_http}\n"
            )
            and "tok-for" not in command
        )
        server.url = sdk_http.replace("/mcp", "/moved/mcp")
        await sync_to_async(server.save)()
        command = (await browser.get(url + "?secrets=1")).content.decode()
        assert command.startswith(
            f"# secrets not filled in: this request went to {sdk_http}, not to the server's URL now ({server.url})\n"
        )
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
async def test_an_http_sse_post_repeated_is_answered_on_the_session_stream(sdk_sse):
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
        command = curl.command(Redactor().obj(call))  # as the owner's and a share's (no secret here)
        endpoint = call["http"]["url"]
        assert "session_id=" in endpoint and f"curl -sS {shlex.quote(endpoint)} \\\n" in command
        assert "Content-Type: application/json" in command and "-X " not in command
        again = asyncio.Event()
        tap.subscribe(
            lambda e: (
                again.set()
                if e.dir == "recv" and e.seq > recorded["seq"] and (e.message or {}).get("id") == call["message"]["id"]
                else None
            )
        )
        assert await _run(command) == "Accepted"
        await asyncio.wait_for(again.wait(), 20)
        repeated = next(
            r
            for r in rows
            if r["dir"] == "recv"
            and r["seq"] > recorded["seq"]
            and (r["message"] or {}).get("id") == call["message"]["id"]
        )
        assert repeated["message"]["result"] == recorded["message"]["result"]
        assert repeated["message"]["result"]["content"][0]["text"] == TEXT
    finally:
        await client.close()


# --- pasted into a shell: nothing but curl runs (issue 30) ---------------------------------------

# What an attacker puts where a value goes: each tries to end a line or a quote and run `touch PWNED`.
HOSTILE = {
    "newline": "a\ntouch PWNED #",
    "carriage return": "a\rtouch PWNED #",
    "crlf": "a\r\ntouch PWNED\r\n#",
    "single quote": "'; touch PWNED; echo '",
    "double quote": '"; touch PWNED; echo "',
    "command substitution": "$(touch PWNED)",
    "backticks": "`touch PWNED`",
    "semicolon": "; touch PWNED",
    "history": "!! it's !touch PWNED",
    "line separator": "a\u2028touch PWNED\u2029#",
    "next line": "a\x85touch PWNED",
    "interrupt": "a\x03 touch PWNED #",
    "terminal controls": "a\x1b[201~\x15\x04\t\x1a\x7f\x03 touch PWNED #'",
    "quote then newline": "'\ntouch PWNED\n'",
    "backslash newline": "a\\\ntouch PWNED \\",
}
# Values no HTTP header can carry (CR, LF, NUL): left out of the command, like a name that is no token.
UNSENDABLE = {key for key, value in HOSTILE.items() if "\r" in value or "\n" in value}
STUB = '#!/bin/bash\nprintf \'%s\\0\' "$@" > "$(mktemp "$CURL_CALLS/call.XXXXXX")"\n'
URL = "http://127.0.0.1:9/mcp"


def _pasted(command: str, tmp_path: Path, how: str) -> list[list[str]]:
    """Paste `command` into bash in an empty folder, with `curl` a stub that records its argv:
    `stdin` (a script), `interactive` (history expansion on) or `terminal` (bash -i on a pty,
    readline, no bracketed paste: the line discipline acts on ^C and friends as they come).
    The argvs of every curl run, after checking that nothing else ran (the folder is still empty)."""
    stub, calls, cwd = tmp_path / "bin", tmp_path / "calls", tmp_path / "cwd"
    for folder in (stub, calls, cwd):
        folder.mkdir(parents=True)
    (stub / "curl").write_text(STUB)
    (stub / "curl").chmod(0o755)
    env = {
        "PATH": f"{stub}:{os.environ['PATH']}",
        "CURL_CALLS": str(calls),
        "HOME": str(tmp_path),
        "HISTFILE": "/dev/null",
        "LC_ALL": "C.utf8",
        "TERM": "dumb",
        "PS1": "READY> ",
    }
    bash = ["bash", "--noprofile", "--norc", "-s" if how == "stdin" else "-i"]
    if how == "terminal":
        _typed_in_terminal(command, bash, cwd, env)
    else:
        ran = subprocess.run(bash, input=command.encode(), cwd=cwd, env=env, capture_output=True, timeout=10)
        if how == "stdin":  # an interactive shell writes its prompts to stderr
            assert ran.returncode == 0 and ran.stderr == b"", ran.stderr
    assert list(cwd.iterdir()) == [], f"something besides curl ran: {command!r}"
    return [call.read_bytes().decode().split("\0")[:-1] for call in calls.iterdir()]


def _typed_in_terminal(command: str, bash: list[str], cwd: Path, env: dict[str, str]) -> bytes:
    """bash on a pseudo-terminal of its own (its controlling one, so ^C is a SIGINT): once its
    first prompt shows (readline has set the terminal up), the command and `exit` are written as
    one paste; what the terminal showed, up to the shell's end (or 10 s: a quote left open)."""
    master, slave = os.openpty()
    shell = subprocess.Popen(["setsid", "-c", *bash], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    shown, deadline, pasted = b"", time.monotonic() + 10, False
    try:
        while (left := deadline - time.monotonic()) > 0 and select.select([master], [], [], left)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the shell, the last holder of the terminal, ended
                break
            shown += chunk
            if not pasted and b"READY> " in shown:
                os.write(master, command.encode() + b"\nexit\n")
                pasted = True
    finally:
        shell.kill()
        shell.wait()
        os.close(master)
    assert pasted, shown
    return shown


def _request(
    url: str = URL,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    body: str = '{"jsonrpc":"2.0","id":1,"method":"ping"}',
) -> dict[str, Any]:
    """A POSTed frame's row as the transcript records it."""
    return {"seq": 5, "dir": "send", "raw": body, "http": {"method": method, "url": url, "headers": headers or {}}}


def _argv(
    url: str = URL,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    body: str = '{"jsonrpc":"2.0","id":1,"method":"ping"}',
) -> list[str]:
    """What curl must receive for such a request."""
    return (
        ["-sS"]
        + (["-X", method] if method != "POST" else [])
        + [url]
        + [arg for name, value in (headers or {}).items() for arg in ("-H", f"{name}: {value}")]
        + ["--data-raw", body]
    )


@pytest.mark.parametrize("how", ["stdin", "interactive"])
@pytest.mark.parametrize("key", HOSTILE)
def test_a_pasted_command_runs_curl_and_nothing_else(key: str, how: str, tmp_path: Path) -> None:
    """Each hostile text as a header name (masked, the way a secret's name reaches the `# masked`
    note), a header value, the URL, the body, the method and a note: bash runs the stub once,
    with exactly the request's arguments, and nothing else. A header that could never be sent
    (a name that is no token, a value with CR or LF) is left out, and a note says so."""
    hostile = HOSTILE[key]
    safe = {"Content-Type": "application/json", "X-Api-Key": MASK}
    rows = {
        "header name": (_request(headers={**safe, f"X-Api-Key{hostile}": MASK}), _argv(headers=safe)),
        "header value": (
            _request(headers={**safe, "X-Trace": hostile}),
            _argv(headers=safe if key in UNSENDABLE else {**safe, "X-Trace": hostile}),
        ),
        "url": (_request(url=URL + "?q=" + hostile), _argv(url=URL + "?q=" + hostile)),
        "body": (_request(body='{"text": "' + hostile + '"}'), _argv(body='{"text": "' + hostile + '"}')),
        "method": (_request(method="DELETE" + hostile), _argv(method="DELETE" + hostile.upper())),
    }
    for where, (row, argv) in rows.items():
        command = curl.command(row, notes=[f"this request went to {URL}{hostile}"])
        assert _pasted(command, tmp_path / where, how) == [argv], where
    assert curl.command(rows["header name"][0]).startswith("# left out: ")


@pytest.mark.parametrize("key", HOSTILE)
def test_pasted_in_a_terminal_a_command_runs_curl_and_nothing_else(key: str, tmp_path: Path) -> None:
    """In a terminal that does not bracket pastes, a control character is a key: a ^C in a quoted
    value dropped the line typed so far and ran the rest. One request with the hostile text in
    every place at once (the ones no header can carry left out), pasted into bash's readline."""
    hostile = HOSTILE[key]
    row = _request(
        url=URL + "?q=" + hostile,
        method="DELETE" + hostile,
        body='{"text": "' + hostile + '"}',
        headers={"X-Api-Key": MASK, "X-Trace": hostile, f"X-Api-Key{hostile}": MASK},
    )
    argv = _argv(
        url=URL + "?q=" + hostile,
        method="DELETE" + hostile.upper(),
        body='{"text": "' + hostile + '"}',
        headers={"X-Api-Key": MASK, **({} if key in UNSENDABLE else {"X-Trace": hostile})},
    )
    assert _pasted(curl.command(row, notes=[f"this request went to {URL}{hostile}"]), tmp_path, "terminal") == [argv]


@pytest.mark.parametrize("where", ["url", "method", "body"])
def test_a_nul_no_shell_word_can_carry_is_refused(where: str) -> None:
    """A NUL ends a C string: the argument curl would get is not the one recorded. (A header
    holding one is left out, as one no HTTP request can carry.)"""
    row = _request(**{where: "a\0b"})
    with pytest.raises(curl.NotARequest, match="NUL"):
        curl.command(row)
    assert "a\0b" not in curl.command(_request(headers={"X-A": "a\0b", "X-B\0": "c"}))


@pytest.mark.django_db
def test_the_owner_and_a_share_viewer_get_commands_that_run_only_curl(client, tmp_path: Path) -> None:
    """The curl views, on rows recorded before header names were checked (a server imported with
    a header named "X-Api-Key\\ntouch PWNED #", still in the database): the owner's masked command,
    his command with the secrets filled in (the server's stored headers, hostile name included),
    the one whose note names a hostile URL the request went to, and a share viewer's."""
    hostile = "X-Api-Key\ntouch PWNED #"
    owner = get_user_model().objects.create_user("owner", password="pw")
    server = Server.objects.create(
        name="old", transport="http", url=URL, owner=owner, headers={hostile: SECRET, "X-Env": "dev"}
    )
    session = Session.objects.create(
        server=server,
        server_name="old",
        owner=owner,
        status="ended",
        transport="streamable-http",
        secret_values=[SECRET],
    )
    sent = {"Content-Type": "application/json", hostile: MASK, "X-Env": "dev"}
    elsewhere = URL + "?next=\n$(touch PWNED)\ntouch PWNED #"
    for seq, url in ((1, URL), (2, elsewhere)):
        Event.objects.create(
            session=session, seq=seq, t=0.0, dir="send", data={**_request(url=url, headers=sent), "seq": seq}
        )
    link = ShareLink.objects.create(session=session, created_by=owner)
    client.force_login(owner)
    commands = {
        "owner": client.get(f"/sessions/{session.pk}/curl/1/").content.decode(),
        "owner, secrets": client.get(f"/sessions/{session.pk}/curl/1/?secrets=1").content.decode(),
        "owner, elsewhere": client.get(f"/sessions/{session.pk}/curl/2/?secrets=1").content.decode(),
        "share": Client().get(f"/share/{link.token}/curl/1/").content.decode(),
    }
    for who, command in commands.items():
        argv = _argv(
            url=elsewhere if who == "owner, elsewhere" else URL,
            headers={"Content-Type": "application/json", "X-Env": "dev"},
        )
        assert _pasted(command, tmp_path / who, "stdin") == [argv], who
        assert command.startswith("# ") and "left out: 'X-Api-Key\\ntouch PWNED #' is not" in command, who
    assert (
        "secrets not filled in: this request went to http://127.0.0.1:9/mcp?next=\\n$(touch PWNED)\\n"
        in commands["owner, elsewhere"]
    )


@pytest.mark.django_db
def test_a_request_of_an_ended_session_says_its_session_id_is_gone(client) -> None:
    """After a disconnect, the copied command got 404 "Session not found" from the server with
    no hint why (issue 31)."""
    owner = get_user_model().objects.create_user("owner", password="pw")
    server = Server.objects.create(name="s", transport="http", url=URL, owner=owner)
    session = Session.objects.create(
        server=server,
        server_name="s",
        owner=owner,
        status="connected",
        worker_channel="worker.1",
        transport="streamable-http",
    )
    with_id = _request(headers={"Content-Type": "application/json", "Mcp-Session-Id": "abc"})
    Event.objects.create(session=session, seq=1, t=0.0, dir="send", data={**with_id, "seq": 1})
    Event.objects.create(session=session, seq=2, t=0.0, dir="send", data={**_request(), "seq": 2})
    client.force_login(owner)
    assert "Session not found" not in client.get(f"/sessions/{session.pk}/curl/1/").content.decode()  # live
    Session.objects.filter(pk=session.pk).update(status="ended", worker_channel="")
    command = client.get(f"/sessions/{session.pk}/curl/1/").content.decode()
    assert (
        command.startswith("# this request belongs to an MCP session that has ended") and "Session not found" in command
    )
    assert "Session not found" not in client.get(f"/sessions/{session.pk}/curl/2/").content.decode()  # no session id
