"""The embedded channel layer keeps the stock layer's contract with a direct group_send."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.exceptions import ChannelFull, StopConsumer

from playground.sessions.live.layers import DirectInMemoryChannelLayer, serve


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


async def test_an_attached_inbox_gets_what_waited_first_then_copies_and_refuses_when_full():
    layer = DirectInMemoryChannelLayer(capacity=2)
    tab, other = await layer.new_channel(), await layer.new_channel()
    for channel in (tab, other):
        await layer.group_add("session.1", channel)
    await layer.send(tab, {"type": "early"})  # before the receiver attached: on the stock queue
    inbox = layer.attach(tab)
    message = {"type": "session.result", "result": {"content": [{"text": "hi"}], "pair": (1, [2])}}
    await layer.group_send("session.1", message)
    assert inbox.get_nowait() == {"type": "early"}
    got = inbox.get_nowait()
    assert got == message and got is not message
    got["result"]["content"][0]["text"] = "changed"
    got["result"]["pair"][1].append(3)  # nested in a tuple: rebuilt as deepcopy would
    assert message == {"type": "session.result", "result": {"content": [{"text": "hi"}], "pair": (1, [2])}}
    assert (await layer.receive(other))["result"]["content"][0]["text"] == "hi"  # the stock queue's own copy
    await layer.send(tab, {"type": "one"})
    await layer.send(tab, {"type": "two"})
    with pytest.raises(ChannelFull):
        await layer.send(tab, {"type": "three"})
    await layer.group_send("session.1", {"type": "skipped by the full inbox"})  # no error
    assert [inbox.get_nowait()["type"] for _ in range(2)] == ["one", "two"] and inbox.empty()
    await layer.send(tab, {"type": "read"})
    assert (await layer.receive(tab)) == {"type": "read"}
    layer.detach(tab)
    await layer.send(tab, {"type": "queued again"})
    assert inbox.empty() and (await layer.receive(tab)) == {"type": "queued again"}


async def test_serve_dispatches_page_frames_and_layer_messages_one_at_a_time_in_the_order_they_came():
    layer = DirectInMemoryChannelLayer()
    channel = await layer.new_channel()
    page: asyncio.Queue[dict] = asyncio.Queue()
    seen: list[str] = []
    replied = asyncio.Event()

    async def dispatch(message: dict) -> None:
        seen.append(message["type"])
        if message["type"] == "websocket.receive":
            await layer.send(channel, {"type": "reply"})
            for _ in range(5):  # the reply waits for this handler to end
                await asyncio.sleep(0)
            seen.append("handled")
        elif message["type"] == "reply":
            replied.set()
        elif message["type"] == "websocket.disconnect":
            raise StopConsumer

    serving = asyncio.create_task(serve(layer, channel, page.get, dispatch))
    for _ in range(2):
        replied.clear()
        page.put_nowait({"type": "websocket.receive"})
        await asyncio.wait_for(replied.wait(), 5)
    page.put_nowait({"type": "websocket.disconnect"})
    await asyncio.wait_for(serving, 5)
    assert seen == ["websocket.receive", "handled", "reply"] * 2 + ["websocket.disconnect"]
    assert channel not in layer.inboxes  # detached: later messages wait on the stock queue


async def test_serve_raises_what_reading_the_page_raised():
    layer = DirectInMemoryChannelLayer()

    async def broken() -> dict:
        raise ConnectionResetError("gone")

    async def dispatch(message: dict) -> None:
        raise AssertionError("nothing to dispatch")

    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(serve(layer, await layer.new_channel(), broken, dispatch), 5)


async def serving_idle(
    layer: DirectInMemoryChannelLayer, channel: str, page: asyncio.Queue[dict], dispatch: Any
) -> asyncio.Task[None]:
    """`serve` started, once its reader waits with nothing queued."""
    serving = asyncio.create_task(serve(layer, channel, page.get, dispatch))
    while channel not in layer.inboxes or not layer.inboxes[channel].idle:
        await asyncio.sleep(0)
    return serving


async def test_a_message_to_an_idle_reader_is_dispatched_within_its_send_and_one_to_a_busy_one_waits():
    """The in-process path's turn less: with the reader waiting and nothing queued, a send runs
    the handler at once (before the send returns); while that handler still runs, the next
    message waits for it, and so does the page's next frame."""
    layer = DirectInMemoryChannelLayer()
    channel = await layer.new_channel()
    page: asyncio.Queue[dict] = asyncio.Queue()
    seen: list[str] = []
    release = asyncio.Event()

    async def dispatch(message: dict) -> None:
        seen.append(message["type"])
        if message["type"] == "slow":
            await release.wait()
            seen.append("slow done")
        elif message["type"] == "websocket.disconnect":
            raise StopConsumer

    serving = await serving_idle(layer, channel, page, dispatch)
    await layer.send(channel, {"type": "first"})
    assert seen == ["first"]  # dispatched within the send
    await layer.send(channel, {"type": "slow"})
    assert seen == ["first", "slow"]
    await layer.send(channel, {"type": "after"})
    page.put_nowait({"type": "websocket.receive"})
    while not page.empty():  # the page's frame read (and offered in the same step: queued behind "after")
        await asyncio.sleep(0)
    assert seen == ["first", "slow"]  # both wait for the slow one
    release.set()
    page.put_nowait({"type": "websocket.disconnect"})
    await asyncio.wait_for(serving, 5)
    assert seen == ["first", "slow", "slow done", "after", "websocket.receive", "websocket.disconnect"]


async def test_serve_raises_what_a_message_dispatched_at_once_raised():
    layer = DirectInMemoryChannelLayer()
    channel = await layer.new_channel()
    page: asyncio.Queue[dict] = asyncio.Queue()

    async def dispatch(message: dict) -> None:
        raise KeyError(message["type"])

    serving = await serving_idle(layer, channel, page, dispatch)
    await layer.send(channel, {"type": "broken"})  # the sender is not the one told
    with pytest.raises(KeyError, match="broken"):
        await asyncio.wait_for(serving, 5)
