"""SessionConsumer: one browser tab's websocket on one session.

It replays the transcript from the database on every connect (hidden tabs close their
socket, reloads happen mid-call), then relays the session group's messages as explicit
htmx out-of-band fragments, and forwards the page's commands to the worker's channel —
wherever that worker lives.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

import uritemplate

from channels.db import database_sync_to_async
from channels.consumer import get_handler_name

from playground.mcp import jsontext
from playground.schemaforms import avalidate_arguments, form_too_large, parse_form
from playground.transcripts.models import Session

from ..features import BY_ACTION
from ..fragments import lines, regions, result
from ..protocol import Command, catalogue_item, group_name
from ..transcript_window import seq_param, transcript_window
from .connecting import with_hint
from .durability import reap_dead_sessions
from .fragment_socket import FragmentSocket
from .watchdog import watch_worker

TASK_TTL_MS = 300_000     # lifetime asked for a task-augmented tool call


class SessionConsumer(FragmentSocket):
    """Keeps the session's worker channel and catalogue from connect on, updated by the group's
    messages: a call then costs no database read (reads queue behind the worker's transcript
    writes on Channels' one database thread, which made each call wait for a commit).

    The `TabContext` of the features: they turn their page actions into commands and their
    events into this tab's fragments (features/base.py)."""

    worker_channel: str = ""
    # The page shows the events around this one (a line opened from a search), not the latest:
    # the replay shows the same window; live lines follow it only if it reaches the last event.
    around: int | None = None
    shows_latest: bool = True

    async def connect(self) -> None:
        self.session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.around = seq_param((query.get("around") or [""])[0])
        self._boxes_shown: set[str] = set()       # message boxes (`_box`) showing something now
        await database_sync_to_async(reap_dead_sessions)()
        session = await self._session()
        if session is None or not session.visible_to(self.scope.get("user")):
            await self.close(code=4403)
            return
        self.worker_channel, self.catalogue = session.worker_channel, session.catalogue or {}
        await self.channel_layer.group_add(group_name(self.session_id), self.channel_name)
        await self.accept()
        await self._replay(session)
        if session.worker_channel:
            await self.channel_layer.send(session.worker_channel, {"command": "sync", "reply_channel": self.channel_name})
            # Its worker's process may die: this tab (in another process) must see the end.
            self._watchdog = asyncio.create_task(watch_worker(self.channel_layer, self.session_id,
                                                              lambda: bool(self.worker_channel)))

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
        rows = session.owner_redactor().obj(window.rows)
        for frame in lines.transcript_replace_frames(rows, window.total, session.pk, window, owner=True):
            await self.send(text_data=frame)
        await self.send(text_data=regions.state(with_hint(session.state(), rows)))
        if session.catalogue:
            await self.send(text_data=regions.catalogue(session.pk, session.catalogue))

    # From the page -------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            content = jsontext.loads(text_data or "{}")
        except (ValueError, RecursionError):
            return
        if not isinstance(content, dict):
            return
        action = content.get("action")
        if not self.worker_channel:
            session = await self._session()     # only when the cache says it ended: make sure
            if session is None:
                return
            self.worker_channel = session.worker_channel
        if not self.worker_channel:
            await self.send(text_data=regions.notice("This session has ended: Reconnect starts a new one."))
            return
        core = _ACTIONS.get(action) if isinstance(action, str) else None
        command: Command | None = None
        if core is not None:
            command = await core(self, content)
        elif action in BY_ACTION:
            command = await BY_ACTION[action].command(action, content, self)
        if command is not None:
            await self.channel_layer.send(self.worker_channel, command)

    # The core's actions: calls, and the session's own buttons --------------------------

    async def _simple_command(self, content: dict[str, Any]) -> Command | None:
        return {"command": str(content["action"])}

    async def _read_resource_command(self, content: dict[str, Any]) -> Command | None:
        return {"command": "read_resource", "uri": str(content["uri"])} if content.get("uri") else None

    async def _prompt_command(self, content: dict[str, Any]) -> Command | None:
        if not content.get("name"):
            return None
        if too_large := form_too_large(content, "args"):
            await self._notice(f"Not sent: {too_large}.")
            return None
        await self._notice("")
        args = {k[len("args."):]: str(v) for k, v in content.items() if k.startswith("args.") and v != ""}
        return {"command": "get_prompt", "name": str(content["name"]), "arguments": args}

    async def _cancel_command(self, content: dict[str, Any]) -> Command | None:
        return {"command": "cancel", "call_id": str(content["call_id"])} if content.get("call_id") else None

    async def _task_command(self, content: dict[str, Any]) -> Command | None:
        if not content.get("task_id"):
            return None
        return {"command": str(content["action"]), "task_id": str(content["task_id"]), "name": str(content["task_id"])}

    async def _tool_command(self, content: dict[str, Any]) -> Command | None:
        name = str(content.get("name", ""))
        tool = catalogue_item(self.catalogue, "tools", name)
        schema = (tool or {}).get("inputSchema") or {"type": "object"}
        if too_large := form_too_large(content, "args"):
            await self._form_errors([{"path": "", "message": f"Not sent: {too_large}."}])   # even with "send anyway"
            return None
        if content.get("mode") == "json":
            try:
                arguments = json.loads(content.get("arguments_json") or "{}")
            except ValueError as exc:
                await self._form_errors([{"path": "", "message": f"not valid JSON: {exc}"}])
                return None
            problems: list[str] = []
        else:
            arguments, problems = parse_form(schema, content, prefix="args")
        # The schema is the server's: checked in the bounded sandbox, off the event loop.
        errors = [{"path": "", "message": p} for p in problems] + await avalidate_arguments(schema, arguments)
        if errors and not content.get("send_anyway"):
            await self._form_errors(errors)
            return None
        await self._form_errors([])
        timeout = content.get("timeout")
        command: Command = {"command": "call_tool", "name": name, "arguments": arguments,
                   "timeout": float(timeout) if timeout not in (None, "") else None}
        if content.get("as_task"):
            command["task"] = {"ttl": TASK_TTL_MS}
        return command

    async def _template_command(self, content: dict[str, Any]) -> Command | None:
        """Expand a resource template (RFC 6570) with the form's variables, then read the URI."""
        template = str(content.get("template") or "")
        if catalogue_item(self.catalogue, "templates", template) is None:
            return None
        if too_large := form_too_large(content, "vars"):
            await self._notice(f"Not read: {too_large}.")
            return None
        await self._notice("")
        variables = {k[len("vars."):]: str(v) for k, v in content.items() if k.startswith("vars.") and v != ""}
        return {"command": "read_resource", "uri": uritemplate.expand(template, variables)}

    async def _box(self, box: str, fragment: Callable[[], str], showing: bool) -> None:
        """One of this tab's message boxes (a form's notice, the raw composer's errors, the tool
        form's errors): sent when it shows something, or to clear what it showed — a request
        that goes through from a clean form costs no websocket message."""
        if showing or box in self._boxes_shown:
            await self.send(text_data=fragment())
        if showing:
            self._boxes_shown.add(box)
        else:
            self._boxes_shown.discard(box)

    async def _notice(self, text: str) -> None:
        await self._box("notice", lambda: regions.notice(text), bool(text))

    async def _raw_errors(self, errors: list[str]) -> None:
        await self._box("raw", lambda: regions.raw_errors(errors), bool(errors))

    async def _form_errors(self, errors: list[dict[str, Any]]) -> None:
        await self._box("form", lambda: regions.form_errors(errors), bool(errors))

    async def _raw_command(self, content: dict[str, Any]) -> Command | None:
        """A hand-made message: an exact frame (sent as typed, malformed allowed), or a method with
        params (any JSON value, invalid for the method on purpose if wanted; not JSON at all is
        refused, and says so: the exact frame is the place for broken text)."""
        text = str(content.get("frame") or "")
        if text.strip():
            await self._raw_errors([])
            return {"command": "raw", "frame": text, "notification": bool(content.get("notification"))}
        method = str(content.get("method") or "").strip()
        if not method:
            await self._raw_errors(["Give a method, or an exact frame."])
            return None
        params_text = str(content.get("params") or "").strip()
        try:
            params = json.loads(params_text) if params_text else None
        except ValueError as exc:
            await self._raw_errors([
                f"params is not valid JSON ({exc}); to send broken JSON on purpose, use the exact frame"])
            return None
        await self._raw_errors([])
        return {"command": "raw", "method": method, "params": params,
                "notification": bool(content.get("notification"))}

    # From the session group ---------------------------------------------------

    async def session_lines(self, message: dict[str, Any]) -> None:
        """Transcript lines, windowed and rendered by the worker once for every tab."""
        if not self.shows_latest:
            return
        for frame in message["frames"]:
            await self.send(text_data=frame)

    async def session_state(self, message: dict[str, Any]) -> None:
        if message["state"].get("status") in (Session.Status.ENDED, Session.Status.FAILED):
            self.worker_channel = ""
        await self.send(text_data=regions.state(message["state"]))

    async def session_catalogue(self, message: dict[str, Any]) -> None:
        self.catalogue = message["catalogue"]
        await self.send(text_data=regions.catalogue(self.session_id, message["catalogue"]))

    async def session_call_started(self, message: dict[str, Any]) -> None:
        if self.first_time("call:" + str(message["call_id"])):
            await self.send(text_data=result.call_started(message))

    async def session_progress(self, message: dict[str, Any]) -> None:
        await self.send(text_data=result.progress(message["call_id"], message["progress"]))

    async def session_result(self, message: dict[str, Any]) -> None:
        self.forget("call:" + str(message.get("call_id")))
        for frame in result.result_frames(message):
            await self.send(text_data=frame)

    async def session_snapshot(self, message: dict[str, Any]) -> None:
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


_Action = Callable[[SessionConsumer, dict[str, Any]], Awaitable[Command | None]]
# Page action -> the command it makes (features add theirs: features.BY_ACTION).
_ACTIONS: dict[str, _Action] = {
    "call_tool": SessionConsumer._tool_command,
    "read_resource": SessionConsumer._read_resource_command,
    "read_template": SessionConsumer._template_command,
    "get_prompt": SessionConsumer._prompt_command,
    "ping": SessionConsumer._simple_command,
    "disconnect": SessionConsumer._simple_command,
    "refresh": SessionConsumer._simple_command,
    "cancel": SessionConsumer._cancel_command,
    "raw": SessionConsumer._raw_command,
    "task_get": SessionConsumer._task_command,
    "task_result": SessionConsumer._task_command,
    "task_cancel": SessionConsumer._task_command,
}
