"""The HTTP transports, message by message, against real peers (the SDK's MCPServer over
Streamable HTTP in both eras and over HTTP+SSE, server-everything over Streamable HTTP) and a
scripted server for the faults a real peer will not produce on demand."""

from __future__ import annotations

import asyncio
import base64
import json

import httpx
import pytest

from playground.mcp.framing import SseParser
from playground.mcp.transports import http_base
from playground.mcp.transports.base import HttpStatusError, SessionExpired, TransportError
from playground.mcp.transports.http_common import (
    encode_header_value,
    header_problem,
    header_problems,
    is_field_name,
    modern_headers,
    param_headers,
    shown_url,
    validate_x_mcp_header,
)
from playground.mcp.transports.sse import SseTransport
from playground.mcp.transports.streamable_http import StreamableHttpTransport
from tests.http_peers import INITIALIZED, FaultServer, Recorder, Request, free_port, head, initialize, modern_meta

SECRET = "Bearer s3cr3t-token-value"


# The peers (sdk_http, sdk_sse, everything_http) are fixtures in tests/conftest.py.


def our_tasks() -> list[asyncio.Task]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith(("streamable-http:", "sse:"))]


async def handshake(rec: Recorder, t: StreamableHttpTransport) -> dict:
    await t.start()
    await t.send(initialize(1))
    init = await rec.answer(1)
    t.protocol_version = init["result"]["protocolVersion"]
    await t.send(INITIALIZED)
    return init


# --- pure helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, encoded",
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("trailing\n", "=?base64?dHJhaWxpbmcK?="),  # a `$` anchor let the final newline through
    ],
)
def test_header_value_encoding_matches_the_spec_table(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded


def test_param_headers_follow_paths_types_and_omissions() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "opt": {"type": "string", "x-mcp-header": "Opt"},
            "where": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
            "query": {"type": "string"},
        },
    }
    args = {"region": "us-west1", "count": 42, "dry": False, "opt": None, "where": {"zone": "Zürich"}, "query": "x"}
    assert param_headers(schema, args) == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Count": "42",
        "Mcp-Param-Dry": "false",
        "Mcp-Param-Zone": "=?base64?" + base64.b64encode("Zürich".encode()).decode() + "?=",
    }
    assert param_headers(schema, {"query": "only"}) == {}
    assert param_headers(schema, {"where": "not an object"}) == {}


@pytest.mark.parametrize(
    "schema, fragment",
    [
        ({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}, "only allowed on"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}},
            "not an HTTP field-name token",
        ),
        ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}, "token"),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "X"},
                    "b": {"type": "string", "x-mcp-header": "x"},
                },
            },
            "duplicates",
        ),
        (
            {
                "type": "object",
                "properties": {"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "L"}}},
            },
            "not reachable",
        ),
        (
            {"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]},
            "not reachable",
        ),
        ({"type": "object", "x-mcp-header": "Root"}, "not reachable"),
        ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": 7}}}, "must be a string"),
        # A `$` anchor matched before a final newline: the name reached headers and curl's comment lines.
        (
            {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region\n"}}},
            "not an HTTP field-name",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region\r"}}},
            "not an HTTP field-name",
        ),
    ],
)
def test_invalid_x_mcp_header_is_explained(schema: dict, fragment: str) -> None:
    reason = validate_x_mcp_header(schema)
    assert reason is not None and fragment in reason


@pytest.mark.parametrize(
    "name",
    [
        "X-Api-Key\ntouch PWNED #",
        "Region\n",
        "\nRegion",
        "Bad Name",
        "A:B",
        "",
        "Zürich",
        "A\u2028B",
        "A\x00",
        "A\r",
        "A\x85",
        7,
        None,
    ],
)
def test_a_header_name_is_an_rfc_9110_token_and_nothing_more(name: object) -> None:
    """The one check every entry point uses (form, import, admin, CLI, x-mcp-header, connect)."""
    assert not is_field_name(name)
    problem = header_problem(name, "v") if isinstance(name, str) else None
    assert problem is None or (problem.startswith(repr(name)) and "not a valid HTTP header name" in problem)


def test_a_token_passes_and_a_value_with_cr_lf_or_nul_is_refused() -> None:
    assert all(is_field_name(n) for n in ("X-Api-Key", "!#$%&'*+-.^_`|~09AZaz", "a"))
    assert header_problems({"X-Api-Key": "Bearer a b", "X-Tab": "a\tb", "X-Uni": "Zürich"}) == []
    for value in ("a\nb", "a\rb", "a\x00b", "trailing\n"):
        assert header_problems({"X-A": value}) == [
            "the value of X-A holds a line break or NUL character, which an HTTP header cannot carry"
        ]
    assert param_headers({"properties": {"a": {"type": "string", "x-mcp-header": "A\n"}}}, {"a": "x"}) == {}


def test_valid_x_mcp_header_schemas_pass() -> None:
    assert (
        validate_x_mcp_header(
            {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "nested": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}},
                },
            }
        )
        is None
    )
    assert validate_x_mcp_header({}) is None
    assert validate_x_mcp_header({"properties": {"d": {"type": "string", "default": {"x-mcp-header": "no"}}}}) is None


def test_modern_headers_mirror_the_body() -> None:
    frame = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/read",
        "params": {"uri": "file:///café", "_meta": modern_meta("2026-07-28")},
    }
    assert modern_headers(frame, "ignored") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "resources/read",
        "Mcp-Name": "=?base64?" + base64.b64encode("file:///café".encode()).decode() + "?=",
    }
    assert modern_headers({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, "2026-07-28") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }


def test_sse_parser_lines_ids_retry_comments_and_partial_events() -> None:
    p = SseParser()
    assert p.feed(b": keep-alive\r") == []
    events = p.feed(b'\nid: 7\r\nretry: 250\r\ndata: \r\n\r\nevent: message\ndata: {"a"')
    assert [(e.id, e.retry, e.data, e.has_data) for e in events] == [("7", 250, "", True)]
    assert p.in_event and p.partial() == 'event: message\ndata: {"a"'
    assert p.feed(b":1}\ndata: \xc3") == []  # half of a UTF-8 character
    assert p.feed(b"\xa9\n\n")[0].data == '{"a":1}\n\u00e9'
    assert not p.in_event and p.last_id == "7" and p.retry == 250


def test_sse_parser_flags_invalid_utf8_and_reads_a_long_line_in_many_chunks() -> None:
    p = SseParser()
    bad, good = p.feed(b"data: \xff\xfe bad\n\n" + "data: café\n\n".encode())
    assert bad.invalid_utf8 and bad.data == "\ufffd\ufffd bad"
    assert not good.invalid_utf8 and good.data == "café"
    body = b"data: " + b"a" * 5_000_000 + b"\r\n\r\n"
    events = [e for i in range(0, len(body), 4096) for e in p.feed(body[i : i + 4096])]
    assert len(events) == 1 and events[0].data == "a" * 5_000_000 and not p.in_event


def test_shown_url_masks_credentials() -> None:
    assert shown_url("http://me:pw@h/mcp?api_key=k&x=1") == "http://me:••••@h/mcp?api_key=••••&x=1"


# --- Streamable HTTP, legacy, SDK peer --------------------------------------------------------------


async def test_legacy_handshake_call_and_close_message_by_message(sdk_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, sdk_http, {"Authorization": SECRET, "X-Trace": "t1"}, timeout=10))
    init = await handshake(rec, t)
    session_id = t.session_id
    assert session_id and init["result"]["serverInfo"]["name"] == "sdk-peer"
    await rec.until(lambda: rec.notes("http") and any("GET (standalone)" in n.text for n in rec.notes("http")))
    await t.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 2, "delay": 0.01}, "_meta": {"progressToken": "p"}},
        }
    )
    result = await rec.answer(2)
    assert result["result"]["content"][0]["text"] == "done after 2 steps"
    await t.close()
    await t.close()  # idempotent

    frames = [(e.dir, e.method or e.rpc_id) for e in rec.events if e.dir in ("send", "recv")]
    assert frames == [
        ("send", "initialize"),
        ("recv", 1),
        ("send", "notifications/initialized"),
        ("send", "tools/call"),
        ("recv", "notifications/progress"),
        ("recv", "notifications/progress"),
        ("recv", 2),
    ]
    sends = [e for e in rec.events if e.dir == "send"]
    for e in sends:
        assert e.http["method"] == "POST" and e.http["url"] == sdk_http
        assert e.http["headers"]["Accept"] == "application/json, text/event-stream"
        assert e.http["headers"]["Content-Type"] == "application/json"
        assert e.http["headers"]["Authorization"] == "Bearer ••••" and e.http["headers"]["X-Trace"] == "••••"
    assert "Mcp-Session-Id" not in sends[0].http["headers"] and "MCP-Protocol-Version" not in sends[0].http["headers"]
    assert sends[1].http["headers"]["Mcp-Session-Id"] == sends[2].http["headers"]["Mcp-Session-Id"] == session_id
    assert sends[2].http["headers"]["MCP-Protocol-Version"] == "2025-11-25"
    recvs = [e for e in rec.events if e.dir == "recv"]
    assert all(e.http["status"] == 200 and e.http["content_type"] == "text/event-stream" for e in recvs)
    assert recvs[-1].reply_to == sends[2].seq
    # the 202 of the notification, the GET stream and the DELETE are notes with their HTTP facts
    statuses = [(n.http or {}).get("method") for n in rec.notes("http")]
    accepted = next(n for n in rec.notes("http") if n.http and n.http.get("status") == 202)
    assert accepted.seq < next(n.seq for n in rec.notes("http") if "GET (standalone)" in n.text)
    delete = next(n for n in rec.notes("http") if n.http and n.http["method"] == "DELETE")
    assert delete.http["status"] == 200 and delete.http["request_headers"]["Mcp-Session-Id"] == session_id
    assert t.session_id is None
    assert statuses.count("DELETE") == 1
    assert rec.events[-1].kind == "closed" and not rec.failed
    assert "s3cr3t" not in rec.dump()
    assert our_tasks() == []


async def test_legacy_server_request_on_the_post_stream_is_answered_by_post(sdk_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, sdk_http, timeout=10))
    await handshake(rec, t)
    await t.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}})
    ask = await rec.until(lambda: next((m for m in rec.messages if m.get("method") == "elicitation/create"), None))
    await t.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}})
    assert (await rec.answer(2))["result"]["content"][0]["text"] == "Hello, Ada!"
    reply = next(e for e in rec.events if e.dir == "send" and e.rpc_id == ask["id"] and e.method is None)
    # the response POST is answered 202 (send() awaits it, so the note exists once send returned)
    assert any(n.seq > reply.seq and n.http and n.http.get("status") == 202 for n in rec.notes("http"))
    await t.close()
    assert our_tasks() == []


async def test_legacy_error_status_is_reported_with_body_not_delivered(sdk_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, sdk_http, timeout=10))
    await t.start()
    # No session id on a non-initialize request: the SDK answers 400 with a JSON-RPC error body.
    await t.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
    assert request_id == 5 and type(exc) is HttpStatusError and exc.status == 400
    assert isinstance(exc.json, dict) and "error" in exc.json
    body_event = next(e for e in rec.events if e.dir == "recv")
    assert body_event.http["status"] == 400 and body_event.message == exc.json
    assert rec.messages == []
    await t.close()


async def test_legacy_404_with_our_session_id_is_session_expired(sdk_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, sdk_http, timeout=10))
    await handshake(rec, t)
    real = t.session_id
    # The server ends the session (DELETE by another party); our next request carries a dead id.
    async with httpx.AsyncClient() as other:
        gone = await other.delete(sdk_http, headers={"Mcp-Session-Id": real, "MCP-Protocol-Version": "2025-11-25"})
    assert gone.status_code == 200
    await t.send({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
    assert request_id == 9 and isinstance(exc, SessionExpired) and exc.status == 404
    note = rec.notes("session-expired")[0]
    assert real in note.text and t.session_id is None
    # A new initialize on the same transport starts a new session.
    await t.send(initialize(10))
    await rec.answer(10)
    assert t.session_id and t.session_id != real
    await t.close()
    assert our_tasks() == []


# --- Streamable HTTP, modern, SDK peer -------------------------------------------------------------


async def test_modern_headers_no_session_and_base64_name(sdk_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, sdk_http, {"Authorization": SECRET}, timeout=10))
    t.era = "modern"
    await t.start()
    await t.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}})
    assert "result" in await rec.answer(1)
    uri = "peer://items/café"
    await t.send(
        {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri, "_meta": modern_meta()}}
    )
    read = await rec.answer(2)
    assert read["result"]["contents"][0]["text"] == "item café"
    await t.send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": modern_meta()},
        },
        headers={"Mcp-Param-Extra": "x"},
    )
    assert (await rec.answer(3))["result"]["content"][0]["text"] == "hi"
    await t.close()
    sends = [e.http["headers"] for e in rec.events if e.dir == "send"]
    assert sends[0]["MCP-Protocol-Version"] == "2026-07-28" and sends[0]["Mcp-Method"] == "server/discover"
    assert "Mcp-Name" not in sends[0]
    assert sends[1]["Mcp-Name"] == encode_header_value(uri) and sends[1]["Mcp-Name"].startswith("=?base64?")
    assert sends[2]["Mcp-Name"] == "echo" and sends[2]["Mcp-Param-Extra"] == "x"
    assert all("Mcp-Session-Id" not in h for h in sends)
    methods = {n.http["method"] for n in rec.notes() if n.http}
    assert "GET" not in methods and "DELETE" not in methods
    assert not rec.failed and "s3cr3t" not in rec.dump()


async def test_modern_unsupported_version_is_an_http_status_error_with_the_error_body(sdk_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, sdk_http, timeout=10))
    t.era = "modern"
    await t.start()
    await t.send(
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta("2099-01-01")}}
    )
    request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
    assert request_id == 1 and isinstance(exc, HttpStatusError) and exc.status == 400
    assert exc.json["error"]["code"] == -32022 and exc.json["id"] == 1
    assert rec.messages == [] and [e.dir for e in rec.events if e.dir in ("send", "recv")] == ["send", "recv"]
    await t.close()


async def test_modern_cancel_closes_the_stream_legacy_cancel_declines(sdk_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, sdk_http, timeout=10))
    assert await t.cancel(1) is False  # legacy: the client sends notifications/cancelled
    t.era = "modern"
    await t.start()
    await t.send(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": {}, "_meta": modern_meta()},
        }
    )
    await rec.until(lambda: our_tasks())
    assert await t.cancel(4) is True
    assert our_tasks() == []
    assert rec.notes("cancelled")[0].data == {"request_id": 4}
    assert rec.failed == [] and rec.response(4) is None
    await t.close()


# --- server-everything (Node SDK) over Streamable HTTP ----------------------------------------------


async def test_server_everything_streamable_http_with_event_ids(everything_http: str) -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, everything_http, {"X-Api-Key": "k-123456"}, timeout=15))
    await handshake(rec, t)
    await t.send(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hey"}}}
    )
    answer = await rec.answer(2)
    assert "hey" in json.dumps(answer["result"])
    await t.close()
    recvs = [e for e in rec.events if e.dir == "recv"]
    # server-everything has an event store: every SSE event carries an id, kept on the event
    assert recvs and all(e.sse_id for e in recvs if e.http["content_type"] == "text/event-stream")
    assert next(n for n in rec.notes("http") if n.http and n.http["method"] == "DELETE").http["status"] == 200
    assert "k-123456" not in rec.dump() and our_tasks() == []


# --- HTTP+SSE, SDK peer -------------------------------------------------------------------------------


async def test_sse_transport_endpoint_frames_and_close(sdk_sse: str) -> None:
    rec = Recorder()
    t = rec.bind(SseTransport(rec.tap, sdk_sse, {"Authorization": SECRET}, timeout=10))
    await t.start()
    assert t.endpoint and t.endpoint.startswith(sdk_sse.removesuffix("/sse") + "/messages/?session_id=")
    await t.send(initialize(1))
    await rec.answer(1)
    t.protocol_version = "2025-11-25"
    await t.send(INITIALIZED)
    await t.send(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "sse"}}}
    )
    assert (await rec.answer(2))["result"]["content"][0]["text"] == "sse"
    await t.close()
    await t.close()
    frames = [(e.dir, e.method or e.rpc_id) for e in rec.events if e.dir in ("send", "recv")]
    assert frames == [
        ("send", "initialize"),
        ("recv", 1),
        ("send", "notifications/initialized"),
        ("send", "tools/call"),
        ("recv", 2),
    ]
    posts = [e for e in rec.events if e.dir == "send"]
    assert all(e.http["url"] == t.endpoint and e.http["headers"]["Authorization"] == "Bearer ••••" for e in posts)
    acks = [n for n in rec.notes("http") if n.http and n.http["method"] == "POST"]
    assert [n.http["status"] for n in acks] == [202, 202, 202]
    assert all(e.http["method"] == "GET" for e in rec.events if e.dir == "recv")
    assert rec.closed == [] and rec.failed == [] and "s3cr3t" not in rec.dump() and our_tasks() == []


async def test_sse_transport_404_on_the_stream_url_is_an_http_status_error(sdk_sse: str) -> None:
    rec = Recorder()
    t = rec.bind(SseTransport(rec.tap, sdk_sse.replace("/sse", "/nowhere"), timeout=10))
    with pytest.raises(HttpStatusError) as info:
        await t.start()
    assert info.value.status == 404 and our_tasks() == []


# --- faults (scripted server) -------------------------------------------------------------------------


async def test_wrong_content_type_is_recorded_and_fails_the_request() -> None:
    async def html(req: Request, w: asyncio.StreamWriter) -> None:
        w.write(head("200 OK", "text/html") + b"<html>hello</html>")
        await w.drain()

    async with FaultServer(html) as server:
        rec = Recorder()
        t = rec.bind(StreamableHttpTransport(rec.tap, server.url, timeout=5))
        await t.start()
        await t.send(initialize(1))
        request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
        assert request_id == 1 and "unexpected Content-Type 'text/html'" in str(exc)
        body = next(e for e in rec.events if e.dir == "recv")
        assert body.raw == "<html>hello</html>" and body.parse_error and body.http["content_type"] == "text/html"
        assert rec.messages == []
        await t.close()


async def test_a_body_over_the_frame_limit_is_recorded_cut_and_fails_the_request(monkeypatch) -> None:
    monkeypatch.setattr(http_base, "MAX_FRAME", 1000)

    async def huge(req: Request, w: asyncio.StreamWriter) -> None:
        w.write(head("200 OK", "application/json") + b'{"jsonrpc":"2.0","id":1,"result":"' + b"a" * 5000 + b'"}')
        await w.drain()

    async with FaultServer(huge) as server:
        rec = Recorder()
        t = rec.bind(StreamableHttpTransport(rec.tap, server.url, timeout=5))
        await t.start()
        await t.send(initialize(1))
        request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
        assert request_id == 1 and "body longer than 1000 bytes" in str(exc)
        body = next(e for e in rec.events if e.dir == "recv")
        assert body.size == 1000 and body.raw.startswith('{"jsonrpc":"2.0","id":1,"result":"aaa') and body.parse_error
        assert any("recorded cut at that size" in p for p in body.problems) and rec.messages == []
        await t.close()


async def test_a_paused_tap_stops_reading_the_stream_until_resumed() -> None:
    """Back-pressure, as over stdio: while the tap is paused no event is read; resumed, all arrive."""
    sent = asyncio.Event()

    async def stream(req: Request, w: asyncio.StreamWriter) -> None:
        w.write(
            head("200 OK", "text/event-stream")
            + b"".join(b'data: {"jsonrpc":"2.0","method":"notifications/n%d"}\n\n' % i for i in range(3))
            + b'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
        )
        await w.drain()
        sent.set()

    async with FaultServer(stream) as server:
        rec = Recorder()
        t = rec.bind(StreamableHttpTransport(rec.tap, server.url, timeout=5))
        await t.start()
        await t.send(initialize(1))  # recorded before the pause: it is ours
        rec.tap.pause()
        await asyncio.wait_for(sent.wait(), 5)
        async with asyncio.timeout(5):  # the reader got bytes and now waits on the tap
            while not rec.tap._gate._waiters:  # (asyncio.Event keeps its waiters there)
                await asyncio.sleep(0.01)
        assert [e for e in rec.events if e.dir == "recv"] == [] and rec.messages == []
        rec.tap.resume()
        await rec.answer(1)
        assert [m.get("method") for m in rec.messages[:3]] == [
            "notifications/n0",
            "notifications/n1",
            "notifications/n2",
        ]
        await t.close()


async def test_sse_stream_cut_mid_event_is_noted_and_fails_the_request() -> None:
    async def cut(req: Request, w: asyncio.StreamWriter) -> None:
        w.write(
            head("200 OK", "text/event-stream")
            + b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\ndata: {"jsonrpc":"2.0","id":1,'
        )
        await w.drain()

    async with FaultServer(cut) as server:
        rec = Recorder()
        t = rec.bind(StreamableHttpTransport(rec.tap, server.url, timeout=5))
        await t.start()
        await t.send(initialize(1))
        request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
        assert request_id == 1 and "ended before the response" in str(exc)
        cut_note = next(n for n in rec.notes("error") if "cut in the middle" in n.text)
        assert cut_note.data["partial"] == 'data: {"jsonrpc":"2.0","id":1,'
        assert [m.get("method") for m in rec.messages] == ["notifications/message"]
        await t.close()
        assert our_tasks() == []


async def test_connection_refused_fails_the_request_and_notes_it() -> None:
    rec = Recorder()
    t = rec.bind(StreamableHttpTransport(rec.tap, f"http://127.0.0.1:{free_port()}/mcp", timeout=5))
    await t.start()
    await t.send(initialize(1))
    request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
    assert request_id == 1 and isinstance(exc, TransportError) and "cannot connect" in str(exc)
    await t.send(INITIALIZED)  # a notification: noted, never raised
    assert sum("cannot connect" in n.text for n in rec.notes("error")) == 2
    await t.close()
    sse = rec.bind(SseTransport(rec.tap, f"http://127.0.0.1:{free_port()}/sse", timeout=5))
    with pytest.raises(TransportError, match="cannot connect"):
        await sse.start()
    assert our_tasks() == []


async def test_slow_trickle_completes_and_a_stalled_event_times_out() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}).encode()
    stall = asyncio.Event()

    async def trickle(req: Request, w: asyncio.StreamWriter) -> None:
        if json.loads(req.body)["id"] == 1:
            w.write(head("200 OK", "application/json"))
            for i in range(0, len(body), 7):
                w.write(body[i : i + 7])
                await w.drain()
                await asyncio.sleep(0.01)
        else:
            w.write(head("200 OK", "text/event-stream") + b'data: {"jsonrpc":')
            await w.drain()
            await stall.wait()  # never completes the event

    async with FaultServer(trickle) as server:
        rec = Recorder()
        t = rec.bind(StreamableHttpTransport(rec.tap, server.url, timeout=0.5))
        await t.start()
        await t.send(initialize(1))
        assert (await rec.answer(1))["result"] == {"ok": True}
        assert [e.raw for e in rec.events if e.dir == "recv"] == [body.decode()]
        await t.send(initialize(2))
        request_id, exc = await rec.until(lambda: rec.failed and rec.failed[0])
        assert request_id == 2 and isinstance(exc, TransportError)
        assert any("cut in the middle" in n.text for n in rec.notes("error"))
        await t.close()
        stall.set()
        assert our_tasks() == []


async def test_dropped_stream_is_resumed_with_last_event_id_after_retry() -> None:
    """The conformance scenario sse-retry, scripted: priming event with id and retry, close,
    then the client must GET with Last-Event-ID; the response arrives on the resumed stream."""

    async def server(req: Request, w: asyncio.StreamWriter) -> None:
        if req.method == "POST" and json.loads(req.body).get("method") == "initialize":
            w.write(
                head("200 OK", "application/json", "Mcp-Session-Id: s-1\r\n")
                + json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}).encode()
            )
        elif req.method == "POST" and json.loads(req.body).get("id") is None:
            w.write(head("202 Accepted", None, "Content-Length: 0\r\n"))
        elif req.method == "POST":
            w.write(head("200 OK", "text/event-stream") + b"id: ev-1\nretry: 120\ndata: \n\n")
        elif req.method == "GET" and "last-event-id" not in req.headers:
            w.write(head("405 Method Not Allowed", None, "Content-Length: 0\r\n"))
        elif req.method == "GET":
            w.write(
                head("200 OK", "text/event-stream")
                + b"id: ev-2\ndata: "
                + json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"resumed": True}}).encode()
                + b"\n\n"
            )
        else:
            w.write(head("200 OK", None, "Content-Length: 0\r\n"))
        await w.drain()

    async with FaultServer(server) as srv:
        rec = Recorder()
        t = rec.bind(StreamableHttpTransport(rec.tap, srv.url, timeout=5))
        await handshake(rec, t)
        await rec.until(lambda: any("405" in n.text for n in rec.notes("http")))
        await t.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x", "arguments": {}}})
        assert (await rec.answer(2))["result"] == {"resumed": True}
        await t.close()
    gets = [r for r in srv.requests if r.method == "GET"]
    assert [g.headers.get("last-event-id") for g in gets] == [None, "ev-1"]
    assert gets[1].headers["mcp-session-id"] == "s-1" and gets[1].headers["mcp-protocol-version"] == "2025-11-25"
    reconnect = rec.notes("reconnect")[0]
    assert reconnect.data["retry_ms"] == 120 and reconnect.data["last_event_id"] == "ev-1"
    resumed = next(e for e in rec.events if e.dir == "recv" and e.rpc_id == 2)
    assert resumed.sse_id == "ev-2" and resumed.http["method"] == "GET" and resumed.seq > reconnect.seq
    assert [r.method for r in srv.requests][-1] == "DELETE" and rec.failed == []


async def test_sse_endpoint_on_another_origin_is_refused() -> None:
    async def evil(req: Request, w: asyncio.StreamWriter) -> None:
        w.write(head("200 OK", "text/event-stream") + b"event: endpoint\ndata: http://attacker.example/steal\n\n")
        await w.drain()
        await asyncio.Event().wait()

    async with FaultServer(evil) as server:
        rec = Recorder()
        t = rec.bind(SseTransport(rec.tap, server.url, {"Authorization": SECRET}, timeout=5))
        with pytest.raises(TransportError, match="not on the origin"):
            await t.start()
        assert t.endpoint is None and our_tasks() == [] and "s3cr3t" not in rec.dump()


async def test_response_secrets_and_set_cookie_are_masked() -> None:
    async def cookie(req: Request, w: asyncio.StreamWriter) -> None:
        w.write(
            head(
                "401 Unauthorized",
                "application/json",
                "Set-Cookie: sid=cookie-secret-1\r\nWWW-Authenticate: Bearer realm=x\r\n",
            )
            + b'{"error":"nope"}'
        )
        await w.drain()

    async with FaultServer(cookie) as server:
        rec = Recorder()
        t = rec.bind(
            StreamableHttpTransport(
                rec.tap,
                server.url.replace("http://", "http://user:pw-secret-2@"),
                {"Authorization": SECRET, "X-Tenant-Token": "tok-secret-3"},
                timeout=5,
            )
        )
        await t.start()
        await t.send(initialize(1))
        _, exc = await rec.until(lambda: rec.failed and rec.failed[0])
        assert isinstance(exc, HttpStatusError) and exc.status == 401 and exc.json == {"error": "nope"}
        await t.close()
    sent = server.requests[0].headers
    assert sent["x-tenant-token"] == "tok-secret-3"  # (httpx turns the URL's user:password into Basic auth)
    dump = rec.dump()
    for secret in ("s3cr3t", "cookie-secret-1", "pw-secret-2", "tok-secret-3", sent["authorization"].split()[-1]):
        assert secret not in dump
