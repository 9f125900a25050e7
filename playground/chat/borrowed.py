"""The sessions a chat borrows: one live session per ticked server, started as the session page
starts one, its catalogue awaited, and the model's tool calls sent to its worker as the page's
Call is (live/calls.py: the transcript, timeouts, progress and Cancel are the session's).

A chat follows each session as a tab does (live/session_socket.py), so a worker in another
process (PostgreSQL and Redis: docs/architecture.md, "Processes and scale-out") works the same:
its worker channel comes from the Session row, its end from the group's `session.state`, its
latest catalogue from `session.catalogue`, the results as `session.result` by call id; and a
watchdog (live/watchdog.py) keeps the session shown while the page is open, and ends it if its
worker's process died.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from channels.db import database_sync_to_async

from playground.channel_layer import channel_layer
from playground.registry.models import Server
from playground.sessions.live.durability import reap_dead_sessions
from playground.sessions.live.watchdog import announce_end, watch_worker
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


@dataclass
class Followed:
    """One session the chat follows: what its group has said so far."""

    server_pk: int
    channel: str  # the chat's channel on the session's group
    worker: str = ""  # its worker's channel; "" once the session has ended
    catalogue: dict[str, Any] | None = None  # the latest the session listed
    end_reason: str = ""
    listed: asyncio.Event = field(default_factory=asyncio.Event)  # a catalogue, or the end
    tasks: list[asyncio.Task[None]] = field(default_factory=list)  # its listener, its watchdog

    def ended(self, reason: str) -> None:
        self.worker, self.end_reason = "", reason or "no reason given"
        self.listed.set()


class Borrowed:
    """The live sessions of one chat page (by server pk), and the calls under way in them."""

    def __init__(self, on_progress: OnProgress | None = None, on_request: OnServerRequest | None = None) -> None:
        self.layer = channel_layer()
        self.followed: dict[int, Followed] = {}  # session id -> what the chat knows of it
        self.sessions: dict[int, int] = {}  # server pk -> session id
        self.pending: dict[str, tuple[int, asyncio.Future[dict[str, Any]]]] = {}  # call id -> (session, outcome)
        self.cards: dict[str, str] = {}  # call id -> the chat's card
        self.on_progress = on_progress
        self.on_request = on_request
        self._prefix = "chat-" + secrets.token_hex(4) + "-"
        self._ids = itertools.count(1)
        self.started: set[int] = set()  # the sessions this page started (the others: attached)

    def live(self, session_id: int) -> bool:
        followed = self.followed.get(session_id)
        return followed is not None and bool(followed.worker)

    async def _listen(self, session_id: int, followed: Followed) -> None:
        """One session's group, on a channel of its own (its messages do not all say whose they are)."""
        while True:
            message = await self.layer.receive(followed.channel)
            kind = message.get("type")
            if kind in ("session.catalogue", "session.snapshot") and message.get("catalogue"):
                followed.catalogue = message["catalogue"]
                followed.listed.set()
            if kind == "session.state" and (message.get("state") or {}).get("status") in ENDED:
                self._ended(session_id, followed, str(message["state"].get("end_reason") or ""))
            elif kind == "session.snapshot" and self.on_request:
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
                _, done = self.pending[str(message["call_id"])]
                if not done.done():
                    done.set_result(message)
            elif kind == "session.feature" and message.get("feature") == "server_requests" and self.on_request:
                await self.on_request(session_id, message.get("event") or {})
            elif kind == "session.progress" and str(message.get("call_id")) in self.cards and self.on_progress:
                await self.on_progress(self.cards[str(message["call_id"])], message.get("progress") or {})

    def _ended(self, session_id: int, followed: Followed, reason: str) -> None:
        """The session has ended: its calls still waiting get no answer now (its worker may have
        died with its process: nobody else would say so)."""
        followed.ended(reason)
        for owner, done in self.pending.values():
            if owner == session_id and not done.done():
                done.set_result({"error": {"message": f"the session has ended: {followed.end_reason}"}})

    async def open(self, servers: list[Server], owner: Any) -> list[tuple[str, int, list[dict[str, Any]]]]:
        """Each server's live session (reused while its worker lives, in any process), once it
        has listed its tools: (server name, session id, tools)."""
        out = []
        for server in servers:
            session_id = self.sessions.get(server.pk)
            if session_id is None or not self.live(session_id):
                session_id = await self._start(server, owner)
            out.append((server.name, session_id, await self._tools(session_id, server.name)))
        return out

    def tools(self, opened: list[tuple[str, int, Any]]) -> list[tuple[str, int, list[dict[str, Any]]]]:
        """The tools of `open`'s sessions as they list them now (a server's tools/list_changed
        makes its worker list them again, and the chat's next model request gets the new list)."""
        return [(name, session_id, self._listed_tools(session_id)) for name, session_id, _ in opened]

    def _listed_tools(self, session_id: int) -> list[dict[str, Any]]:
        catalogue = self.followed[session_id].catalogue or {}
        return [t for t in catalogue.get("tools") or [] if isinstance(t, dict)]

    async def _start(self, server: Server, owner: Any) -> int:
        session = await start_session(server, owner)
        self.started.add(session.pk)
        await self.attach(server.pk, session.pk)
        return session.pk

    async def attach(self, server_pk: int, session_id: int) -> None:
        """Follow a session of the chat (started here, or by another tab of the chat, in any
        process, and still live): its group, then its row (its worker's channel, or its end),
        then a snapshot of it from its worker (its catalogue, the requests it waits on)."""
        if session_id in self.followed:
            return
        self.sessions[server_pk] = session_id
        followed = self.followed[session_id] = Followed(server_pk, await self.layer.new_channel())
        await self.layer.group_add(group_name(session_id), followed.channel)  # (before the row: no end is missed)
        if await database_sync_to_async(reap_dead_sessions)(session_id=session_id):  # (its process died)
            await announce_end(self.layer, session_id)
        row = await database_sync_to_async(lambda: Session.objects.filter(pk=session_id).first())()
        if row is None or not row.is_live:
            followed.ended(row.end_reason if row is not None else "gone")
        else:
            followed.worker = row.worker_channel
            if row.catalogue:
                followed.catalogue = row.catalogue
                followed.listed.set()
        loop = asyncio.get_running_loop()
        followed.tasks.append(loop.create_task(self._listen(session_id, followed), name=f"chat-session-{session_id}"))
        if followed.worker:
            await self.layer.send(followed.worker, {"command": "sync", "reply_channel": followed.channel})
            # Shown while the page is open, as a tab shows it; and ended if its worker's process died.
            watchdog = watch_worker(self.layer, session_id, lambda: bool(followed.worker))
            followed.tasks.append(loop.create_task(watchdog, name=f"chat-watch-{session_id}"))

    async def _tools(self, session_id: int, name: str) -> list[dict[str, Any]]:
        followed = self.followed[session_id]
        try:
            async with asyncio.timeout(CATALOGUE_WAIT):
                await followed.listed.wait()
        except TimeoutError as exc:
            raise SessionFailed(f"{name} listed no tools within {CATALOGUE_WAIT:g} s") from exc
        if followed.catalogue is None:
            raise SessionFailed(f"the session with {name} ended: {followed.end_reason}")
        return self._listed_tools(session_id)

    async def call(self, tool: ChatTool, arguments: dict[str, Any], card_id: str) -> dict[str, Any]:
        """One tools/call through the session's worker; Stop (cancelling this) cancels it there."""
        worker = self._worker(tool.session_id)
        if not worker:
            return {"error": {"message": f"the session with {tool.server} has ended"}}
        call_id = f"{self._prefix}{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[call_id] = (tool.session_id, future)
        self.cards[call_id] = card_id
        command = {"command": "call_tool", "name": tool.tool.get("name"), "arguments": arguments, "call_id": call_id}
        try:
            await self.layer.send(worker, command)
            return await future
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self.layer.send(worker, {"command": "cancel", "call_id": call_id})
            raise
        finally:
            self.pending.pop(call_id, None)
            self.cards.pop(call_id, None)

    def _worker(self, session_id: int) -> str:
        followed = self.followed.get(session_id)
        return followed.worker if followed is not None else ""

    async def answer(self, session_id: int, command: dict[str, Any]) -> bool:
        """Answer a server's request in its session (the server_requests feature's `answer`)."""
        worker = self._worker(session_id)
        if not worker:
            return False
        await self.layer.send(worker, {"command": "answer", **command})
        return True

    def session_ids(self) -> list[int]:
        return list(self.sessions.values())

    async def close(self) -> None:
        """The page has gone: stop following (the sessions end as unwatched ones do)."""
        for followed in self.followed.values():
            for task in followed.tasks:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        for session_id, followed in self.followed.items():
            with contextlib.suppress(Exception):
                await self.layer.group_discard(group_name(session_id), followed.channel)
