"""Auto refresh: list_changed refreshes the catalogue, until turned off (alone; and with a listen
stream of the SDK peer)."""

from __future__ import annotations

import pytest

from playground.sessions.features import BY_NAME
from tests.sessions.fakes import FakeClient, FakeSession, FakeTab
from tests.sessions.helpers import events, live_tab, receive_until, send


async def test_auto_refresh_refreshes_on_list_changed_until_turned_off():
    session = FakeSession(FakeClient())
    auto = session.add("auto_refresh")
    auto.on_notification({"method": "notifications/tools/list_changed"})
    await session.settle()
    await auto.handle(await BY_NAME["auto_refresh"].command("auto_refresh", {}, FakeTab()))
    auto.on_notification({"method": "notifications/tools/list_changed"})
    await session.settle()
    assert session.refreshes == 1 == session.announced_refreshes and not auto.on


@pytest.mark.django_db(transaction=True)
async def test_with_auto_refresh_turned_off_list_changed_is_shown_but_refreshes_nothing():
    """Against the SDK peer, list_changed coming through a listen stream."""
    async with live_tab('id="catalogue"', ">greet<", era="modern") as (_, session, comm):
        await send(comm, action="listen", toolsListChanged="1", uris="peer://greeting\npeer://nothing")
        await receive_until(comm, "<strong>open</strong>")
        await send(comm, action="call_tool", name="touch", **{"args.uri": "peer://greeting"})
        await receive_until(
            comm,
            'notifications/resources/updated</code> <span class="tag"',
            "notifications/tools/list_changed</code>",
            'data-method="tools/list"',
        )  # list_changed refreshed the list
        # With the toggle off, list_changed is shown but refreshes nothing.
        await send(comm, action="auto_refresh")
        await receive_until(
            comm,
            '<div id="auto-refresh-state" hx-swap-oob="innerHTML"><label><input type="checkbox" '
            'name="on" value="1" data-auto-refresh> ',
        )
        await send(comm, action="call_tool", name="touch", **{"args.uri": "peer://greeting"})
        await receive_until(comm, "<strong>tools/call</strong> touch")
        await send(comm, action="call_tool", name="echo", **{"args.text": "after"})
        await receive_until(comm, "<strong>tools/call</strong> echo")
    rows = await events(session.pk)
    touched = [
        i
        for i, r in enumerate(rows)
        if r["dir"] == "recv" and (r.get("message") or {}).get("method") == "notifications/tools/list_changed"
    ]
    assert len(touched) == 2
    lists = [
        i for i, r in enumerate(rows) if r["dir"] == "send" and (r.get("message") or {}).get("method") == "tools/list"
    ]
    assert any(touched[0] < i < touched[1] for i in lists) and not any(i > touched[1] for i in lists)
