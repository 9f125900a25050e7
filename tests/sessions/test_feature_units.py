"""Each side feature alone, with a fake SessionContext (tests/sessions/fakes.py) and a fake
client: what it sends the server, what it publishes, what a tab gets. The end-to-end behaviour
against real servers is in test_features.py."""
from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.secrets import CUT, MASK
from playground.sessions.features import BY_NAME
from playground.sessions.features.summaries import SUMMARY_CHARS
from playground.sessions.protocol import CURRENT_CALL

from tests.sessions.fakes import FakeSession, FakeTab


class FakeClient:
    """Records requests; answers from `answers` (an exception instance is raised)."""

    def __init__(self, era: str = "legacy", **answers: Any) -> None:
        self.era = era
        self.closed = False
        self.timeout = 60.0
        self.max_input_rounds = 10
        self.server_capabilities: dict[str, Any] = {"resources": {"subscribe": True}}
        self.sent: list[tuple[str, Any]] = []
        self.answers = answers

    def capabilities(self) -> dict[str, Any]:
        return {"roots": {"listChanged": True}}

    async def _answer(self, method: str, params: Any) -> Any:
        self.sent.append((method, params))
        answer = self.answers.get(method)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, asyncio.Future):
            return await answer
        return answer if answer is not None else {}

    async def set_logging_level(self, level: str) -> Any:
        return await self._answer("logging/setLevel", {"level": level})

    async def subscribe(self, uri: str) -> Any:
        return await self._answer("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> Any:
        return await self._answer("resources/unsubscribe", {"uri": uri})

    async def complete(self, ref: Any, argument: Any, context: Any = None) -> Any:
        return await self._answer("completion/complete", {"ref": ref, "argument": argument})

    async def notify(self, method: str, params: Any = None) -> None:
        self.sent.append((method, params))


def html_of(session: FakeSession) -> str:
    return "\n".join(event.get("html", "") for _, event in session.published)


async def test_logging_sets_the_level_and_says_when_the_server_refuses():
    client = FakeClient(**{"logging/setLevel": JsonRpcError(-32602, "no <such> level")})
    session = FakeSession(client)
    logging = session.add("logging")
    await logging.handle({"command": "set_level", "name": "debug"})
    assert client.sent == [("logging/setLevel", {"level": "debug"})] and logging.level == ""
    assert "set_level: JSON-RPC error -32602: no &lt;such&gt; level" in html_of(session)
    client.answers.clear()
    await logging.handle({"command": "set_level", "name": "debug"})
    assert logging.level == "debug" and logging.error == ""


async def test_logging_shows_log_messages_in_bursts_and_not_in_the_feed():
    session = FakeSession(FakeClient())
    logging, feed = session.add("logging"), session.add("feed")
    message = {"method": "notifications/message", "params": {"level": "error", "logger": "db", "data": "<b>down</b>"}}
    logging.on_notification(message)
    assert "notifications/message" in feed.ignored_notifications         # the worker never hands it to the feed
    await session.settle()                                # the burst, sent once its window closed
    published = [(name, e["html"]) for name, e in session.published]
    assert [name for name, _ in published] == ["logging"]
    assert 'id="feed-log"' in published[0][1] and "&lt;b&gt;down&lt;/b&gt;" in published[0][1]
    # A message cut to SUMMARY_CHARS in the panel: a secret's head left at the cut is masked
    # (the page masks whole values only).
    session.secret_values = ["tok-0123456789-abcdef"]
    said = "x" * (SUMMARY_CHARS - 8) + "tok-0123456789-abcdef and more"
    logging.on_notification({"method": "notifications/message", "params": {"level": "info", "data": said}})
    await session.settle()
    html = session.published[-1][1]["html"]
    assert f"{'x' * (SUMMARY_CHARS - 8)}{MASK}{CUT} ({len(said)} characters)" in html and "tok-" not in html


async def test_subscriptions_remember_what_the_server_accepted():
    client = FakeClient(**{"resources/unsubscribe": JsonRpcError(-32601, "nope")})
    session = FakeSession(client)
    subs = session.add("subscriptions")
    await subs.handle({"command": "subscribe", "uri": "a://1"})
    await subs.handle({"command": "subscribe", "uri": "a://1"})
    await subs.handle({"command": "unsubscribe", "uri": "a://1"})
    assert subs.subscribed == ["a://1"] and "unsubscribe: JSON-RPC error -32601: nope" in subs.error


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


async def test_completion_answers_the_asking_tab_only_with_the_latest_question():
    first: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    client = FakeClient(**{"completion/complete": first})
    session = FakeSession(client)
    completion = session.add("completion")
    tab = FakeTab()
    content = {"ref_type": "ref/prompt", "ref": "greet", "target": "f1", "argument": "name", "value": "A"}
    command = await BY_NAME["completion"].command("complete", content, tab)
    await completion.handle(command)
    client.answers["completion/complete"] = {"completion": {"values": ["Ada", "Alan"], "hasMore": True}}
    await completion.handle(await BY_NAME["completion"].command("complete", {**content, "value": "Al"}, tab))
    first.set_result({"completion": {"values": ["stale"]}})
    await session.settle()
    assert [(c, e["values"]) for c, _, e in session.replies] == [("tab-1", ["Ada", "Alan"])]
    fragment, = BY_NAME["completion"].fragments(session.replies[0][2], tab)
    assert 'id="f1"' in fragment and "Alan" in fragment and "stale" not in fragment


async def test_roots_answer_from_the_settings_and_tell_a_legacy_server_they_changed():
    client = FakeClient()
    session = FakeSession(client)
    roots = session.add("roots", BY_NAME["roots"].prepare(type("Server", (), {"roots": [{"uri": "file:///a"}]})()))
    assert await roots.answer("roots/list", {}) == {"roots": [{"uri": "file:///a"}]}
    await roots.handle({"command": "set_roots", "params": [{"uri": "file:///b"}, "not an object"]})
    assert await roots.answer("roots/list", {}) == {"roots": [{"uri": "file:///b"}]}
    assert client.sent == [("notifications/roots/list_changed", None)]
    client.era, client.sent = "modern", []
    await roots.handle({"command": "set_roots", "params": []})
    assert client.sent == []                     # the modern era has no such notification


@pytest.mark.parametrize(("given", "applied"), [("2.5", 2.5), ("0", None), ("-1", None), ("nan", None),
                                                ("abc", None), (str(24 * 3600 + 1), None)])
async def test_the_timeout_takes_a_sensible_number_of_seconds_only(given, applied):
    session = FakeSession(FakeClient())
    before = session.config.timeout
    timeout = session.add("timeout")
    await timeout.handle(await BY_NAME["timeout"].command("set_timeout", {"seconds": given}, FakeTab()))
    assert session.config.timeout == (applied if applied is not None else before)
    assert (timeout.error == "") == (applied is not None)


async def test_auto_refresh_refreshes_on_list_changed_until_turned_off():
    session = FakeSession(FakeClient())
    auto = session.add("auto_refresh")
    auto.on_notification({"method": "notifications/tools/list_changed"})
    await session.settle()
    await auto.handle(await BY_NAME["auto_refresh"].command("auto_refresh", {}, FakeTab()))
    auto.on_notification({"method": "notifications/tools/list_changed"})
    await session.settle()
    assert session.refreshes == 1 and not auto.on


async def test_a_server_request_in_an_input_round_names_its_call_and_the_answer_resolves_it():
    session = FakeSession(FakeClient(era="modern"))
    rounds, requests = session.add("input_rounds"), session.add("server_requests")
    CURRENT_CALL.set("c9")
    rounds.on_input_required("tools/call", 1, {"inputRequests": {"q": {}}, "requestState": "s" * 3000})
    asking = asyncio.create_task(requests.answer("elicitation/create", {"message": "<i>name?</i>",
                                                                         "requestedSchema": {"type": "object"}}))
    while not session.published:
        await asyncio.sleep(0)
    asked = session.published[0][1]
    assert asked["context"]["call_id"] == "c9" and asked["context"]["round"] == 1
    assert len(asked["context"]["request_state"]) == 2000 and asked["context"]["state_size"] == 3000
    tab = FakeTab()
    card, = BY_NAME["server_requests"].fragments(asked, tab)
    assert BY_NAME["server_requests"].fragments(asked, tab) == []            # once per tab
    assert "&lt;i&gt;name?&lt;/i&gt;" in card and "input_required round 1" in card
    command = await BY_NAME["server_requests"].command("answer", {"key": asked["key"], "result": '{"action": "decline"}'}, tab)
    await requests.handle(command)
    assert await asking == {"action": "decline"}
    assert session.published[-1][1] == {"key": asked["key"], "done": True}
    outcome: dict[str, Any] = {}
    rounds.on_call_end("c9", outcome)
    assert [r["round"] for r in outcome["rounds"]] == [1] and rounds.request_context() is None


async def test_feed_shows_every_notification_but_log_messages_and_replays_the_recent_ones():
    session = FakeSession(FakeClient())
    feed = session.add("feed")
    for i in range(30):
        feed.on_notification({"method": "notifications/resources/updated", "params": {"uri": f"r://{i}"}})
    await session.settle()
    burst = html_of(session)
    assert "… 10 more notifications" in burst               # the latest 20 shown, the rest counted
    assert "r://29" in burst and "r://0<" not in burst
    replay = feed.snapshot()[0]["event"]["html"]
    assert 'hx-swap-oob="innerHTML"' in replay and "r://0" in replay and "r://29" in replay


async def test_counts_tally_notifications_by_method_busiest_first_and_bound_what_a_server_invents():
    from playground.sessions.features import counts as counts_module

    session = FakeSession(FakeClient())
    counts = session.add("counts")
    for method in ["notifications/message"] * 3 + ["notifications/<b>odd</b>"] + ["notifications/progress"] * 2:
        counts.on_notification({"method": method})
    table = counts.snapshot()[0]["event"]["html"]
    rows = [(m, int(n)) for m, n in re.findall(r"<tr><td><code>(.*?)</code></td><td class=\"num\">(\d+)", table)]
    assert rows == [("notifications/message", 3), ("notifications/progress", 2), ("notifications/&lt;b&gt;odd&lt;/b&gt;", 1)]
    for i in range(counts_module.METHODS_KEPT + 50):
        counts.on_notification({"method": f"x/{i}"})
    assert len(counts.counts) == counts_module.METHODS_KEPT + 1 and counts.counts[counts_module.OTHER] >= 50
    await session.settle()
    assert len(session.published) == 1          # one update for the whole burst


def test_authorization_cards_show_once_per_tab_and_leave_when_done():
    oauth = BY_NAME["oauth"]
    tab = FakeTab()
    pending = {"state": "s1.abc", "url": "https://as.example/authorize?x=<b>", "issuer": "https://as.example",
               "redirect_uri": "http://127.0.0.1:8000/oauth/callback/", "scope": "read", "client_id": "c"}
    card, = oauth.fragments({"pending": pending}, tab)
    assert oauth.fragments({"pending": pending}, tab) == []                  # the snapshot and the broadcast
    assert 'id="server-requests" hx-swap-oob="beforeend"' in card and "&lt;b&gt;" in card and "<b>" not in card
    gone, = oauth.fragments({"done": "s1.abc"}, tab)
    assert 'hx-swap-oob="delete"' in gone and oauth.fragments({"pending": pending}, tab) != []


def test_stdio_servers_get_no_authorization():
    server = type("Server", (), {"transport": "stdio", "pk": 1, "url": ""})()
    assert BY_NAME["oauth"].prepare(server, callback_url="http://x/") == {}
    assert BY_NAME["oauth"](FakeSession(), {}).client_auth() is None
