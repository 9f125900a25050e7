"""Subscriptions (legacy, per resource): what the server accepted (alone), updates until
unsubscribed (against server-everything)."""

from __future__ import annotations

import pytest

from playground.mcp.jsonrpc import JsonRpcError
from tests.sessions.fakes import FakeClient, FakeSession
from tests.sessions.helpers import events, everything_server, live_tab, receive_until, send, sent


async def test_subscriptions_remember_what_the_server_accepted():
    client = FakeClient(**{"resources/unsubscribe": JsonRpcError(-32601, "nope")})
    session = FakeSession(client)
    subs = session.add("subscriptions")
    await subs.handle({"command": "subscribe", "uri": "a://1"})
    await subs.handle({"command": "subscribe", "uri": "a://1"})
    await subs.handle({"command": "unsubscribe", "uri": "a://1"})
    assert subs.subscribed == ["a://1"] and "unsubscribe: JSON-RPC error -32601: nope" in subs.error


@pytest.mark.django_db(transaction=True)
async def test_a_subscribed_resource_gets_its_updates_until_unsubscribed():
    """Against server-everything: subscribe, its updates shown, unsubscribe."""
    uri = "demo://resource/static/document/architecture.md"
    async with live_tab('id="catalogue"', ">get-roots-list<", ">simulate-research-query<", **everything_server()) as (
        _,
        session,
        comm,
    ):
        await send(comm, action="set_level", level="debug")
        await receive_until(comm, "level set to <strong>debug</strong>")
        await send(comm, action="subscribe", uri=uri)
        # The server logs the subscription (a log notification, shown in the Log panel).
        await receive_until(
            comm, 'aria-label="Subscribed resources"', "Received Subscribe Resource request", 'id="feed-log"'
        )
        await send(comm, action="call_tool", name="toggle-subscriber-updates")
        await receive_until(comm, f'notifications/resources/updated</code> <span class="text mono">{uri}')
        await send(comm, action="call_tool", name="toggle-subscriber-updates")
        await send(comm, action="unsubscribe", uri=uri)
        await receive_until(comm, "Subscribe to a resource from the list")
    rows = await events(session.pk)
    assert sent(rows, "resources/subscribe")[0]["params"] == {"uri": uri}
    assert sent(rows, "resources/unsubscribe")[0]["params"] == {"uri": uri}
