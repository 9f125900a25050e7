"""The scale-out layer (`RedisInboxChannelLayer`) on a real Redis: two layers stand for two
processes (each has its own client prefix, as each process does). A message between channels of
one process is in the receiver's inbox when its send returns, without Redis; what crosses
processes goes through Redis as channels_redis sends it, both ways; a group's members are Redis's."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from channels.exceptions import ChannelFull

from playground.sessions.live.layers import RedisInboxChannelLayer
from tests.services import REDIS

pytestmark = pytest.mark.services("redis")

REDIS_DB = 12


@pytest.fixture
async def processes() -> AsyncIterator[tuple[RedisInboxChannelLayer, RedisInboxChannelLayer]]:
    """Two layers on one Redis prefix of the test's own (removed after)."""
    config = {"hosts": [f"redis://{REDIS[0]}:{REDIS[1]}/{REDIS_DB}"], "prefix": f"inboxes-{secrets.token_hex(4)}"}
    a, b = RedisInboxChannelLayer(**config, capacity=3), RedisInboxChannelLayer(**config, capacity=3)
    try:
        yield a, b
    finally:
        for layer in (a, b):
            for channel in list(layer.inboxes):
                layer.detach(channel)
        await a.flush()
        await a.close_pools()
        await b.close_pools()


async def test_within_a_process_a_message_is_in_the_inbox_when_its_send_returns(processes):
    a, b = processes
    tab, worker = await a.new_channel(), await a.new_channel()
    inbox = a.attach(tab)
    far = await b.new_channel()  # a tab of the other process, nothing attached
    for channel in (tab, far):
        await a.group_add("session.1", channel)
    message = {"type": "session.result", "result": {"content": [{"text": "hi"}], "pair": (1, [2])}}
    await a.group_send("session.1", message)
    got = inbox.get_nowait()  # (through Redis, only a pump's blocking pop, turns of the loop later, has it)
    assert got == message and got is not message
    got["result"]["content"][0]["text"] = "changed"  # the receiver's own copy
    assert message["result"]["content"][0]["text"] == "hi"
    far_got = await asyncio.wait_for(b.receive(far), 10)  # the other process's member: through Redis
    assert far_got["result"]["content"][0]["text"] == "hi"
    assert far_got["result"]["pair"] == [1, [2]]  # (msgpack: a tuple comes back a list)
    assert inbox.empty()  # and the local member got it once

    worker_inbox = a.attach(worker)
    await a.send(worker, {"type": "command", "command": "ping"})
    assert worker_inbox.get_nowait() == {"type": "command", "command": "ping"}


async def test_what_another_process_sends_reaches_the_inbox_through_redis(processes):
    a, b = processes
    tab = await a.new_channel()
    inbox = a.attach(tab)
    await b.group_add("session.2", tab)
    await b.send(tab, {"type": "direct", "n": 1})
    await b.group_send("session.2", {"type": "grouped", "n": 2})  # b has no inbox: channels_redis's own
    got = [await asyncio.wait_for(inbox.get(), 10) for _ in range(2)]
    assert got == [{"type": "direct", "n": 1}, {"type": "grouped", "n": 2}]

    a.detach(tab)  # its pump stops: what comes later waits in Redis for a receiver
    await b.send(tab, {"type": "after", "n": 3})
    assert await asyncio.wait_for(a.receive(tab), 10) == {"type": "after", "n": 3}
    assert inbox.empty()


async def test_a_group_of_other_processes_only_and_a_full_inbox(processes):
    a, b = processes
    far, near = await b.new_channel(), await a.new_channel()
    inbox = a.attach(near)
    await a.group_add("session.3", far)
    await a.group_send("session.3", {"type": "only far"})  # members all elsewhere: channels_redis's group send
    assert await asyncio.wait_for(b.receive(far), 10) == {"type": "only far"}
    for n in range(3):
        await a.send(near, {"type": "fill", "n": n})
    with pytest.raises(ChannelFull):
        await a.send(near, {"type": "one too many"})
    await a.group_add("session.3", near)
    await a.group_send("session.3", {"type": "to both"})  # the full one is skipped, the other gets it
    assert await asyncio.wait_for(b.receive(far), 10) == {"type": "to both"}
    assert [inbox.get_nowait()["n"] for _ in range(3)] == [0, 1, 2] and inbox.empty()
