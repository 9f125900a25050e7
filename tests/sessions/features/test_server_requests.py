"""Server requests: the person's cards (sampling, elicitation), in a call's input rounds too.

The feature alone, with a fake SessionContext and client (tests/sessions/fakes.py); against real
servers where it says so."""
from __future__ import annotations

import asyncio
from typing import Any


from playground.sessions.features import BY_NAME
from playground.sessions.protocol import CURRENT_CALL
from tests.sessions.fakes import FakeClient, FakeSession, FakeTab


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
