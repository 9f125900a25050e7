"""Completion: suggestions for the asking tab only (alone; and from server-everything, narrowed by
the context)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from playground.sessions.features import BY_NAME
from tests.sessions.fakes import FakeClient, FakeSession, FakeTab
from tests.sessions.helpers import everything_server, live_tab, receive_until, send


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
    (fragment,) = BY_NAME["completion"].fragments(session.replies[0][2], tab)
    assert 'id="f1"' in fragment and "Alan" in fragment and "stale" not in fragment


@pytest.mark.django_db(transaction=True)
async def test_completion_suggests_to_the_asking_tab_narrowed_by_the_context():
    """Against server-everything: only this tab gets the suggestions; context.arguments narrows
    the second field."""
    async with live_tab('id="catalogue"', ">get-roots-list<", ">simulate-research-query<", **everything_server()) as (
        _,
        _session,
        comm,
    ):
        await send(
            comm,
            action="complete",
            ref_type="ref/prompt",
            ref="completable-prompt",
            argument="department",
            value="E",
            context="{}",
            target="sugg-parg-1",
        )
        got = await receive_until(comm, 'id="sugg-parg-1"')
        assert 'data-suggest="Engineering"' in got and "Sales" not in got
        await send(
            comm,
            action="complete",
            ref_type="ref/prompt",
            ref="completable-prompt",
            argument="name",
            value="",
            context=json.dumps({"department": "Engineering"}),
            target="sugg-parg-2",
        )
        got = await receive_until(comm, 'id="sugg-parg-2"')
        assert all(f'data-suggest="{n}"' in got for n in ("Alice", "Bob", "Charlie"))
