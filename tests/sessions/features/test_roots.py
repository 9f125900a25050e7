"""Roots: answered from the server's settings, a change told to the server (alone; and against
server-everything, from the settings and edited on the server page)."""

from __future__ import annotations

import pytest

from playground.sessions.features import BY_NAME
from playground.sessions.live.worker import start_session
from tests.sessions.fakes import FakeClient, FakeSession
from tests.sessions.helpers import (
    EVERYTHING,
    communicator,
    edit_server,
    events,
    everything_server,
    live_tab,
    make_user_and_server,
    receive_fragment,
    receive_until,
    send,
    stop_all,
)


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
    assert client.sent == []  # the modern era has no such notification


@pytest.mark.django_db(transaction=True)
async def test_roots_edited_on_the_server_page_reach_a_live_session():
    """Saving new roots in the server's edit view tells its live session: the worker sends
    notifications/roots/list_changed and answers the server's roots/list from the new list.
    A save that leaves the roots as they were tells nobody."""
    if not EVERYTHING.exists():
        pytest.fail("server-everything is not installed: run `make peers`")
    first = [{"uri": "file:///tmp/first", "name": "First"}]
    user, server = await make_user_and_server(name="everything", command=str(EVERYTHING), args=["stdio"], roots=first)
    form = {
        "name": "everything",
        "transport": "stdio",
        "command": str(EVERYTHING),
        "args": "stdio",
        "env": "",
        "cwd": "",
        "url": "",
        "headers": "",
        "era": "legacy",
    }
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    result = ('aria-label="Result"', "<strong>tools/call</strong> get-roots-list")
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', ">get-roots-list<")
        await send(comm, action="call_tool", name="get-roots-list")
        got = await receive_fragment(comm, *result)
        assert "file:///tmp/first" in got and "file:///tmp/second" not in got

        # Renamed, roots typed as they were (the browser's CRLF): nothing to tell the session.
        await edit_server(
            user, server.pk, {**form, "name": "everything renamed", "roots": "file:///tmp/first First\r\n"}
        )
        # New roots: the server is told, asks again, and says how many it got.
        await edit_server(
            user,
            server.pk,
            {**form, "name": "everything renamed", "roots": "file:///tmp/second Second\r\nfile:///tmp/third"},
        )
        await receive_until(comm, "Roots updated: 2 root(s) received from client")
        await send(comm, action="call_tool", name="get-roots-list")
        got = await receive_fragment(comm, *result)
        assert "file:///tmp/second" in got and "file:///tmp/third" in got and "file:///tmp/first" not in got
    finally:
        await comm.disconnect()
        await stop_all()
    rows = await events(session.pk)
    changed = [
        i
        for i, r in enumerate(rows)
        if r["dir"] == "send" and (r.get("message") or {}).get("method") == "notifications/roots/list_changed"
    ]
    assert len(changed) == 1, f"{len(changed)} notifications/roots/list_changed sent; one save changed the roots"
    answers = [
        (i, r["message"]["result"]["roots"])
        for i, r in enumerate(rows)
        if r["dir"] == "send"
        and isinstance((r.get("message") or {}).get("result"), dict)
        and "roots" in r["message"]["result"]
    ]
    assert [a for i, a in answers if i < changed[0]] and all(a == first for i, a in answers if i < changed[0])
    assert [a for i, a in answers if i > changed[0]] == [
        [{"uri": "file:///tmp/second", "name": "Second"}, {"uri": "file:///tmp/third"}]
    ]


@pytest.mark.django_db(transaction=True)
async def test_roots_come_from_the_servers_settings_without_asking():
    """Against server-everything (roots edited on the server page: the test above)."""
    roots = [{"uri": "file:///tmp/first", "name": "First"}]
    async with live_tab(
        'id="catalogue"', ">get-roots-list<", ">simulate-research-query<", **everything_server(roots=roots)
    ) as (_, session, comm):
        await send(comm, action="call_tool", name="get-roots-list")
        got = await receive_fragment(comm, 'aria-label="Result"', "<strong>tools/call</strong> get-roots-list")
        assert "file:///tmp/first" in got
    rows = await events(session.pk)
    answers = [
        r["message"]["result"]["roots"]
        for r in rows
        if r["dir"] == "send"
        and isinstance((r.get("message") or {}).get("result"), dict)
        and "roots" in r["message"]["result"]
    ]
    assert answers and all(a == roots for a in answers)
