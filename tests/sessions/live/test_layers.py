"""The embedded channel layer keeps the stock layer's contract with a direct group_send."""

from __future__ import annotations

from playground.sessions.live.layers import DirectInMemoryChannelLayer


async def test_every_member_gets_its_own_copy_and_a_full_one_does_not_stop_the_others():
    layer = DirectInMemoryChannelLayer(capacity=1)
    a, b, c = [await layer.new_channel("tab.") for _ in range(3)]
    for channel in (a, b, c):
        await layer.group_add("session.1", channel)
    await layer.send(b, {"type": "filler"})  # b is full now
    message = {"type": "session.result", "result": {"content": [{"text": "hi"}]}}
    await layer.group_send("session.1", message)
    got_a, got_c = await layer.receive(a), await layer.receive(c)
    assert got_a == got_c == message
    got_a["result"]["content"][0]["text"] = "changed"  # a receiver's dict is its own
    assert message["result"]["content"][0]["text"] == "hi" and got_c["result"]["content"][0]["text"] == "hi"
    assert (await layer.receive(b)) == {"type": "filler"}  # the full member dropped the group message
    await layer.group_discard("session.1", a)
    await layer.group_send("session.1", {"type": "later"})
    assert (await layer.receive(c)) == {"type": "later"}
