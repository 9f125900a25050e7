"""Completion: suggestions for the asking tab.

The feature alone, with a fake SessionContext and client (tests/sessions/fakes.py); against real
servers where it says so."""
from __future__ import annotations

import asyncio
from typing import Any


from playground.sessions.features import BY_NAME
from tests.sessions.fakes import FakeClient, FakeSession, FakeTab


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
