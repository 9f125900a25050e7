"""The sessions a chat borrows: one live session per ticked server, started as the session page
starts one, its catalogue awaited, and the model's tool calls sent to its worker as the page's
Call is (live/calls.py: the transcript, timeouts, progress and Cancel are the session's).

The chat listens to each session's group on a channel of its own (as a tab does), so a worker
in another process works the same; the results come back as `session.result` by call id.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from django.utils import timezone

from playground.channel_layer import channel_layer
from playground.registry.models import Server
from playground.sessions.live import workers
from playground.sessions.live.worker import start_session
from playground.sessions.protocol import group_name
from playground.transcripts.models import Session

from .toolset import ChatTool

CATALOGUE_WAIT = 60.0  # seconds a session may take to connect and list its tools
ENDED = (Session.Status.ENDED, Session.Status.FAILED)
OnProgress = Callable[[str, dict[str, Any]], Awaitable[None]]
# (session id, the server_requests feature's event: a request waiting, {"key", "done", "answer"},
# or, after a snapshot, {"waiting": [its keys]})
OnServerRequest = Callable[[int, dict[str, Any]], Awaitable[None]]


class SessionFailed(Exception):
    """A ticked server's session did not come up; the message says why."""


class Borrowed:
    """The live sessions of one chat page (by server pk), and the calls under way in them."""

    def __init__(self, on_progress: OnProgress | None = None, on_request: OnServerRequest | None = None) -> None:
        self.layer = channel_layer()
        self.channels: dict[int, str] = {}  # session id -> the channel its group reaches the chat on
        self.sessions: dict[int, int] = {}  # server pk -> session id
        self.catalogues: dict[int, asyncio.Future[dict[str, Any]]] = {}  # session id -> its catalogue
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}  # call id -> its outcome
        self.cards: dict[str, str] = {}  # call id -> the chat's card
        self.on_progress = on_progress
        self.on_request = on_request
        self._prefix = "chat-" + secrets.token_hex(4) + "-"
        self._ids = itertools.count(1)
        self._listeners: list[asyncio.Task[None]] = []
        self.started: set[int] = set()  # the sessions this page started (the others: attached)

    async def _listen(self, session_id: int, channel: str) -> None:
        """One session's group, on a channel of its own (its messages do not all say whose they are)."""
        while True:
            message = await self.layer.receive(channel)
            kind = message.get("type")
            future = self.catalogues.get(session_id)
            if kind in ("session.catalogue", "session.snapshot") and message.get("catalogue"):
                if future is not None and not future.done():
                    future.set_result(message["catalogue"])
            if kind == "session.snapshot" and self.on_request:
                # What the session waits on now (a reloaded or second tab's cards), then the keys
                # it waits on: a card saved as waiting whose key is not among them was answered.
                waiting = [
                    e.get("event") or {}
                    for e in message.get("features") or []
                    if isinstance(e, dict) and e.get("feature") == "server_requests"
                ]
                for event in waiting:
                    await self.on_request(session_id, event)
                await self.on_request(session_id, {"waiting": [str(e.get("key")) for e in waiting]})
            elif kind == "session.result" and str(message.get("call_id")) in self.pending:
                done = self.pending[str(message["call_id"])]
                if not done.done():
                    done.set_result(message)
            elif kind == "session.feature" and message.get("feature") == "server_requests" and self.on_request:
                await self.on_request(session_id, message.get("event") or {})
            elif kind == "session.progress" and str(message.get("call_id")) in self.cards and self.on_progress:
                await self.on_progress(self.cards[str(message["call_id"])], message.get("progress") or {})

    async def open(self, servers: list[Server], owner: Any) -> list[tuple[str, int, list[dict[str, Any]]]]:
        """Each server's live session (reused while its worker lives here), once it has listed
        its tools: (server name, session id, tools)."""
        out = []
        for server in servers:
            session_id = self.sessions.get(server.pk)
            if session_id is None or session_id not in workers.WORKERS:
                session_id = await self._start(server, owner)
            # A chat watches its sessions as a tab does: not ended as unwatched (PLAYGROUND_IDLE_MINUTES).
            await database_sync_to_async(Session.objects.filter(pk=session_id).update)(viewed_at=timezone.now())
            catalogue = await self._catalogue(session_id, server.name)
            tools = [t for t in catalogue.get("tools") or [] if isinstance(t, dict)]
            out.append((server.name, session_id, tools))
        return out

    async def _start(self, server: Server, owner: Any) -> int:
        session = await start_session(server, owner)
        self.started.add(session.pk)
        await self.attach(server.pk, session.pk)
        return session.pk

    async def attach(self, server_pk: int, session_id: int) -> None:
        """Listen to a session of the chat (started here, or by another tab of the chat that is
        still live): its group, then a snapshot of it (its catalogue, the requests it waits on)."""
        if session_id in self.channels:
            return
        self.sessions[server_pk] = session_id
        self.catalogues[session_id] = asyncio.get_running_loop().create_future()
        channel = self.channels[session_id] = await self.layer.new_channel()
        await self.layer.group_add(group_name(session_id), channel)
        loop = asyncio.get_running_loop()
        self._listeners.append(loop.create_task(self._listen(session_id, channel), name=f"chat-session-{session_id}"))
        worker = workers.WORKERS.get(session_id)
        if worker is not None:
            await self.layer.send(worker.channel, {"command": "sync", "reply_channel": channel})

    async def _catalogue(self, session_id: int, name: str) -> dict[str, Any]:
        future = self.catalogues[session_id]
        waiting = [future]
        try:
            async with asyncio.timeout(CATALOGUE_WAIT):
                while not future.done():
                    if session_id not in workers.WORKERS:
                        reason = await _end_reason(session_id)
                        raise SessionFailed(f"the session with {name} ended: {reason}")
                    await asyncio.wait(waiting, timeout=0.2)  # (polls the worker's life, not a sync)
        except TimeoutError as exc:
            raise SessionFailed(f"{name} listed no tools within {CATALOGUE_WAIT:g} s") from exc
        return future.result()

    async def call(self, tool: ChatTool, arguments: dict[str, Any], card_id: str) -> dict[str, Any]:
        """One tools/call through the session's worker; Stop (cancelling this) cancels it there."""
        worker = workers.WORKERS.get(tool.session_id)
        if worker is None:
            return {"error": {"message": f"the session with {tool.server} has ended"}}
        call_id = f"{self._prefix}{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[call_id] = future
        self.cards[call_id] = card_id
        command = {"command": "call_tool", "name": tool.tool.get("name"), "arguments": arguments, "call_id": call_id}
        try:
            await self.layer.send(worker.channel, command)
            return await future
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self.layer.send(worker.channel, {"command": "cancel", "call_id": call_id})
            raise
        finally:
            self.pending.pop(call_id, None)
            self.cards.pop(call_id, None)

    async def answer(self, session_id: int, command: dict[str, Any]) -> bool:
        """Answer a server's request in its session (the server_requests feature's `answer`)."""
        worker = workers.WORKERS.get(session_id)
        if worker is None:
            return False
        await self.layer.send(worker.channel, {"command": "answer", **command})
        return True

    def session_ids(self) -> list[int]:
        return list(self.sessions.values())

    async def close(self) -> None:
        """The page has gone: stop listening (the sessions end as unwatched ones do)."""
        for task in self._listeners:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        for session_id, channel in self.channels.items():
            with contextlib.suppress(Exception):
                await self.layer.group_discard(group_name(session_id), channel)


async def _end_reason(session_id: int) -> str:
    row = await database_sync_to_async(lambda: Session.objects.filter(pk=session_id).first())()
    return (row.end_reason if row is not None and row.end_reason else "no reason given") if row else "gone"
