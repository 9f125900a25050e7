"""The HTTP capture: the official SDK client speaks Streamable HTTP to a real SDK server through
the playground's capture URL (daphne, streaming); the exchange works as it does directly and
is recorded into a captured session."""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, types
from mcp.client.sse import sse_client

from playground.core.management.commands.mcp_conformance_table import SUITE
from tests.conftest import NODE, ROOT
from tests.daphne_process import app_env, log_in, set_up, start_daphne, stop_daphne
from tests.http_peers import free_port

from .helpers import HOST, _answer


@pytest.fixture(scope="module")
def playground(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A daphne of its own (a file SQLite database), logged in: its port, database, client."""
    folder = tmp_path_factory.mktemp("http-capture")
    env = app_env(PLAYGROUND_SQLITE_PATH=str(folder / "db.sqlite3"))
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    port = free_port()
    link = set_up(env, port)
    proc = start_daphne(env, port, folder / "daphne.log")
    browser = log_in(link)
    try:
        yield {"port": port, "db": folder / "db.sqlite3", "browser": browser}
    finally:
        browser.close()
        stop_daphne(proc)


def register_http(
    browser: httpx.Client, port: int, url: str, transport: str = "http", name: str = ""
) -> tuple[int, str]:
    base = f"http://127.0.0.1:{port}"
    browser.get(f"{base}/servers/add/")
    csrf = browser.cookies["csrftoken"]
    name = name or f"{transport} {url}"
    fields = {"csrfmiddlewaretoken": csrf, "name": name, "transport": transport, "url": url}
    fields |= {
        "command": "",
        "args": "",
        "env": "",
        "cwd": "",
        "headers": "X-Configured: not-for-hosts",
        "era": "legacy",
    }
    added = browser.post(f"{base}/servers/add/", data=fields)
    assert added.status_code == 302, added.text[:3000]
    server_id = int(re.search(r"/servers/(\d+)/", added.headers["location"]).group(1))
    page = browser.post(f"{base}/capture/tokens/create/", data={"csrfmiddlewaretoken": csrf, "name": "http"})
    return server_id, html.unescape(re.search(r'<pre class="mono" id="new-token">(.*?)</pre>', page.text).group(1))


def saved(db_path: Any, transport: str, needle: str) -> tuple[int, str, list[dict[str, Any]]]:
    """The captured session of `transport` (id, report, rows) whose recording holds a frame with
    `needle`, once it does (it is made off the forwarding path: after the host saw the answer)."""
    db = sqlite3.connect(db_path, timeout=20)
    try:
        deadline = time.monotonic() + 20
        while True:
            found = db.execute(
                "SELECT id, report FROM transcripts_session WHERE transport = ?", (transport,)
            ).fetchall()
            for session_id, report in found:
                rows = [
                    json.loads(d)
                    for (d,) in db.execute(
                        "SELECT data FROM transcripts_event WHERE session_id = ? ORDER BY seq", (session_id,)
                    )
                ]
                if any(needle in (r.get("raw") or "") for r in rows):
                    return session_id, report, rows
            assert time.monotonic() < deadline, f"the recording never held {needle!r}"
            time.sleep(0.05)
    finally:
        db.close()


async def use(url: str, sse: bool = False) -> list[str]:
    """What a host does: list, call, answer the server's elicitation."""
    with anyio.fail_after(60):
        server: Any = sse_client(url) if sse else url
        async with Client(server, mode="legacy", client_info=HOST, elicitation_callback=_answer) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            echoed = (await client.call_tool("echo", {"text": "over http"})).content[0]
            asked = (await client.call_tool("ask_name", {})).content[0]
            assert isinstance(echoed, types.TextContent) and isinstance(asked, types.TextContent)
            return [*tools, echoed.text, asked.text]


def test_the_sdk_client_through_the_http_capture(playground, sdk_http):
    port, browser = playground["port"], playground["browser"]
    server_id, token = register_http(browser, port, sdk_http)
    capture_url = f"http://127.0.0.1:{port}/capture/v1/http/{server_id}/{token}/"
    # The server's page gives hosts the capture's URL.
    assert capture_url in html.unescape(browser.get(f"http://127.0.0.1:{port}/servers/{server_id}/").text)
    direct = anyio.run(use, sdk_http)
    through = anyio.run(use, capture_url)
    assert through == direct and "over http" in through and "Hello, Ada!" in through
    _session_id, info, rows = saved(playground["db"], "http", "Hello, Ada!")
    assert json.loads(info)["host"]["clientInfo"] == {"name": "test-host", "version": "9.8.7"}
    methods = [r["message"].get("method") for r in rows if r["dir"] == "send" and r.get("message")]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert any(r["dir"] == "recv" and "over http" in r["raw"] for r in rows)
    assert any(r["dir"] == "recv" and (r.get("message") or {}).get("method") == "elicitation/create" for r in rows)
    sent = next(r for r in rows if r["dir"] == "send")
    assert not any(k.lower() == "x-configured" for k in sent["http"]["headers"])  # not added
    # Its HAR: one entry an exchange, the host's requests as sent and the answers.
    session_id = _session_id
    har = json.loads(browser.get(f"http://127.0.0.1:{port}/sessions/{session_id}/export.har").text)
    entries = har["log"]["entries"]
    assert entries[0]["request"]["method"] == "POST" and '"initialize"' in entries[0]["request"]["postData"]["text"]
    assert {e["response"]["status"] for e in entries} >= {200, 202}
    # The host's Authorization goes to the server, and is recorded masked.
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    initialize["params"] |= {"capabilities": {}, "clientInfo": {"name": "curl-like", "version": "1"}}
    headers = {"Authorization": "Bearer host-secret-9876", "Accept": "application/json, text/event-stream"}
    assert httpx.post(capture_url, json=initialize, headers=headers).status_code == 200
    _id, _info, rows = saved(playground["db"], "http", "curl-like")
    assert rows[0]["http"]["headers"]["Authorization"] == "Bearer ••••"
    assert not any("host-secret-9876" in json.dumps(r) for r in rows)
    # A wrong token gets nothing through.
    wrong = httpx.post(f"http://127.0.0.1:{port}/capture/v1/http/{server_id}/mcpcap_{'0' * 43}/", json={})
    assert wrong.status_code == 401


def test_the_sdk_client_through_the_http_capture_of_an_sse_server(playground, sdk_sse):
    """HTTP+SSE: the endpoint event's URL comes back through the capture; one captured session."""
    port, browser = playground["port"], playground["browser"]
    server_id, token = register_http(browser, port, sdk_sse, transport="sse")
    through = anyio.run(use, f"http://127.0.0.1:{port}/capture/v1/http/{server_id}/{token}/", True)
    assert through == anyio.run(use, sdk_sse, True)
    _session_id, _info, rows = saved(playground["db"], "sse", "Hello, Ada!")
    endpoint = next(r for r in rows if (r.get("text") or "").startswith("endpoint: "))
    assert f"/capture/v1/http/{server_id}/{token}/messages/" in endpoint["text"]
    assert [r["message"]["method"] for r in rows if r["dir"] == "send" and "method" in (r.get("message") or {})][
        :3
    ] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
    ]
    assert any(r["dir"] == "recv" and "over http" in r["raw"] for r in rows)


def conformance_server(url: str) -> dict[str, str]:
    """The official conformance suite's server checks against `url`: each scenario's outcome line."""
    env = {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(
        [str(NODE), str(SUITE), "server", "--url", url], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )
    found = dict(re.findall(r"^[✓✗] ([\w./-]+): (\d+ passed, \d+ failed)$", run.stdout, re.M))
    assert found, run.stdout[-3000:] + run.stderr[-3000:]
    return found


def test_the_conformance_suites_server_checks_through_the_http_capture(playground, everything_http):
    """server-everything passes the same checks through the capture as directly; a check the
    capture itself answers for may differ, and only that one: DNS rebinding (a request with a
    foreign Origin is refused by the capture before it reaches the server: here it passes)."""
    port, browser = playground["port"], playground["browser"]
    server_id, token = register_http(browser, port, everything_http, transport="http")
    direct = conformance_server(everything_http)
    through = conformance_server(f"http://127.0.0.1:{port}/capture/v1/http/{server_id}/{token}/")
    differing = {name for name in direct if direct[name] != through.get(name)}
    assert differing <= {"dns-rebinding-protection"}, {n: (direct[n], through.get(n)) for n in differing}
    passed = {name: int(v.split()[0]) for name, v in direct.items()}, {n: int(v.split()[0]) for n, v in through.items()}
    assert sum(passed[1].values()) >= sum(passed[0].values()) >= 45


def inspector_cli(url: str) -> str:
    """The official Inspector's CLI mode as the host: one tools/call over Streamable HTTP."""
    env = {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [str(ROOT / "tools" / "npm" / "node_modules" / ".bin" / "mcp-inspector"), "--cli", url]
    command += [
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "text=hello inspector",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_the_official_inspector_cli_through_the_http_capture(playground, sdk_http):
    port, browser = playground["port"], playground["browser"]
    server_id, token = register_http(browser, port, sdk_http, transport="auto")
    through = inspector_cli(f"http://127.0.0.1:{port}/capture/v1/http/{server_id}/{token}/")
    assert json.loads(through) == json.loads(inspector_cli(sdk_http))
    _id, info, rows = saved(playground["db"], "auto", "hello inspector")
    host = json.loads(info)["host"]["clientInfo"]
    assert host["name"] and host["version"]  # as the Inspector introduced itself
    assert [r["message"]["method"] for r in rows if r["dir"] == "send" and "method" in (r.get("message") or {})][
        -1
    ] == "tools/call"


def _sse_events(response: httpx.Response, until: Any) -> list[tuple[str, dict[str, Any]]]:
    """(id, message) of each SSE event of a streamed response, until `until(message)` is true."""
    events: list[tuple[str, dict[str, Any]]] = []
    event_id, data = "", []
    for line in response.iter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            message = json.loads("\n".join(data))
            events.append((event_id, message))
            event_id, data = "", []
            if until(message):
                break
    return events


def test_a_host_resuming_with_last_event_id_gets_the_events_it_missed_through_the_capture(playground, everything_http):
    """server-everything keeps its events (an event store): a host that lost a call's stream
    resumes with Last-Event-ID on a GET, through the capture, and the server replays what came
    after that event; the capture passes the header and records the replayed frames."""
    port, browser = playground["port"], playground["browser"]
    server_id, token = register_http(browser, port, everything_http, transport="http", name="resumable everything")
    url = f"http://127.0.0.1:{port}/capture/v1/http/{server_id}/{token}/"
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=30) as host:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "resumer", "version": "1"}}
        answer = host.post(
            url, headers=accept, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
        )
        assert answer.status_code == 200, answer.text
        session = {**accept, "Mcp-Session-Id": answer.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-06-18"}
        host.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "trigger-long-running-operation", "arguments": {"duration": 1, "steps": 3}}
        call_frame = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {**call, "_meta": {"progressToken": 7}},
        }
        with host.stream("POST", url, headers=session, json=call_frame) as stream:
            sent = _sse_events(stream, lambda m: m.get("id") == 2)
        assert len(sent) == 4 and all(event_id for event_id, _ in sent)  # three progress events, the result
        # The host "lost" the stream after the first progress event: it resumes from there.
        resume = {**session, "Accept": "text/event-stream", "Last-Event-ID": sent[0][0]}
        with host.stream("GET", url, headers=resume, timeout=10) as stream:
            assert stream.status_code == 200
            replayed = _sse_events(stream, lambda m: m.get("id") == 2)
    assert replayed == sent[1:]
    _id, _report, rows = saved(playground["db"], "http", '"resumer"')
    # The replayed result is recorded a second time, on the GET, with its event id.
    result_id = sent[-1][0]
    results = [r for r in rows if r["dir"] == "recv" and (r.get("message") or {}).get("id") == 2]
    deadline = time.monotonic() + 20
    while len(results) < 2 and time.monotonic() < deadline:  # recorded off the forwarding path
        _id, _report, rows = saved(playground["db"], "http", '"resumer"')
        results = [r for r in rows if r["dir"] == "recv" and (r.get("message") or {}).get("id") == 2]
        time.sleep(0.05)
    assert [r.get("sse_id") for r in results] == [result_id, result_id]
    gets = [r for r in rows if (r.get("http") or {}).get("method") == "GET"]
    assert gets, "the GET that resumed is in the recording"


def test_a_hosts_request_is_recorded_before_the_server_answers(playground):
    """The host's POST is recorded as it goes on, not when the answer starts: a server that takes
    its time (or sends requests on another stream meanwhile) finds the request already there."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    port, browser = playground["port"], playground["browser"]
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    server_id, token = register_http(browser, port, url, transport="http", name="never answers")
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "patient-host", "version": "1"}}
    frame = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
    answers: list[int] = []
    capture_url = f"http://127.0.0.1:{port}/capture/v1/http/{server_id}/{token}/"
    accept = {"Accept": "application/json, text/event-stream"}
    host = threading.Thread(
        target=lambda: answers.append(httpx.post(capture_url, json=frame, headers=accept, timeout=30).status_code),
        daemon=True,
    )
    host.start()
    try:
        _id, _report, rows = saved(playground["db"], "http", '"patient-host"')  # while the server says nothing
        assert [r["dir"] for r in rows if r["dir"] in ("send", "recv")] == ["send"]
    finally:
        for conn in accepted:
            conn.close()
        listener.close()
        host.join(30)
    assert answers == [502]  # the server hung up without a word: the capture says it to the host


def test_a_connection_named_by_the_server_finds_its_capture_before_its_recording_is_saved(db):
    """The host's next request names the connection (Mcp-Session-Id) as soon as the server's answer
    did; the first request's recording reaches the database off the forwarding path, so the key
    must find its capture without it (under load a second captured session was opened: the
    Last-Event-ID test above found the tools/call in neither)."""
    from django.contrib.auth import get_user_model

    from playground.capture import http_proxy
    from playground.capture.models import Capture, CaptureToken
    from playground.registry.models import Server

    user = get_user_model().objects.create_user("hana", password="pw")
    server = Server.objects.create(owner=user, name="remote", transport="http", url="http://127.0.0.1:9/mcp")
    token, _plain = CaptureToken.issue(user, "laptop")
    opened = http_proxy._capture_for(token, server, "", opens=True)  # initialize: a new capture
    http_proxy._named(token, "mcp:abc", opened)  # the server's answer named the connection
    assert not Capture.objects.exists()  # (its recording not saved yet)
    assert http_proxy._capture_for(token, server, "mcp:abc", opens=False) == opened
    other, _ = CaptureToken.issue(user, "desktop")
    assert http_proxy._capture_for(other, server, "mcp:abc", opens=False) != opened  # another token's
