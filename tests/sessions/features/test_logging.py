"""Logging: the level set, the server's log messages shown in bursts (alone; and against
server-everything)."""

from __future__ import annotations

import pytest

from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.secrets import CUT, MASK
from playground.sessions.features.summaries import SUMMARY_CHARS
from tests.sessions.fakes import FakeClient, FakeSession, html_of
from tests.sessions.helpers import events, everything_server, live_tab, receive_until, send, sent


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
    assert "notifications/message" in feed.ignored_notifications  # the worker never hands it to the feed
    await session.settle()  # the burst, sent once its window closed
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


@pytest.mark.django_db(transaction=True)
async def test_the_level_set_reaches_the_server_and_its_log_messages_are_shown():
    """Against server-everything: the level set, then a subscription, which the server logs (a
    log notification, shown in the Log panel)."""
    async with live_tab('id="catalogue"', ">get-roots-list<", ">simulate-research-query<", **everything_server()) as (
        _,
        session,
        comm,
    ):
        await send(comm, action="set_level", level="debug")
        await receive_until(comm, "level set to <strong>debug</strong>")
        await send(comm, action="subscribe", uri="demo://resource/static/document/architecture.md")
        await receive_until(
            comm, 'aria-label="Subscribed resources"', "Received Subscribe Resource request", 'id="feed-log"'
        )
    rows = await events(session.pk)
    assert sent(rows, "logging/setLevel")[0]["params"] == {"level": "debug"}


async def test_a_log_entry_s_every_server_string_is_text_and_its_time_in_ms():
    """The entries are built in Python (bursts.py): each value the server chose reads back as
    the same text, in the element it belongs to, with nothing of it parsed as markup."""
    from html.parser import HTMLParser

    hostile = "<img src=x onerror=alert(1)>\"'&"
    session = FakeSession(FakeClient())
    logging = session.add("logging")
    logging.on_notification(
        {"method": "notifications/message", "params": {"level": hostile, "logger": hostile, "data": hostile}}
    )
    await session.settle()
    (html,) = [e["html"] for name, e in session.published if name == "logging"]

    class Read(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[tuple[str, dict[str, str | None]]] = []
            self.texts: dict[str, str] = {}
            self.open: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append((tag, dict(attrs)))
            self.open.append(dict(attrs).get("class") or tag)

        def handle_endtag(self, tag: str) -> None:
            self.open.pop()

        def handle_data(self, data: str) -> None:
            if self.open:
                self.texts[self.open[-1]] = self.texts.get(self.open[-1], "") + data

    read = Read()
    read.feed(html)
    assert [tag for tag, _ in read.tags] == ["div", "li", "span", "span", "span", "span"]
    assert read.tags[1][1]["class"] == f"feed-entry level-{hostile}"
    assert read.texts["level"] == hostile and read.texts["logger"] == hostile and hostile in read.texts["text"]
    t = read.tags[2][1]
    assert t["class"] == "t" and float(t["data-ms"] or "") == pytest.approx(float(read.texts["t"]))
