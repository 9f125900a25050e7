"""Subscriptions (legacy, per resource).

The feature alone, with a fake SessionContext and client (tests/sessions/fakes.py); against real
servers where it says so."""
from __future__ import annotations



from playground.mcp.jsonrpc import JsonRpcError
from tests.sessions.fakes import FakeClient, FakeSession


async def test_subscriptions_remember_what_the_server_accepted():
    client = FakeClient(**{"resources/unsubscribe": JsonRpcError(-32601, "nope")})
    session = FakeSession(client)
    subs = session.add("subscriptions")
    await subs.handle({"command": "subscribe", "uri": "a://1"})
    await subs.handle({"command": "subscribe", "uri": "a://1"})
    await subs.handle({"command": "unsubscribe", "uri": "a://1"})
    assert subs.subscribed == ["a://1"] and "unsubscribe: JSON-RPC error -32601: nope" in subs.error
