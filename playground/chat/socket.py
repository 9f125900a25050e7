"""ChatConsumer: one chat page's websocket. Send starts a turn (loop.py) in a task of its own,
so the socket keeps reading (Stop); the turn's events become fragments for the page and are
saved with the chat (its items, messages and model lane) as each step ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import transaction

from playground import security
from playground.registry.models import Server
from playground.sessions.features.server_requests import answer_command
from playground.sessions.fragments.regions import sendable
from playground.sessions.protocol import page_action

from . import render, sampling, wire
from .borrowed import ENDED, Borrowed, SessionFailed
from .loop import Turn
from .models import Chat, Provider
from .toolset import unique_tools

log = logging.getLogger(__name__)
STEP_LIMIT_MAX = 100


def _ids(value: Any) -> list[int]:
    values = value if isinstance(value, list) else [value] if value not in (None, "") else []
    return [int(v) for v in values if str(v).isdigit()]


class ChatConsumer(AsyncWebsocketConsumer):
    chat: Chat
    turn_task: asyncio.Task[None] | None = None
    _names: dict[str, int]  # server name -> its session in this page
    provider: Provider | None = None  # the model of this page's last turn (it answers sampling too)

    async def connect(self) -> None:
        user = self.scope.get("user")
        chat_id = int(self.scope["url_route"]["kwargs"]["chat_id"])
        chat = await database_sync_to_async(
            lambda: Chat.objects.filter(pk=chat_id, owner_id=getattr(user, "pk", None)).first()
        )()
        if chat is None:
            await self.close(code=4403)
            return
        self.chat = chat
        self._names = {}
        self.borrowed = Borrowed(on_progress=self._progress, on_request=self._server_request)
        self.background: set[asyncio.Task[None]] = set()
        self._accepted = asyncio.Event()
        alive = await self._attach_live_sessions()  # (before accepting: nothing it says is missed)
        await self.accept()
        self._accepted.set()
        for item in self.chat.items:
            if item.get("kind") == "elicitation" and item.get("state") == "waiting" and item["session_id"] not in alive:
                await self._elicitation_state(item, "gone")

    async def _attach_live_sessions(self) -> set[int]:
        """Another tab of this chat (or this one, before a reload) may have sessions still live,
        waiting on a person: listen to them as their tabs do (the ids of those sessions). A card
        saved as waiting whose session has ended is not answerable any more."""
        chat = self.chat
        live = await database_sync_to_async(
            lambda: [
                (s.pk, s.server_id, s.server_name)
                for s in chat.sessions.exclude(status__in=ENDED).order_by("pk")
                if s.is_live and s.server_id is not None  # (its worker in any process)
            ]
        )()
        for session_id, server_pk, name in live:
            self._names.setdefault(name, session_id)
            await self.borrowed.attach(server_pk, session_id)
        return {s for s, _, _ in live if self.borrowed.live(s)}

    async def disconnect(self, code: int) -> None:
        if self.turn_task is not None:
            self.turn_task.cancel()
            with contextlib.suppress(BaseException):
                await self.turn_task
        for task in list(getattr(self, "background", ())):
            task.cancel()
        if hasattr(self, "borrowed"):
            await self.borrowed.close()

    async def out(self, html: str) -> None:
        await self._accepted.wait()  # (a session attached at connect may speak first)
        await self.send(text_data=sendable(html, None))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        content = page_action(text_data)
        if content is None:
            return
        if content.get("action") == "stop":
            if self.turn_task is not None:
                self.turn_task.cancel()
            return
        if content.get("action") == "answer":
            await self._answer_elicitation(content)
            return
        if content.get("action") in ("sample", "sample_send"):
            task = asyncio.get_running_loop().create_task(self._sampling_action(content))
            self.background.add(task)
            task.add_done_callback(self.background.discard)
            return
        if content.get("action") != "send":
            return
        if self.turn_task is not None and not self.turn_task.done():
            await self.out(render.status("A turn is running: Stop it first, or wait.", True))
            return
        text = str(content.get("message") or "").strip()
        if not text:
            return
        self.turn_task = asyncio.get_running_loop().create_task(self._turn(content, text), name=f"chat-{self.chat.pk}")

    # A server's sampling requests (the server_requests feature of a borrowed session) ----------

    def _item(self, kind: str, session_id: int, key: str) -> dict[str, Any] | None:
        """A server request's card in the conversation (kind "sampling" or "elicitation")."""
        return next(
            (
                i
                for i in self.chat.items
                if i.get("kind") == kind and i.get("session_id") == session_id and i.get("key") == key
            ),
            None,
        )

    def _server_name(self, session_id: int) -> str:
        return next((n for n, s in self._names.items() if s == session_id), "a server")

    async def _server_request(self, session_id: int, event: dict[str, Any]) -> None:
        if "waiting" in event:  # a snapshot: what the session waits on now
            keys = set(event["waiting"])
            for asked in self.chat.items:
                if asked.get("kind") == "elicitation" and asked.get("session_id") == session_id:
                    if asked.get("state") == "waiting" and asked.get("key") not in keys:
                        await self._elicitation_state(asked, "gone")
            return
        key = str(event.get("key") or "")
        elicitation = self._item("elicitation", session_id, key)
        if elicitation is not None or event.get("method") == "elicitation/create":
            await self._elicitation_event(session_id, key, event, elicitation)
            return
        if session_id not in self.borrowed.started:
            return  # sampling is answered in the tab whose session it is (its model, its turn)
        item = self._item("sampling", session_id, key)
        if event.get("done"):
            if item is not None and item["state"] in ("waiting", "answered by the model", "asking the model"):
                item["state"] = "gone (answered elsewhere, or the call ended)"
                await self.out(render.replace_sampling(item))
            return
        if item is not None:
            return
        params = event.get("params")
        if event.get("method") != "sampling/createMessage":
            return
        system, messages = sampling.messages_of(params if isinstance(params, dict) else {})
        item = {
            "kind": "sampling",
            "session_id": session_id,
            "key": key,
            "server": self._server_name(session_id),
            "system": system,
            "messages": messages,
            "state": "waiting",
            "reply": "",
        }
        self.chat.items.append(item)
        await self.out(render.append_item(item))

    # A server's elicitation requests: the session page's card, in the conversation -----------

    async def _elicitation_event(
        self, session_id: int, key: str, event: dict[str, Any], item: dict[str, Any] | None
    ) -> None:
        """A request waiting (every tab of the chat shows it; the tab whose session it is saves
        it), or its end: answered (here, in another tab, on the session page) or gone."""
        if event.get("done"):
            if item is not None and item.get("state") == "waiting":
                answer = str(event.get("answer") or "")
                item["answer"] = answer
                await self._elicitation_state(item, "answered" if answer else "gone")
            return
        if item is not None:
            return  # (already shown: a snapshot after the event, or a reload that drew it)
        params = event.get("params")
        item = {
            "kind": "elicitation",
            "session_id": session_id,
            "key": key,
            "server": self._server_name(session_id),
            "params": params if isinstance(params, dict) else {},
            "context": event.get("context") if isinstance(event.get("context"), dict) else None,
            "state": "waiting",
        }
        self.chat.items.append(item)
        await self.out(render.append_item(item))
        if session_id in self.borrowed.started:
            await self._save()  # a reload, or another tab opened now, shows it waiting

    async def _elicitation_state(self, item: dict[str, Any], state: str) -> None:
        """The card's new state, on this page and in the saved chat (that item only: another tab
        saves the rest of the conversation)."""
        item["state"] = state
        await self.out(render.replace_elicitation(item))
        chat_id, session_id, key, answer = self.chat.pk, item["session_id"], item["key"], item.get("answer")

        def update() -> None:
            with transaction.atomic():
                row = Chat.objects.select_for_update().filter(pk=chat_id).first()
                if row is None:
                    return
                for saved in row.items:
                    if saved.get("kind") == "elicitation" and saved.get("session_id") == session_id:
                        if saved.get("key") == key:
                            saved.update(state=state, answer=answer)
                            Chat.objects.filter(pk=chat_id).update(items=row.items)
                            return

        await database_sync_to_async(update)()

    async def _answer_elicitation(self, content: dict[str, Any]) -> None:
        """The card's Accept, Decline or Cancel (as the session page's answer form sends them), to
        the session's worker: the server gets its answer, the tool call goes on."""
        session_part, _, key = str(content.get("key") or "").partition("-")
        if not session_part.isdigit():
            return
        session_id = int(session_part)
        item = self._item("elicitation", session_id, key)
        if item is None or item.get("state") != "waiting" or session_id not in self.borrowed.followed:
            return  # (not a request of this chat's sessions, or answered already)
        command = answer_command({**content, "key": key})
        if command is not None and not await self.borrowed.answer(session_id, dict(command)):
            await self._elicitation_state(item, "gone")

    async def _sampling_action(self, content: dict[str, Any]) -> None:
        try:
            session_id, key = int(str(content.get("session"))), str(content.get("key") or "")
        except ValueError:
            return
        item = self._item("sampling", session_id, key)
        if item is None or item["state"] not in ("waiting", "answered by the model"):
            return
        if content.get("action") == "sample":
            provider = self.provider
            if provider is None:
                item["error"] = "Pick a model and send a message first: the chat's model answers."
                await self.out(render.replace_sampling(item))
                return
            item["state"] = "asking the model"
            await self.out(render.replace_sampling(item))
            try:
                reply, exchange = await wire.complete(
                    provider.endpoint(), item["system"], item["messages"], [], guard=security.net_guard()
                )
                self.chat.lane.append(exchange.to_dict())
                await self.out(render.append_exchange(exchange.to_dict(), len(self.chat.lane)))
                item.update(state="answered by the model", reply=reply.text, error=None)
            except wire.ModelError as exc:
                failed = getattr(exc, "exchange", None)
                if failed is not None:
                    self.chat.lane.append(failed.to_dict())
                    await self.out(render.append_exchange(failed.to_dict(), len(self.chat.lane)))
                item.update(state="waiting", error=str(exc))
        else:
            model = self.provider.model if self.provider is not None else "unknown"
            answer: dict[str, Any] = (
                {"key": key, "error": "rejected by the user"}
                if content.get("reject")
                else {"key": key, "result": sampling.result(str(content.get("text") or ""), model)}
            )
            sent = await self.borrowed.answer(session_id, answer)
            item["state"] = ("rejected" if content.get("reject") else "sent") if sent else "the session has ended"
        await self.out(render.replace_sampling(item))
        await self._save()

    async def _progress(self, card_id: str, params: dict[str, Any]) -> None:
        await self.out(render.progress(card_id, params))

    async def _emit(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        if kind == "reply":
            item = {"kind": "reply", "id": event["id"], "text": ""}
            self.chat.items.append(item)
            await self.out(render.append_item(item))
        elif kind == "text":
            for item in reversed(self.chat.items):
                if item.get("kind") == "reply" and item.get("id") == event["id"]:
                    item["text"] += event["piece"]
                    break
            await self.out(render.text_piece(event["id"], event["piece"]))
        elif kind == "card":
            card = dict(event)
            for i, item in enumerate(self.chat.items):
                if item.get("kind") == "card" and item.get("id") == card["id"]:
                    self.chat.items[i] = card
                    await self.out(render.replace_card(card))
                    break
            else:
                self.chat.items.append(card)
                await self.out(render.append_item(card))
        elif kind == "notice":
            item = {"kind": "notice", "level": event["level"], "text": event["text"]}
            self.chat.items.append(item)
            await self.out(render.append_item(item))
        elif kind == "exchange":
            self.chat.lane.append(event["exchange"])
            await self.out(render.append_exchange(event["exchange"], len(self.chat.lane)))
            await self._save()

    async def _save(self) -> None:
        chat = self.chat
        await database_sync_to_async(
            lambda: Chat.objects.filter(pk=chat.pk).update(
                messages=chat.messages,
                items=chat.items,
                lane=chat.lane,
                provider=chat.provider,
                mode=chat.mode,
                step_limit=chat.step_limit,
            )
        )()

    async def _turn(self, content: dict[str, Any], text: str) -> None:
        chat = self.chat
        # Item ids are unique in the chat (saved items come back on reload).
        prefix = f"{len(chat.items)}-"
        user = self.scope.get("user")
        item = {"kind": "user", "text": text}
        chat.items.append(item)
        await self.out(render.append_item(item))
        await self.out(render.status("Working…", True))
        try:
            provider = await database_sync_to_async(
                lambda: Provider.objects.filter(
                    pk=(_ids(content.get("provider")) or [0])[0], owner_id=getattr(user, "pk", None)
                ).first()
            )()
            if provider is None:
                await self._emit(
                    {"kind": "notice", "level": "error", "text": "Pick a model (add one on Model providers)."}
                )
                return
            self.provider = chat.provider = provider
            chat.mode = "chatbot" if content.get("mode") == "chatbot" else "native"
            try:
                chat.step_limit = max(1, min(STEP_LIMIT_MAX, int(content.get("steps") or chat.step_limit)))
            except ValueError:
                pass
            servers = await database_sync_to_async(
                lambda: list(
                    Server.objects.filter(
                        pk__in=_ids(content.get("server")), owner_id=getattr(user, "pk", None)
                    ).order_by("name")
                )
            )()
            try:
                opened = await self.borrowed.open(servers, user)
            except SessionFailed as exc:
                await self._emit({"kind": "notice", "level": "error", "text": f"Not sent: {exc}"})
                return
            session_ids = [s for _, s, _ in opened]
            self._names.update({n: s for n, s, _ in opened})
            await database_sync_to_async(lambda: chat.sessions.add(*session_ids))()
            await self.out(render.sessions_list([(s, n) for n, s, _ in opened]))
            turn = Turn(
                endpoint=provider.endpoint(),
                tools=unique_tools(opened),
                current_tools=lambda: unique_tools(self.borrowed.tools(opened)),
                mode=chat.mode,
                step_limit=chat.step_limit,
                runner=self.borrowed,
                emit=self._emit,
                guard=security.net_guard(),
                messages=chat.messages,
                id_prefix=prefix,
            )
            await turn.run(text)
        except asyncio.CancelledError:
            await asyncio.shield(
                self._emit(
                    {
                        "kind": "notice",
                        "level": "warn",
                        "text": "Stopped: the turn and its running tool calls were cancelled.",
                    }
                )
            )
            raise
        except Exception as exc:  # a bug must not end the page's socket silently
            log.exception("chat %s: the turn failed", chat.pk)
            await self._emit({"kind": "notice", "level": "error", "text": f"The turn failed: {exc!r}"})
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._save())
                await asyncio.shield(self.out(render.status("", False)))
