"""input_required rounds (modern era) through consumer ↔ worker, against the SDK peer: the round
is the server-request card, and the call is retried with the answer and the request state."""

from __future__ import annotations

import json

import pytest

from tests.sessions.helpers import card_key, events, live_tab, receive_until, send, sent

pytestmark = pytest.mark.django_db(transaction=True)


async def test_an_input_required_round_is_a_card_and_the_call_is_retried_with_its_answer():
    async with live_tab('id="catalogue"', ">greet<", era="modern") as (_, session, comm):
        # input_required: the same card, marked as round 1 with the requestState read-only.
        await send(comm, action="call_tool", name="greet")
        card = await receive_until(comm, 'aria-label="Server request"')
        assert "input_required round 1" in card and 'aria-label="requestState"' in card
        await send(
            comm,
            action="answer",
            key=card_key(card),
            result=json.dumps({"action": "accept", "content": {"name": "Grace"}}),
        )
        got = await receive_until(comm, "Hello, Grace!")
        assert 'aria-label="Input rounds"' in got and "input_required round 1" in got
    rows = await events(session.pk)
    calls = [m for m in sent(rows, "tools/call") if m["params"]["name"] == "greet"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
    first_result = next(
        r["message"]["result"]
        for r in rows
        if r["dir"] == "recv" and (r.get("message") or {}).get("id") == calls[0]["id"]
    )
    assert calls[1]["params"]["requestState"] == first_result["requestState"]
    assert list(calls[1]["params"]["inputResponses"].values()) == [{"action": "accept", "content": {"name": "Grace"}}]
