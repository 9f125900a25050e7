"""Protocol logic of McpClient with an in-memory peer: correlation, handshake, rounds, timeouts."""

from __future__ import annotations

import asyncio

import pytest

from playground.mcp.client import LATEST_LEGACY, McpClient, ProtocolError, RequestTimeout
from playground.mcp.events import Tap
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.responder import StaticResponder
from playground.mcp.transports.base import TransportError
from tests.mcp.memory import MemoryTransport


def make(handler, **kw):
    tap = Tap()
    events = []
    tap.subscribe(events.append)
    client = McpClient(MemoryTransport(tap, handler), tap=tap, **kw)
    return client, events


def legacy_server(version="2025-11-25"):
    def handle(t, msg):
        if msg.get("method") == "initialize":
            t.reply(
                msg,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mem", "version": "1"},
                    "instructions": "hi",
                },
            )
        elif msg.get("method") == "tools/list":
            cursor = (msg.get("params") or {}).get("cursor")
            if cursor is None:
                t.reply(msg, {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "p2"})
            else:
                t.reply(msg, {"tools": [{"name": "b", "inputSchema": {"type": "object"}}]})

    return handle


async def test_initialize_handshake_and_paging():
    client, events = make(legacy_server())
    await client.start()
    facts = await client.initialize()
    assert facts.protocol_version == "2025-11-25"
    assert facts.server_info["name"] == "mem" and facts.instructions == "hi"
    sent = client.transport.sent
    assert sent[0]["method"] == "initialize" and sent[0]["params"]["protocolVersion"] == LATEST_LEGACY
    assert sent[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    tools = await client.list_tools()
    assert [t["name"] for t in tools] == ["a", "b"]
    assert client.transport.sent[-1]["params"] == {"cursor": "p2"}
    # The tap paired the initialize response with its request.
    init_req = next(e for e in events if e.dir == "send" and e.rpc_id == sent[0]["id"])
    init_resp = next(e for e in events if e.dir == "recv" and e.rpc_id == sent[0]["id"])
    assert init_resp.reply_to == init_req.seq and init_resp.latency_ms is not None


async def test_older_and_unknown_versions_are_reported():
    client, events = make(legacy_server("2025-03-26"))
    await client.start()
    await client.initialize()
    assert client.protocol_version == "2025-03-26"
    assert any(e.kind == "info" and "2025-03-26" in e.text for e in events)
    client, events = make(legacy_server("1999-01-01"))
    await client.start()
    await client.initialize()
    assert any(e.kind == "warning" and "1999-01-01" in e.text for e in events)


async def test_error_response_raises_with_code():
    client, _ = make(lambda t, m: t.error(m, -32602, "bad", {"x": 1}))
    await client.start()
    with pytest.raises(JsonRpcError) as info:
        await client.request("tools/call", {"name": "x"})
    assert info.value.code == -32602 and info.value.data == {"x": 1}


async def test_modern_meta_on_every_request_and_log_level():
    def handle(t, msg):
        if "id" in msg:
            t.reply(msg, {"resultType": "complete", "tools": []})

    client, _ = make(handle, era="modern")
    await client.start()
    await client.set_logging_level("debug")
    await client.list_tools()
    meta = client.transport.sent[-1]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-playground"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert meta["io.modelcontextprotocol/logLevel"] == "debug"


async def test_input_required_rounds_echo_request_state_exactly():
    state = "opaque-\u00e9tat==/+"

    def handle(t, msg):
        params = msg["params"]
        if "inputResponses" not in params:
            t.reply(
                msg,
                {
                    "resultType": "input_required",
                    "requestState": state,
                    "inputRequests": {
                        "who": {
                            "method": "elicitation/create",
                            "params": {
                                "message": "name?",
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": {"name": {"type": "string", "default": "Ada"}},
                                },
                            },
                        }
                    },
                },
            )
        else:
            t.reply(
                msg,
                {
                    "resultType": "complete",
                    "content": [{"type": "text", "text": params["inputResponses"]["who"]["content"]["name"]}],
                },
            )

    client, events = make(handle, era="modern", responder=StaticResponder())
    await client.start()
    result = await client.call_tool("greet", {"x": 1})
    assert result["content"][0]["text"] == "Ada"
    first, retry = client.transport.sent
    assert retry["id"] != first["id"]
    assert retry["params"]["requestState"] == state
    assert retry["params"]["arguments"] == {"x": 1} and retry["params"]["name"] == "greet"
    assert "requestState" not in first["params"]
    assert any(e.kind == "input_required" for e in events)


async def test_input_required_round_limit():
    client, _ = make(
        lambda t, m: t.reply(m, {"resultType": "input_required", "requestState": "s"}), era="modern", max_input_rounds=3
    )
    await client.start()
    with pytest.raises(ProtocolError):
        await client.call_tool("loop")
    assert len(client.transport.sent) == 4


async def test_timeout_sends_cancelled_and_progress_resets_it():
    seen = []

    async def handle(t, msg):
        if msg.get("method") == "tools/call" and msg["params"]["name"] == "progressing":
            token = msg["params"]["_meta"]["progressToken"]
            for i in range(3):
                await asyncio.sleep(0.15)  # the peer's pace, not test synchronisation
                t.deliver(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i + 1, "total": 3},
                    }
                )
            t.reply(msg, {"content": []})

    client, events = make(handle)
    await client.start()
    # Each gap (0.15 s) is below the timeout; the whole call (0.45 s) is above it.
    result = await client.call_tool("progressing", {}, on_progress=seen.append, timeout=0.3)
    assert result == {"content": []} and [p["progress"] for p in seen] == [1, 2, 3]
    with pytest.raises(RequestTimeout):
        await client.call_tool("silent", {}, timeout=0.05)
    cancelled = client.transport.sent[-1]
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"]["requestId"] == client.transport.sent[-2]["id"]
    timeout = next(e for e in events if e.kind == "timeout")
    assert timeout.text.endswith("; cancelled (notifications/cancelled sent)")


async def test_server_requests_go_to_responder_and_unknown_get_32601():
    client, _ = make(lambda t, m: None, responder=StaticResponder(roots=[{"uri": "file:///tmp", "name": "tmp"}]))
    await client.start()
    t = client.transport
    t.deliver({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
    t.deliver({"jsonrpc": "2.0", "id": "r2", "method": "ping"})
    t.deliver({"jsonrpc": "2.0", "id": "r3", "method": "no/such"})
    await asyncio.wait_for(t.wait_sent(3), 5)
    by_id = {m["id"]: m for m in t.sent}
    assert by_id["r1"]["result"] == {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}
    assert by_id["r2"]["result"] == {}
    assert by_id["r3"]["error"]["code"] == -32601


async def test_unknown_ids_and_garbage_become_notes_not_exceptions():
    client, events = make(lambda t, m: None)
    await client.start()
    client.transport.deliver({"jsonrpc": "2.0", "id": 999, "result": {}})
    client.transport.deliver("not json at all")
    client.transport.deliver({"jsonrpc": "1.0", "foo": 1})
    kinds = [(e.dir, e.kind) for e in events]
    assert ("note", "error") in kinds
    garbage = next(e for e in events if e.raw == "not json at all")
    assert garbage.parse_error and garbage.message is None
    wrong = next(e for e in events if e.message == {"jsonrpc": "1.0", "foo": 1})
    assert any("jsonrpc field" in p for p in wrong.problems)


async def test_connection_loss_fails_pending_requests():
    client, _ = make(lambda t, m: t.drop("server process exited with code 1"))
    await client.start()
    with pytest.raises(TransportError, match="exited with code 1"):
        await client.ping()
    with pytest.raises(TransportError):
        await client.ping()


async def test_an_initialize_without_answer_is_abandoned_never_cancelled():
    """ "A client MUST NOT attempt to cancel its initialize request": timed out or given up by
    the caller, it is noted, and no notifications/cancelled goes to the server."""
    client, events = make(lambda t, m: None, timeout=0.05)
    await client.start()
    with pytest.raises(RequestTimeout):
        await client.initialize()
    assert [m.get("method") for m in client.transport.sent] == ["initialize"]
    # One statement says what happened, and it is true: no note says "cancelled" as done.
    notes = [e for e in events if e.dir == "note" and e.kind in ("info", "timeout")]
    assert [(e.kind, e.text) for e in notes] == [
        (
            "timeout",
            "initialize (id 1) got no response within 0.05 s; abandoned, not cancelled: the protocol "
            "forbids cancelling initialize",
        )
    ]

    client, _ = make(lambda t, m: None)
    await client.start()
    starting = asyncio.create_task(client.initialize())
    await asyncio.wait_for(client.transport.wait_sent(1), 5)
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    assert [m.get("method") for m in client.transport.sent] == ["initialize"]
    # Any other request is still cancelled with the notification (test_timeout_... above).


async def test_a_request_resumes_on_the_loop_turn_after_its_answer():
    """The answer wakes its request's waiter as it is set: the request returns on the next turn
    of the loop (asyncio.wait took two: its callback's, then the task's). On every call's path."""
    client, _ = make(lambda t, m: None)
    await client.start()
    asking = asyncio.create_task(client.request("ping", timeout=30))
    while not client.transport.sent:
        await asyncio.sleep(0)
    client.transport.deliver({"jsonrpc": "2.0", "id": client.transport.sent[-1]["id"], "result": {"ok": 1}})
    await asyncio.sleep(0)  # one turn
    assert asking.done() and asking.result() == {"ok": 1}


async def test_a_request_still_times_out_and_its_late_answer_is_a_note():
    client, events = make(lambda t, m: None)
    await client.start()
    with pytest.raises(RequestTimeout):
        await client.request("ping", timeout=0.05)
    ping = next(m for m in client.transport.sent if m.get("method") == "ping")
    client.transport.deliver({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    assert any(e.kind == "timeout" for e in events) and any(e.kind == "error" for e in events)
