"""subscriptions/listen (modern): the stream, what the server acknowledged and did not honour
(alone, its panel; and against the SDK peer)."""

from __future__ import annotations

import re

import pytest

from tests.sessions.fakes import FakeClient, FakeSession
from tests.sessions.helpers import events, live_tab, receive_until, send, sent


async def test_listen_counts_only_its_own_stream_and_lists_what_was_refused():
    from playground.sessions.features.listen import refused

    session = FakeSession(FakeClient(era="modern"))
    listen = session.add("listen")
    listen.stream = {
        "id": 5,
        "requested": {"toolsListChanged": True, "resourceSubscriptions": ["a://1"]},
        "acknowledged": None,
        "status": "waiting",
        "count": 0,
    }
    listen.on_notification(
        {
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": 5},
                "notifications": {"toolsListChanged": True},
            },
        }
    )
    listen.on_notification({"method": "notifications/tools/list_changed", "params": {}})  # untagged
    assert listen.stream["status"] == "open" and listen.stream["count"] == 0
    assert refused(listen.stream["requested"], listen.stream["acknowledged"]) == ["a://1"]


def test_listen_panel_shows_what_the_server_did_not_honour():
    """The acknowledged-vs-requested difference of subscriptions/listen (the SDK peer honours all)."""
    requested = {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["a://1", "b://2"]}
    acknowledged = {"toolsListChanged": True, "resourceSubscriptions": ["a://1"]}
    listen = FakeSession().add("listen")
    listen.stream = {"id": 7, "requested": requested, "acknowledged": acknowledged, "status": "open", "count": 0}
    got = listen.snapshot()[0]["event"]["html"]
    honoured = got.split("<dt>not honoured</dt>")[1].split("</dd>")[0]
    assert re.findall(r'<span class="cap">([^<]+)</span>', honoured) == ["promptsListChanged", "b://2"]


@pytest.mark.django_db(transaction=True)
async def test_a_listen_stream_shows_what_was_acknowledged_then_its_notifications_until_stopped():
    """subscriptions/listen against the SDK peer: requested vs acknowledged, then the tagged
    notifications; stopping it cancels the request."""
    async with live_tab('id="catalogue"', ">greet<", era="modern") as (_, session, comm):
        await send(comm, action="listen", toolsListChanged="1", uris="peer://greeting\npeer://nothing")
        got = await receive_until(comm, "<strong>open</strong>")
        acked = got.split("<dt>acknowledged</dt>")[-1].split("</dd>")[0]
        assert '<span class="cap">toolsListChanged</span>' in acked and "peer://greeting" in acked
        await send(comm, action="call_tool", name="touch", **{"args.uri": "peer://greeting"})
        # The feed (gathered in bursts) and the transcript arrive in either order.
        got = await receive_until(
            comm,
            'notifications/resources/updated</code> <span class="tag"',
            "notifications/tools/list_changed</code>",
            'data-method="tools/list"',
        )  # list_changed refreshed the list
        await send(comm, action="stop_listen")
        got = await receive_until(comm, "closed by us")
    rows = await events(session.pk)
    listen = sent(rows, "subscriptions/listen")[0]
    assert listen["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["peer://greeting", "peer://nothing"],
    }
    assert sent(rows, "notifications/cancelled")[-1]["params"]["requestId"] == listen["id"]
