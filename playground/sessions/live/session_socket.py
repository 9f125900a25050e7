"""SessionConsumer: one browser tab's websocket on one session.

It replays the transcript from the database on every connect (hidden tabs close their
socket, reloads happen mid-call) — but for a page's first connect when its lines are already
that window (`?shown=`, no event since the page was rendered: not the same lines twice) — then
relays the session group's messages as explicit htmx out-of-band fragments, and forwards the
page's commands to the worker's channel — wherever that worker lives. The page's calls are
checked and made commands by calls.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async

from playground.transcripts.models import Session

from ..features import BY_ACTION, FEATURES
from ..fragments import lines, regions, result
from ..protocol import (
    CallStarted,
    Catalogue,
    CatalogueEvent,
    Command,
    Lines,
    Outcome,
    ProgressEvent,
    Snapshot,
    StateEvent,
    group_name,
    page_action,
    to_layer,
)
from ..transcript_window import seq_param, shown_param, transcript_window
from . import workers
from .calls import ACTIONS as CALL_ACTIONS
from .calls import Action, CallForms
from .connecting import HINT_WITHIN, with_hint
from .durability import reap_dead_sessions
from .fragment_socket import FragmentSocket
from .watchdog import watch_worker

LIVE = (Session.Status.CONNECTING, Session.Status.CONNECTED)


class SessionConsumer(FragmentSocket):
    """Keeps the session's worker channel and catalogue from connect on, updated by the group's
    messages: a call then costs no database read (reads queue behind the worker's transcript
    writes on Channels' one database thread, which made each call wait for a commit).

    The `TabContext` of the features: they turn their page actions into commands and their
    events into this tab's fragments (features/base.py)."""

    worker_channel: str = ""
    following_capture: bool = False  # a live captured session (no worker) is shown
    # The page shows the events around this one (a line opened from a search), not the latest:
    # the replay shows the same window; live lines follow it only if it reaches the last event.
    around: int | None = None
    shows_latest: bool = True

    async def connect(self) -> None:
        self.session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.around = seq_param((query.get("around") or [""])[0])
        self.shown = shown_param(query)
        self.calls = CallForms(self)  # the page's calls: checked, made commands (calls.py)
        await database_sync_to_async(reap_dead_sessions)()
        session = await self._session()
        if session is None or not session.visible_to(self.scope.get("user")):
            await self.close(code=4403)
            return
        await self.channel_layer.group_add(group_name(self.session_id), self.channel_name)
        await self.accept()
        # Read again now that this tab hears the group: the worker saves, then announces, so
        # what it did since the first read is in this one or reaches the tab (a page landing as
        # its session lists the tools showed none until a refresh).
        session = await self._session() or session
        self.worker_channel = session.worker_channel
        self.catalogue = session.catalogue or Catalogue()
        await self._replay(session)
        if session.worker_channel:
            await self.channel_layer.send(
                session.worker_channel, {"command": "sync", "reply_channel": self.channel_name}
            )
            # Its worker's process may die: this tab (in another process) must see the end.
            self._watchdog = asyncio.create_task(
                watch_worker(self.channel_layer, self.session_id, lambda: bool(self.worker_channel))
            )
        elif session.kind == Session.Kind.CAPTURED and session.status in LIVE:
            # No worker: the capture's records keep it live; this tab sees it end when they stop.
            self.following_capture = True
            self._watchdog = asyncio.create_task(
                watch_worker(self.channel_layer, self.session_id, lambda: self.following_capture)
            )

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' own dispatch first closes stale database connections, a hop to its single
        database thread for every message, queued behind the worker's transcript writes: that
        hop was most of a call's relay time. These handlers reach the database only through
        `database_sync_to_async`, which closes stale connections itself, so it is skipped here."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def disconnect(self, code: int) -> None:
        watchdog = getattr(self, "_watchdog", None)
        if watchdog is not None:
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog
        if hasattr(self, "session_id"):
            await self.channel_layer.group_discard(group_name(self.session_id), self.channel_name)

    @database_sync_to_async
    def _session(self) -> Session | None:
        return Session.objects.filter(pk=self.session_id).first()

    async def _replay(self, session: Session) -> None:
        window = await database_sync_to_async(transcript_window)(self.session_id, self.around)
        self.shows_latest = window.latest
        redactor = session.owner_redactor()
        if window.mark == self.shown:  # the page was rendered with these very lines: not again
            rows = redactor.obj(window.rows[-HINT_WITHIN:])  # (what the state's hint is found among)
        else:
            rows = redactor.obj(window.rows)
            for frame in lines.transcript_replace_frames(rows, window.total, session.pk, window, owner=True):
                await self.send(text_data=frame)
        await self.send(text_data=regions.state(with_hint(session.state(), rows)))
        if session.catalogue:
            await self.send(text_data=regions.catalogue(session.pk, session.catalogue))
        if session.status not in LIVE:  # no worker answers a sync: the features' parts as saved
            for feature in FEATURES:
                for fragment in feature.ended_fragments(session):
                    await self.send(text_data=fragment)

    # From the page -------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        content = page_action(text_data)
        if content is None:
            return
        action = content.get("action")
        if not self.worker_channel:
            session = await self._session()  # only when the cache says it ended: make sure
            if session is None:
                return
            self.worker_channel = session.worker_channel
        if not self.worker_channel:
            if self.following_capture:
                await self.send(
                    text_data=regions.notice(
                        "A captured session: the host is the client, and nothing is sent from this page."
                    )
                )
                return
            await self.send(text_data=regions.notice("This session has ended: Reconnect starts a new one."))
            return
        parse = ACTIONS.get(action) if isinstance(action, str) else None
        command: Command | None = None
        if parse is not None:
            command = await parse(self.calls, content)
        elif action in BY_ACTION:
            command = await BY_ACTION[action].command(action, content, self)
        if command is not None:
            worker = workers.local(self.session_id, self.worker_channel)
            if worker is not None:
                worker.deliver(command)  # the in-process path (the worker lives in this process)
            else:
                await self.channel_layer.send(self.worker_channel, to_layer(command))

    # From the session group ---------------------------------------------------

    async def session_lines(self, message: Lines) -> None:
        """Transcript lines, windowed and rendered by the worker once for every tab."""
        if not self.shows_latest:
            return
        for frame in message["frames"]:
            await self.send(text_data=frame)

    async def session_state(self, message: StateEvent) -> None:
        if message["state"].get("status") in (Session.Status.ENDED, Session.Status.FAILED):
            self.worker_channel = ""
            self.following_capture = False
        await self.send(text_data=regions.state(message["state"]))

    async def session_catalogue(self, message: CatalogueEvent) -> None:
        self.catalogue = message["catalogue"]
        await self.send(text_data=regions.catalogue(self.session_id, message["catalogue"]))

    async def session_call_started(self, message: CallStarted) -> None:
        if self.first_time("call:" + str(message["call_id"])):
            await self.send(text_data=result.call_started(message))

    async def session_progress(self, message: ProgressEvent) -> None:
        await self.send(text_data=result.progress(message["call_id"], message["progress"]))

    async def session_result(self, message: Outcome) -> None:
        self.forget("call:" + str(message.get("call_id")))
        for frame in result.result_frames(message):
            await self.send(text_data=frame)

    async def session_snapshot(self, message: Snapshot) -> None:
        """The worker's answer to `sync`: what a reloading page needs to catch up."""
        self.catalogue = message.get("catalogue") or self.catalogue
        if message.get("state"):
            await self.send(text_data=regions.state(message["state"]))
        for outcome in message.get("results", [])[-1:]:
            for frame in result.result_frames(outcome):
                await self.send(text_data=frame)
        for call in message.get("inflight", []):
            await self.session_call_started(call)
            if call["call_id"] in message.get("progress", {}):
                await self.send(text_data=result.progress(call["call_id"], message["progress"][call["call_id"]]))
        for event in message.get("features", []):
            await self.session_feature(event)


async def _session_command(calls: CallForms, content: dict[str, Any]) -> Command | None:
    return {"command": str(content["action"])}


# Page action -> the command it makes: the calls' (calls.ACTIONS), the session's own buttons;
# features add theirs (features.BY_ACTION).
ACTIONS: dict[str, Action] = {**CALL_ACTIONS, "disconnect": _session_command, "refresh": _session_command}
