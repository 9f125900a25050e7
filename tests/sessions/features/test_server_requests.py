"""Server requests: the person's cards (sampling, elicitation in form and URL modes), in a call's
input rounds too (alone; and against the SDK peer and server-everything)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from playground.sessions.features import BY_NAME
from playground.sessions.protocol import CURRENT_CALL
from tests.sessions.fakes import FakeClient, FakeSession, FakeTab
from tests.sessions.helpers import card_key, everything_server, live_tab, receive_until, send


async def test_a_server_request_in_an_input_round_names_its_call_and_the_answer_resolves_it():
    session = FakeSession(FakeClient(era="modern"))
    rounds, requests = session.add("input_rounds"), session.add("server_requests")
    CURRENT_CALL.set("c9")
    rounds.on_input_required("tools/call", 1, {"inputRequests": {"q": {}}, "requestState": "s" * 3000})
    asking = asyncio.create_task(
        requests.answer("elicitation/create", {"message": "<i>name?</i>", "requestedSchema": {"type": "object"}})
    )
    while not session.published:
        await asyncio.sleep(0)
    asked = session.published[0][1]
    assert asked["context"]["call_id"] == "c9" and asked["context"]["round"] == 1
    assert len(asked["context"]["request_state"]) == 2000 and asked["context"]["state_size"] == 3000
    tab = FakeTab()
    (card,) = BY_NAME["server_requests"].fragments(asked, tab)
    assert BY_NAME["server_requests"].fragments(asked, tab) == []  # once per tab
    assert "&lt;i&gt;name?&lt;/i&gt;" in card and "input_required round 1" in card
    command = await BY_NAME["server_requests"].command(
        "answer", {"key": asked["key"], "result": '{"action": "decline"}'}, tab
    )
    await requests.handle(command)
    assert await asking == {"action": "decline"}
    assert session.published[-1][1] == {"key": asked["key"], "done": True, "answer": "decline"}
    outcome: dict[str, Any] = {}
    rounds.on_call_end("c9", outcome)
    assert [r["round"] for r in outcome["rounds"]] == [1] and rounds.request_context() is None


@pytest.mark.django_db(transaction=True)
async def test_an_elicitation_is_a_card_whose_answer_finishes_the_call():
    """The server's elicitation becomes a card; the answer goes back and the call finishes."""
    async with live_tab('id="catalogue"', "peer://items/{item_id}") as (_, _session, comm):
        await send(comm, action="call_tool", name="ask_name")
        card = await receive_until(comm, 'aria-label="Server request"')
        assert 'name="elicit-' in card and ">name</label>" in card  # fields labelled by property name
        await send(
            comm,
            action="answer",
            key=card_key(card),
            result=json.dumps({"action": "accept", "content": {"name": "Ada"}}),
        )
        got = await receive_until(comm, "Hello, Ada!")
        assert f'id="server-request-{card_key(card)}" hx-swap-oob="delete"' in got


@pytest.mark.django_db(transaction=True)
async def test_a_url_elicitation_shows_the_whole_url_and_opens_nothing_before_the_person_accepts():
    """URL-mode elicitation (server-everything): the whole URL is shown, its host stressed, never
    opened before the person accepts; Accept opens it (http(s) only), here it is declined."""
    async with live_tab('id="catalogue"', ">get-roots-list<", ">simulate-research-query<", **everything_server()) as (
        _,
        _session,
        comm,
    ):
        await send(comm, action="call_tool", name="trigger-url-elicitation", **{"args.url": "https://example.org/ok"})
        card = await receive_until(comm, 'aria-label="Server request"')
        assert (
            '<span class="url-rest">https://</span><strong class="url-host">example.org</strong>'
            '<span class="url-rest">/ok</span>'
        ) in card
        assert "not opened automatically" in card and 'data-url="https://example.org/ok"' in card
        assert all(f">{b}</button>" in card for b in ("Accept", "Decline", "Cancel"))
        await send(comm, action="answer", key=card_key(card), result='{"action": "decline"}')
        await receive_until(comm, "User declined to open the URL")
