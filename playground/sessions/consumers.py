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
import logging
from collections.abc import Callable
from typing import Any

import uritemplate

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.consumer import get_handler_name
from django.conf import settings

from playground.mcp import jsontext
from playground.oauth import render as oauth_render
from playground.schemaforms import parse_form, validate_arguments
from playground.transcripts.models import Event, Session

from . import render
from .durability import reap_dead_sessions
from .worker import group_name, session_state

log = logging.getLogger(__name__)

REPLAY_WINDOW = 1000      # events sent on (re)connect; older ones stay in the database and the export
TASK_TTL_MS = 300_000     # lifetime asked for a task-augmented tool call


def can_view(user: Any, session: Session) -> bool:
    return bool(user and user.is_authenticated and (session.owner_id in (None, user.pk) or user.is_staff))


class SessionConsumer(AsyncWebsocketConsumer):
    """Keeps the session's worker channel and catalogue from connect on, updated by the group's
    messages: a call then costs no database read (reads queue behind the worker's transcript
    writes on Channels' one database thread, which made each call wait for a commit)."""

    session_id: int
    worker_channel: str = ""
    catalogue: dict[str, Any] = {}

    async def connect(self) -> None:
        self.session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        # Cards appended to the page (calls in flight, server requests, authorization): the
        # worker's snapshot and a live broadcast can both announce one; a tab shows it once.
        self._cards: set[str] = set()
        await database_sync_to_async(reap_dead_sessions)()
        session = await self._session()
        if session is None or not can_view(self.scope.get("user"), session):
            await self.close(code=4403)
            return
        self.worker_channel, self.catalogue = session.worker_channel, session.catalogue or {}
        await self.channel_layer.group_add(group_name(self.session_id), self.channel_name)
        await self.accept()
        await self._replay(session)
        if session.worker_channel:
            await self.channel_layer.send(session.worker_channel, {"command": "sync", "reply_channel": self.channel_name})
            self._watchdog = asyncio.create_task(self._watch_worker())

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' own dispatch first closes stale database connections, a hop to its single
        database thread for every message, queued behind the worker's transcript writes: that
        hop was most of a call's relay time. These handlers reach the database only through
        `database_sync_to_async`, which closes stale connections itself, so it is skipped here."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def _watch_worker(self) -> None:
        """While the session is live, check every beat that its worker still beats. When its
        process died (the heartbeat went stale), end the session and tell every tab: the note
        saying so and the state. Without this a tab on another process showed it live forever."""
        while self.worker_channel:
            await asyncio.sleep(settings.PLAYGROUND_HEARTBEAT_SECONDS)
            try:
                if await database_sync_to_async(reap_dead_sessions)(session_id=self.session_id):
                    await self._announce_end()
            except Exception:     # housekeeping never closes a tab
                log.exception("checking the worker of session %s failed", self.session_id)

    async def _announce_end(self) -> None:
        session = await self._session()
        assert session is not None
        last = await database_sync_to_async(
            lambda: list(Event.objects.filter(session_id=self.session_id).order_by("-seq")
                         .values_list("data", flat=True)[:1]))()
        group = group_name(self.session_id)
        frames = render.transcript_append_frames(session.owner_redactor().obj(last))
        await self.channel_layer.group_send(group, {"type": "session.lines", "frames": frames})
        await self.channel_layer.group_send(group, {"type": "session.state", "state": session_state(session)})

    async def disconnect(self, code: int) -> None:
        watchdog = getattr(self, "_watchdog", None)
        if watchdog is not None:
            watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watchdog
        if hasattr(self, "session_id"):
            await self.channel_layer.group_discard(group_name(self.session_id), self.channel_name)

    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None:
        """Every fragment goes through here. daphne closes this tab's socket (and then the same
        one again on every reconnect) rather than send text it cannot encode (a server's JSON
        may hold unpaired surrogates: "\\ud800") or a message over its limit: the first is
        sent with U+FFFD in their place, the second becomes a notice."""
        if text_data is not None and not text_data.isascii():
            try:
                size = len(text_data.encode("utf-8"))
            except UnicodeEncodeError:
                text_data = text_data.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
                size = len(text_data.encode("utf-8"))
        else:
            size = len(text_data or "")
        if size > render.WS_MESSAGE_LIMIT:
            log.warning("session %s: a %d-byte fragment was replaced by a notice", self.session_id, size)
            text_data = render.too_large(text_data or "", size)
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    @database_sync_to_async
    def _session(self) -> Session | None:
        return Session.objects.filter(pk=self.session_id).first()

    @database_sync_to_async
    def _recent_events(self) -> tuple[list[dict[str, Any]], int]:
        qs = Event.objects.filter(session_id=self.session_id)
        total = qs.count()
        rows = list(qs.order_by("-seq").values_list("data", flat=True)[:REPLAY_WINDOW])
        rows.reverse()
        return rows, total

    async def _replay(self, session: Session) -> None:
        rows, total = await self._recent_events()
        for frame in render.transcript_replace_frames(session.owner_redactor().obj(rows), total, session.pk):
            await self.send(text_data=frame)
        await self.send(text_data=render.state(session_state(session)))
        if session.catalogue:
            await self.send(text_data=render.catalogue(session.pk, session.catalogue))

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
            await self.send(text_data=render.notice("This session has ended. Connect again from the server page."))
            return
        command: dict[str, Any] | None = None
        if action == "call_tool":
            command = await self._tool_command(content)
        elif action == "read_resource" and content.get("uri"):
            command = {"command": "read_resource", "uri": str(content["uri"])}
        elif action == "get_prompt" and content.get("name"):
            args = {k[len("args."):]: str(v) for k, v in content.items() if k.startswith("args.") and v != ""}
            command = {"command": "get_prompt", "name": str(content["name"]), "arguments": args}
        elif action in ("ping", "disconnect", "refresh"):
            command = {"command": action}
        elif action == "cancel" and content.get("call_id"):
            command = {"command": "cancel", "call_id": str(content["call_id"])}
        elif action == "raw":
            command = await self._raw_command(content)
        elif action == "answer":
            command = self._answer_command(content)
        elif action == "read_template":
            command = self._template_command(content)
        elif action == "complete":
            command = self._complete_command(content)
        elif action in ("set_level", "subscribe", "unsubscribe") and (content.get("level") or content.get("uri")):
            command = {"command": action, "level": str(content.get("level") or ""), "uri": str(content.get("uri") or "")}
        elif action == "listen":
            uris = [u.strip() for u in str(content.get("uris") or "").splitlines() if u.strip()]
            command = {"command": "listen", "filter": {
                **{flag: bool(content.get(flag)) for flag in ("toolsListChanged", "promptsListChanged",
                                                              "resourcesListChanged")},
                "resourceSubscriptions": uris}}
        elif action == "stop_listen":
            command = {"command": "stop_listen"}
        elif action == "auto_refresh":
            command = {"command": "auto_refresh", "on": bool(content.get("on"))}
        elif action == "set_timeout":
            command = {"command": "set_timeout", "seconds": str(content.get("seconds") or "")}
        elif action in ("task_get", "task_result", "task_cancel") and content.get("task_id"):
            command = {"command": action, "task_id": str(content["task_id"]), "name": str(content["task_id"])}
        if command is not None:
            await self.channel_layer.send(self.worker_channel, command)

    async def _tool_command(self, content: dict[str, Any]) -> dict[str, Any] | None:
        name = str(content.get("name", ""))
        tool = next((t for t in self.catalogue.get("tools", []) if t.get("name") == name), None)
        schema = (tool or {}).get("inputSchema") or {"type": "object"}
        if content.get("mode") == "json":
            try:
                arguments = json.loads(content.get("arguments_json") or "{}")
            except ValueError as exc:
                await self._form_errors([{"path": "", "message": f"not valid JSON: {exc}"}])
                return None
            problems: list[str] = []
        else:
            arguments, problems = parse_form(schema, content, prefix="args")
        errors = [{"path": "", "message": p} for p in problems] + validate_arguments(schema, arguments)
        if errors and not content.get("send_anyway"):
            await self._form_errors(errors)
            return None
        await self._form_errors([])
        timeout = content.get("timeout")
        command = {"command": "call_tool", "name": name, "arguments": arguments,
                   "timeout": float(timeout) if timeout not in (None, "") else None}
        if content.get("as_task"):
            command["task"] = {"ttl": TASK_TTL_MS}
        return command

    def _template_command(self, content: dict[str, Any]) -> dict[str, Any] | None:
        """Expand a resource template (RFC 6570) with the form's variables, then read the URI."""
        template = str(content.get("template") or "")
        if not any(t.get("uriTemplate") == template for t in self.catalogue.get("templates", [])):
            return None
        variables = {k[len("vars."):]: str(v) for k, v in content.items() if k.startswith("vars.") and v != ""}
        return {"command": "read_resource", "uri": uritemplate.expand(template, variables)}

    def _complete_command(self, content: dict[str, Any]) -> dict[str, Any] | None:
        """`completion/complete` for one field as the user types; the answer comes back to this tab only."""
        ref_type, target = str(content.get("ref_type") or ""), str(content.get("target") or "")
        if ref_type not in ("ref/prompt", "ref/resource") or not target or not content.get("argument"):
            return None
        ref = {"type": ref_type, ("name" if ref_type == "ref/prompt" else "uri"): str(content.get("ref") or "")}
        try:
            context = json.loads(content.get("context") or "{}")
        except ValueError:
            context = {}
        context = {str(k): str(v) for k, v in context.items() if v not in ("", None)} if isinstance(context, dict) else {}
        return {"command": "complete", "ref": ref, "target": target, "context": context,
                "argument": {"name": str(content["argument"]), "value": str(content.get("value") or "")},
                "reply_channel": self.channel_name}

    async def _form_errors(self, errors: list[dict[str, Any]]) -> None:
        """Show errors under the form; clear them only if this tab was shown some (a fresh
        form has none): a call that validates costs one websocket message less."""
        if errors or getattr(self, "_errors_shown", False):
            await self.send(text_data=render.form_errors(errors))
        self._errors_shown = bool(errors)

    async def _raw_command(self, content: dict[str, Any]) -> dict[str, Any] | None:
        """A hand-made message: an exact frame (sent as typed, malformed allowed), or a method with
        params (any JSON value, invalid for the method on purpose if wanted; not JSON at all is
        refused, and says so: the exact frame is the place for broken text)."""
        text = str(content.get("frame") or "")
        if text.strip():
            return {"command": "raw", "frame": text, "notification": bool(content.get("notification"))}
        method = str(content.get("method") or "").strip()
        if not method:
            await self.send(text_data=render.raw_errors(["Give a method, or an exact frame."]))
            return None
        params_text = str(content.get("params") or "").strip()
        try:
            params = json.loads(params_text) if params_text else None
        except ValueError as exc:
            await self.send(text_data=render.raw_errors([
                f"params is not valid JSON ({exc}); to send broken JSON on purpose, use the exact frame"]))
            return None
        await self.send(text_data=render.raw_errors([]))
        return {"command": "raw", "method": method, "params": params,
                "notification": bool(content.get("notification"))}

    @staticmethod
    def _answer_command(content: dict[str, Any]) -> dict[str, Any] | None:
        key = str(content.get("key") or "")
        if not key:
            return None
        if content.get("reject"):
            return {"command": "answer", "key": key, "error": str(content.get("reject_reason") or "rejected by the user")}
        try:
            result = json.loads(content.get("result") or "{}")
        except ValueError:
            result = {}
        return {"command": "answer", "key": key, "result": result}

    # From the session group ---------------------------------------------------

    async def session_lines(self, message: dict[str, Any]) -> None:
        """Transcript lines, windowed and rendered by the worker once for every tab."""
        for frame in message["frames"]:
            await self.send(text_data=frame)

    async def session_state(self, message: dict[str, Any]) -> None:
        if message["state"].get("status") in (Session.Status.ENDED, Session.Status.FAILED):
            self.worker_channel = ""
        await self.send(text_data=render.state(message["state"]))

    async def session_catalogue(self, message: dict[str, Any]) -> None:
        self.catalogue = message["catalogue"]
        await self.send(text_data=render.catalogue(self.session_id, message["catalogue"]))

    async def session_call_started(self, message: dict[str, Any]) -> None:
        await self._card("call:" + str(message["call_id"]), lambda: render.call_started(message))

    async def session_progress(self, message: dict[str, Any]) -> None:
        await self.send(text_data=render.progress(message["call_id"], message["progress"]))

    async def session_result(self, message: dict[str, Any]) -> None:
        self._cards.discard("call:" + str(message.get("call_id")))
        for frame in render.result_frames(message, self.catalogue):
            await self.send(text_data=frame)

    async def _card(self, card: str, html: Callable[[], str]) -> None:
        if card not in self._cards:
            self._cards.add(card)
            await self.send(text_data=html())

    async def session_server_request(self, message: dict[str, Any]) -> None:
        await self._card("request:" + message["key"], lambda: render.server_request(message))

    async def session_server_request_done(self, message: dict[str, Any]) -> None:
        self._cards.discard("request:" + message["key"])
        await self.send(text_data=render.server_request_done(message["key"]))

    async def session_feed(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["html"])

    async def session_panels(self, message: dict[str, Any]) -> None:
        await self.send(text_data=render.panels(message["panels"]))

    async def session_completion(self, message: dict[str, Any]) -> None:
        await self.send(text_data=render.completion(message))

    async def session_snapshot(self, message: dict[str, Any]) -> None:
        """The worker's answer to `sync`: what a reloading page needs to catch up."""
        self.catalogue = message.get("catalogue") or self.catalogue
        for outcome in message.get("results", [])[-1:]:
            for frame in render.result_frames(outcome, self.catalogue):
                await self.send(text_data=frame)
        if message.get("panels"):
            await self.send(text_data=render.panels(message["panels"]))
            await self.send(text_data=render.feed(message.get("feed", []), replace=True))
        for call in message.get("inflight", []):
            await self.session_call_started(call)
            if call["call_id"] in message.get("progress", {}):
                await self.send(text_data=render.progress(call["call_id"], message["progress"][call["call_id"]]))
        for request in message.get("server_requests", []):
            await self.session_server_request(request)
        for pending in message.get("oauth_pending", []):
            await self.session_oauth({"pending": pending})

    async def session_oauth(self, message: dict[str, Any]) -> None:
        pending = message["pending"]
        await self._card("oauth:" + str(pending.get("state", "")), lambda: oauth_render.authorize_card(pending))

    async def session_oauth_done(self, message: dict[str, Any]) -> None:
        self._cards.discard("oauth:" + str(message["state"]))
        await self.send(text_data=oauth_render.authorize_card_done(message["state"]))
