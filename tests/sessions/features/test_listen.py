"""subscriptions/listen (modern): the stream, what the server honoured.

The feature alone, with a fake SessionContext and client (tests/sessions/fakes.py); against real
servers where it says so."""
from __future__ import annotations

import re


from tests.sessions.fakes import FakeClient, FakeSession


async def test_listen_counts_only_its_own_stream_and_lists_what_was_refused():
    from playground.sessions.features.listen import refused

    session = FakeSession(FakeClient(era="modern"))
    listen = session.add("listen")
    listen.stream = {"id": 5, "requested": {"toolsListChanged": True, "resourceSubscriptions": ["a://1"]},
                     "acknowledged": None, "status": "waiting", "count": 0}
    listen.on_notification({"method": "notifications/subscriptions/acknowledged",
                            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 5},
                                       "notifications": {"toolsListChanged": True}}})
    listen.on_notification({"method": "notifications/tools/list_changed", "params": {}})          # untagged
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
