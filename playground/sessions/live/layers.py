"""The embedded channel layer: Channels' in-memory layer, with a direct `group_send` and inboxes.

- **group_send.** The stock one starts a task per member and gathers them with `as_completed`,
  for sends that never wait (`put_nowait` on a local queue): on the path of every call's Result
  that cost more than the copy of the message itself.
- **Inboxes: the in-process path.** With this layer everything lives in one process, so a receiver
  that runs its own loop (a tab's socket, a session's worker) `attach`es an inbox to its channel:
  a send puts the message straight into it. That skips the stock layer's per-message expiry sweep
  and `deepcopy`, and lets a tab read its page's frames and the layer's messages from one queue
  (`serve`) instead of Channels' `await_many_dispatch`, which makes a task and an `asyncio.wait`
  for every message. A page's call crosses this twice (its command to the worker, the Result to
  the tab): bench/README.md has what it saved.
- **Dispatched at once.** While a tab's reader waits with nothing queued, a message for it (the
  layer's, or a frame from its page) runs its handler in the sender's turn of the loop (`Inbox`),
  still one at a time and in order: the Result reaches the page a turn sooner, and the page's
  call reaches the worker (which starts it at once too: `SessionWorker.deliver`).

Messages are still copied per receiver (`copied`: dicts, lists and tuples rebuilt, immutable values
shared — what `deepcopy` gives for the JSON-like messages we send, at a fraction of its cost), so a
receiver never shares a dict with the sender or another receiver, as with Redis (which serializes).
A full inbox refuses as a full channel does (`ChannelFull`: a group's member is skipped; the
database is the truth).

- **Scale-out** (settings: REDIS_URL) is `channels_redis`, with the same inboxes for the channels
  of this process (`RedisInboxChannelLayer`): a send to one of them, or a group's member that is
  one, is put in its inbox instead of going to Redis and back; the group's members are still
  Redis's to know (one pipelined round trip), and what other processes send comes through Redis,
  taken off it by a pump per inbox. A Result to a tab of the same process made ~8 Redis round
  trips (the group's send, the blocking pop that woke for it, the pop's backup cleaned): one now.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from copy import deepcopy
from typing import Any

from channels.exceptions import ChannelFull, StopConsumer
from channels.layers import InMemoryChannelLayer
from channels_redis.core import RedisChannelLayer

log = logging.getLogger(__name__)

Message = dict[str, Any]
Dispatch = Callable[[Message], Coroutine[Any, Any, None]]


def copied(value: Any) -> Any:
    """A copy of a message as `deepcopy` makes it, for the values messages hold: dicts, lists and
    tuples rebuilt, str/int/float/bool/None shared (immutable); anything else deep-copied."""
    kind = type(value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is list:
        return [copied(item) for item in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is tuple:
        return tuple(copied(item) for item in value)
    return deepcopy(value)


class Inbox(asyncio.Queue[Any]):
    """A receiver's queue on this layer. While its reader (`serve`) waits with nothing queued,
    a message is dispatched at once (`offer`), in the sender's turn of the loop, rather than
    woken up for on the next: a call's Result reaches the page a turn sooner, and a page's
    frame its handler. One message is dispatched at a time, in the order they came, as before."""

    def __init__(self) -> None:
        super().__init__()
        # The reader's (it attaches the inbox itself): a dispatch at once runs in a copy of it.
        self.context = contextvars.copy_context()
        self._idle: Dispatch | None = None  # the reader's dispatch, while it idles
        self._in_get = False
        self._running: asyncio.Task[None] | None = None  # a message dispatched at once, not done yet

    def offer(self, message: Any) -> None:
        """Dispatch `message` now if the reader idles, else queue it."""
        dispatch = self._idle
        if dispatch is None or self._running is not None or not self.empty():
            self.put_nowait(message)
            return
        self._idle = None  # (busy: what this dispatch sends itself waits its turn)
        task = asyncio.Task(
            dispatch(message), loop=asyncio.get_running_loop(), context=self.context.copy(), eager_start=True
        )
        if task.done():
            self._ended(dispatch, task)
        else:
            self._running = task
            task.add_done_callback(functools.partial(self._ended, dispatch))

    def _ended(self, dispatch: Dispatch, task: asyncio.Task[None]) -> None:
        self._running = None
        error = None if task.cancelled() else task.exception()
        if error is not None:
            self.put_nowait(_PageGone(error))  # the reader raises it, as if it had dispatched it
        elif self._in_get and self.empty():
            self._idle = dispatch  # (the reader still waits with nothing queued)

    async def next(self, dispatch: Dispatch) -> Any:
        """The reader's next message, once what was dispatched at once is done; while it waits
        with nothing queued, messages are dispatched at once with `dispatch`."""
        await self._until_dispatched()
        if self.empty():
            self._idle = dispatch
        self._in_get = True
        try:
            message = await self.get()
        finally:
            self._in_get = False
            self._idle = None
        await self._until_dispatched()
        return message

    @property
    def idle(self) -> bool:
        """Whether its reader waits with nothing queued (the next message is dispatched at once)."""
        return self._idle is not None

    async def _until_dispatched(self) -> None:
        while self._running is not None:
            await asyncio.wait([self._running])

    def stop(self) -> None:
        """The reader ends: a message being dispatched at once ends with it."""
        self._idle = None
        if self._running is not None:
            self._running.cancel()


class InboxLayer:
    """A channel layer whose channels of this process can have an inbox (`attach`): what is sent
    to one of them from this process is put in it, copied, within the send."""

    inboxes: dict[str, Inbox]
    get_capacity: Callable[[str], int]  # (the layer's own: BaseChannelLayer's)

    def attach(self, channel: str) -> Inbox:
        """From now on `channel`'s messages go into the returned queue, until `detach`."""
        raise NotImplementedError

    def detach(self, channel: str) -> None:
        raise NotImplementedError

    async def send(self, channel: str, message: Message) -> None:
        inbox = self.inboxes.get(channel)
        if inbox is None:
            await super().send(channel, message)  # type: ignore[misc]  # (the layer's own, after this in the MRO)
            return
        assert isinstance(message, dict), "message is not a dict"
        if inbox.qsize() >= self.get_capacity(channel):
            raise ChannelFull(channel)
        inbox.offer(copied(message))

    async def receive(self, channel: str) -> Message:
        inbox = self.inboxes.get(channel)
        if inbox is None:
            message: Message = await super().receive(channel)  # type: ignore[misc]
            return message
        message = await inbox.get()
        return message


class DirectInMemoryChannelLayer(InboxLayer, InMemoryChannelLayer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inboxes = {}

    def attach(self, channel: str) -> Inbox:
        """(Those already waiting on the channel first.)"""
        inbox = Inbox()
        waiting = self.channels.pop(channel, None)
        now = time.time()
        while waiting is not None and not waiting.empty():
            expires, message = waiting.get_nowait()
            if expires >= now:
                inbox.put_nowait(message)
        self.inboxes[channel] = inbox
        return inbox

    def detach(self, channel: str) -> None:
        self.inboxes.pop(channel, None)

    async def group_send(self, group: str, message: Message) -> None:
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()  # type: ignore[attr-defined]  # (types-channels lists only its public methods)
        for channel in list(self.groups.get(group, {})):
            try:
                await self.send(channel, message)
            except ChannelFull:
                pass  # as the stock layer: a full channel drops (the database is the truth)


class RedisInboxChannelLayer(InboxLayer, RedisChannelLayer):
    """`channels_redis`, with inboxes for the channels of this process (the module's docstring).
    Everything that crosses processes is `channels_redis`'s own: groups, their expiry, what
    another process sends (a pump per inbox receives it through Redis), channels nothing attached."""

    RETRY_SECONDS = 1.0  # before a pump receives again after Redis failed it

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inboxes = {}
        self._pumps: dict[str, asyncio.Task[None]] = {}

    def attach(self, channel: str) -> Inbox:
        """(A channel of this process: what other processes send it arrives through its pump.)"""
        inbox = Inbox()
        self.inboxes[channel] = inbox
        self._pumps[channel] = asyncio.get_running_loop().create_task(
            self._pump(channel, inbox), name=f"pump {channel}"
        )
        return inbox

    def detach(self, channel: str) -> None:
        self.inboxes.pop(channel, None)
        pump = self._pumps.pop(channel, None)
        if pump is not None:
            pump.cancel()

    async def _pump(self, channel: str, inbox: Inbox) -> None:
        """What reaches `channel` through Redis, into its inbox, as long as it is attached. Past
        the channel's capacity a message is dropped, as channels_redis drops past it."""
        while True:
            try:
                message = await RedisChannelLayer.receive(self, channel)  # (InboxLayer's would read the inbox)
            except Exception:
                log.exception("receiving %s from Redis failed; again in %s s", channel, self.RETRY_SECONDS)
                await asyncio.sleep(self.RETRY_SECONDS)
                continue
            if inbox.qsize() >= self.get_capacity(channel):
                log.warning("%s is full: a message from another process dropped", channel)
                continue
            inbox.offer(message)

    async def group_send(self, group: str, message: Message) -> None:
        """The group's members from Redis; those with an inbox here get the message in it, the
        others through Redis (all of them: channels_redis's own group send, which asks again)."""
        if not self.inboxes:
            await super().group_send(group, message)
            return
        assert self.require_valid_group_name(group), "Group name not valid"
        key = self._group_key(group)
        async with self.connection(self.consistent_hash(group)).pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(key, min=0, max=int(time.time()) - self.group_expiry)
            pipe.zrange(key, 0, -1)
            _, members = await pipe.execute()
        channels = [member.decode("utf8") for member in members]
        if not any(channel in self.inboxes for channel in channels):
            await super().group_send(group, message)
            return
        for channel in channels:
            try:
                await self.send(channel, message)
            except ChannelFull:
                pass  # as channels_redis: a full channel is skipped (the database is the truth)


class _PageGone:
    """Put in a tab's inbox when reading its page's frames failed, or a message dispatched at
    once raised: the dispatch loop raises it, as if it had met it itself."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def serve(
    layer: InboxLayer,
    channel: str,
    receive: Callable[[], Awaitable[Message]],
    dispatch: Dispatch,
) -> None:
    """A consumer's loop on this layer (in place of Channels' `await_many_dispatch`): its page's
    frames (ASGI `receive`) and its channel's messages go into one inbox, dispatched one at a
    time in the order they came, until a handler stops the consumer."""
    inbox = layer.attach(channel)

    async def from_page() -> None:
        while True:
            inbox.offer(await receive())

    def page_done(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            inbox.put_nowait(_PageGone(task.exception() or RuntimeError("the page's receive ended")))

    reading = asyncio.ensure_future(from_page())
    reading.add_done_callback(page_done)
    try:
        while True:
            message = await inbox.next(dispatch)
            if isinstance(message, _PageGone):
                raise message.error
            await dispatch(message)
    except StopConsumer:
        pass
    finally:
        layer.detach(channel)
        reading.cancel()
        inbox.stop()
        with contextlib.suppress(BaseException):
            await reading
