"""The headless CLI contract: steps in order, JSONL lines, exit codes — against real servers."""

from __future__ import annotations

import json
import sys

import pytest

from playground.mcp import cli
from tests.conftest import PEERS
from tests.mcp_cli import lines, mcp
from tests.sessions.helpers import BROKEN

PEER = [sys.executable, str(PEERS / "sdk_server.py"), "stdio"]


def frames(events: list[dict], dir: str) -> list[dict]:
    return [e["message"] for e in events if e["dir"] == dir and isinstance(e["message"], dict)]


def test_steps_run_in_order_and_jsonl_lines_carry_the_contract(tmp_path):
    out = tmp_path / "t.jsonl"
    proc = mcp(
        "--jsonl",
        "--transcript",
        str(out),
        "--ping",
        "--list",
        "tools",
        "--call",
        'add={"a":2,"b":40}',
        "--read",
        "peer://greeting",
        "--prompt",
        'review={"code":"x = 1"}',
        "--",
        *PEER,
    )
    assert proc.returncode == 0, proc.stderr
    events = lines(proc)
    assert [json.loads(line) for line in out.read_text().splitlines()] == events
    for e in events:
        assert {"seq", "t", "dir", "message"} <= e.keys()
        assert ("raw" in e) == (e["dir"] != "note")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    sent = [m.get("method") for m in frames(events, "send")]
    assert sent == [
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
        "resources/read",
        "prompts/get",
    ]
    results = {m["id"]: m for m in frames(events, "recv") if "id" in m}
    call = next(m for m in frames(events, "send") if m.get("method") == "tools/call")
    assert results[call["id"]]["result"]["structuredContent"] == {"result": 42}
    # Raw text is exactly what went over the wire and parses back to the message.
    for e in events:
        if e["dir"] in ("send", "recv") and e["message"] is not None:
            assert json.loads(e["raw"]) == e["message"]


def test_protocol_version_offers_an_older_version():
    proc = mcp("--jsonl", "--protocol-version", "2025-06-18", "--ping", "--", *PEER)
    assert proc.returncode == 0, proc.stderr
    events = lines(proc)
    initialize = next(m for m in frames(events, "send") if m.get("method") == "initialize")
    answer = next(m for m in frames(events, "recv") if m.get("id") == initialize["id"])
    assert initialize["params"]["protocolVersion"] == "2025-06-18" == answer["result"]["protocolVersion"]


def test_readable_log_without_jsonl():
    proc = mcp("--call", 'echo={"text":"bonjour"}', "--", *PEER)
    assert proc.returncode == 0, proc.stderr
    assert "→ tools/call" in proc.stdout and "bonjour" in proc.stdout and "← result" in proc.stdout


def test_exit_1_for_is_error_and_jsonrpc_error():
    assert mcp("--call", "fail", "--", *PEER).returncode == 1
    proc = mcp("--raw", "no/such/method={}", "--", *PEER)
    assert proc.returncode == 1 and "-32601" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--list", "tools"],
        ["--list", "bogus", "--", "true"],
        ["--call", "x={not json", "--", "true"],
        ["--url", "http://127.0.0.1:9", "--", "x"],
    ],
)
def test_exit_2_for_usage(args):
    assert mcp(*args).returncode == 2


def test_exit_3_when_the_server_cannot_be_reached():
    assert mcp("--ping", "--", "/nonexistent/server").returncode == 3
    assert mcp("--ping", "--", sys.executable, "-c", "import sys; sys.exit(7)").returncode == 3


def test_exit_4_on_timeout_and_the_request_is_cancelled():
    # The timeout covers initialize too: leave room for the peer to start (SDK import ~1.5 s).
    proc = mcp("--jsonl", "--timeout", "6", "--call", "hang", "--", *PEER)
    assert proc.returncode == 4, proc.stderr
    events = lines(proc)
    call = next(m for m in frames(events, "send") if m.get("method") == "tools/call")
    cancelled = [m for m in frames(events, "send") if m.get("method") == "notifications/cancelled"]
    assert cancelled and cancelled[0]["params"]["requestId"] == call["id"]
    assert any(e["dir"] == "note" and e.get("kind") == "timeout" for e in events)


def test_env_and_cwd_reach_a_stdio_server(tmp_path):
    script = "import os, sys; print(os.environ['PEER_X'], os.environ['PATH'] != '', os.getcwd(), file=sys.stderr)"
    proc = mcp("--jsonl", "--env", "PEER_X=salut", "--cwd", str(tmp_path), "--ping", "--", sys.executable, "-c", script)
    assert proc.returncode == 3  # it exits without answering
    stderr = [e["text"] for e in lines(proc) if e["dir"] == "stderr"]
    assert f"salut True {tmp_path}" in stderr


def test_server_everything_auto_era_falls_back_to_legacy(everything_cmd):
    proc = mcp("--jsonl", "--era", "auto", "--call", 'echo={"message":"hi"}', "--", *everything_cmd)
    assert proc.returncode == 0, proc.stderr
    events = lines(proc)
    era = [e for e in events if e["dir"] == "note" and e.get("kind") == "era"]
    assert era and era[0]["data"]["era"] == "legacy" and "-32601" in era[0]["data"]["evidence"]
    sent = [m.get("method") for m in frames(events, "send")]
    assert sent[:3] == ["server/discover", "initialize", "notifications/initialized"]
    echo = [m for m in frames(events, "recv") if "result" in m and "content" in m["result"]]
    assert echo[0]["result"]["content"][0]["text"] == "Echo: hi"


def test_sdk_peer_auto_era_is_modern():
    proc = mcp("--jsonl", "--era", "auto", "--list", "tools", "--", *PEER)
    assert proc.returncode == 0, proc.stderr
    events = lines(proc)
    era = next(e for e in events if e["dir"] == "note" and e.get("kind") == "era")
    assert era["data"]["era"] == "modern"
    listed = next(m for m in frames(events, "send") if m.get("method") == "tools/list")
    assert listed["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


@pytest.mark.parametrize("era, expected", [("legacy", "legacy"), ("auto", "modern"), ("modern", "modern")])
def test_streamable_http_in_each_era_with_a_masked_secret_header(sdk_http, era, expected):
    secret = "Bearer tok-0123456789-secret"
    proc = mcp(
        "--jsonl",
        "--url",
        sdk_http,
        "--era",
        era,
        "--header",
        f"Authorization: {secret}",
        "--call",
        'add={"a":1,"b":2}',
    )
    assert proc.returncode == 0, proc.stderr
    events = lines(proc)
    assert next(e for e in events if e.get("kind") == "era")["data"]["era"] == expected
    result = next(m for m in frames(events, "recv") if "structuredContent" in (m.get("result") or {}))
    assert result["result"]["structuredContent"] == {"result": 3}
    assert "tok-0123456789-secret" not in proc.stdout
    assert any(e.get("http") for e in events)


def test_auto_transport_falls_back_to_sse(sdk_sse):
    proc = mcp("--jsonl", "--url", sdk_sse, "--transport", "auto", "--list", "tools")
    assert proc.returncode == 0, proc.stderr
    events = lines(proc)
    fallback = [e for e in events if e.get("kind") == "fallback"]
    assert fallback and "HTTP+SSE" in fallback[0]["text"]
    listed = next(m for m in frames(events, "recv") if "tools" in (m.get("result") or {}))
    assert "add" in [t["name"] for t in listed["result"]["tools"]]


def test_unreachable_url_exits_3():
    from tests.http_peers import free_port

    assert mcp("--url", f"http://127.0.0.1:{free_port()}/mcp", "--ping").returncode == 3


def test_an_oauth_token_the_server_echoes_is_masked_in_the_output_and_the_transcript_file(tmp_path):
    """The CLI authorizes at the official SDK's authorization server, and the server answers
    with the Authorization header it got: neither the JSONL lines nor the --transcript file
    (an export) nor the readable log carry the token (a JWT: "eyJ…")."""
    from tests.auth_peer import sdk_auth_server

    out = tmp_path / "t.jsonl"
    with sdk_auth_server() as url:
        jsonl = mcp("--jsonl", "--transcript", str(out), "--url", url, "--call", "echo_authorization={}")
        readable = mcp("--url", url, "--call", "echo_authorization={}")
    assert jsonl.returncode == 0 and readable.returncode == 0, jsonl.stderr + readable.stderr
    for name, text in [("stdout", jsonl.stdout), ("transcript", out.read_text()), ("readable", readable.stdout)]:
        assert "you sent: Bearer \u2022\u2022\u2022\u2022" in text, name
        assert "Bearer eyJ" not in text and "eyJhbGciOi" not in text, name
    assert any(
        e.get("kind") == "auth" and e["data"]["step"] == "token" and e["data"]["status"] == "ok" for e in lines(jsonl)
    )


@pytest.mark.parametrize("version", list(BROKEN))
def test_jsonl_lines_carry_schema_problems_against_the_version_in_use(tmp_path, version):
    """Every frame is checked against the negotiated version's schema: the one broken frame of
    tests/peers/schema_breaker.py carries schema_problems (and in the readable log too)."""
    _definition, pointer, message = BROKEN[version]
    era = "modern" if version >= "2026" else "legacy"
    breaker = [sys.executable, str(PEERS / "schema_breaker.py"), version]
    out = tmp_path / "t.jsonl"
    proc = mcp("--jsonl", "--transcript", str(out), "--era", era, "--list", "tools", "--call", "go", "--", *breaker)
    assert proc.returncode == 0, proc.stderr
    events = lines(proc)
    flagged = [e for e in events if "schema_problems" in e]
    assert [(e["dir"], [p["pointer"] for p in e["schema_problems"]]) for e in flagged] == [("recv", [pointer])]
    assert set(flagged[0]["schema_problems"][0]) == {"pointer", "message", "schema_path"}
    assert flagged[0]["schema_problems"][0]["message"] == message
    assert flagged[0]["schema_lint"]["version"] == version
    assert [json.loads(line) for line in out.read_text().splitlines()] == events
    readable = mcp("--era", era, "--list", "tools", "--call", "go", "--", *breaker)
    assert f"schema problem at {pointer}: {flagged[0]['schema_problems'][0]['message']}" in readable.stdout


@pytest.mark.parametrize("header", ["X-Api-Key\ntouch PWNED #: k", "Bad Name: k", "X-A: a\rb"])
def test_a_header_no_http_request_can_carry_is_a_usage_error(header: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Refused with the header named, before anything is sent (the check the server form uses)."""
    assert cli.main(["--url", "http://127.0.0.1:9/mcp", "--ping", "--header", header]) == 2
    error = capsys.readouterr().err
    assert f"mcp: error: --header {header!r}: " in error
    assert "not a valid HTTP header name" in error or "holds a line break" in error
