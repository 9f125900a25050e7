"""The server's own requests a person answers on the page (legacy sampling and elicitation,
and the same requests inside a modern call's `input_required` round): a "Server request" card
on every tab until one of them answers it."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from playground.budget import ELICITATION
from playground.mcp import jsontext
from playground.mcp.jsonrpc import JsonRpcError
from playground.schemaforms import render_form

from ..fragments.content import content_block, content_item, url_parts
from ..fragments.html import oob
from ..protocol import CURRENT_CALL, Command, FeatureEvent
from .base import Feature, render
from .context import SessionContext, TabContext
from .input_rounds import InputRounds

ANSWERED = frozenset({"sampling/createMessage", "elicitation/create"})
RELATED_TASK = "io.modelcontextprotocol/related-task"  # the `_meta` key naming a request's task


class ServerRequests(Feature):
    name = "server_requests"
    actions = frozenset({"answer"})
    server_requests = ANSWERED
    scripts = ("server_requests.js",)  # (the chat's page loads it too)

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        return answer_command(content)

    @classmethod
    def fragments(cls, event: dict[str, Any], tab: TabContext) -> list[str]:
        card = "request:" + event["key"]
        if event.get("done"):
            tab.forget(card)
            return [oob(f"server-request-{event['key']}", "delete")]
        if not tab.first_time(card):
            return []
        html = render("sessions/features/server_request.html", describe_server_request(event))
        return [oob("server-requests", "beforeend", html)]

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.waiting: dict[str, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}
        self._keys = itertools.count(1)

    def capabilities(self) -> dict[str, Any]:
        return {"sampling": {}, "elicitation": {"form": {}, "url": {}}}

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        key = f"q{next(self._keys)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        rounds = self.ctx.feature("input_rounds")  # an input round of one of our calls?
        context = rounds.request_context() if isinstance(rounds, InputRounds) else None
        if context is None and (call_id := CURRENT_CALL.get()) is not None:
            context = {"call_id": call_id}  # a legacy request caused by one of our calls
        asked = {"key": key, "method": method, "params": params, "context": context}
        self.waiting[key] = (asked, future)
        await self.publish(asked)
        try:
            return await future
        finally:
            self.waiting.pop(key, None)
            await self.publish({"key": key, "done": True, "answer": _how_answered(future)})

    async def handle(self, command: Command) -> None:
        entry = self.waiting.get(str(command.get("key") or ""))
        if entry is None or entry[1].done():
            return
        if command.get("error") is not None:
            entry[1].set_exception(JsonRpcError(-1, str(command["error"])))
        else:
            entry[1].set_result(command.get("result") or {})

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(asked) for asked, _ in self.waiting.values()]


def answer_command(content: dict[str, Any]) -> Command | None:
    """The worker's `answer` command from a page's answer form (key, result as JSON text, reject):
    the session page's and the chat's, so both answer a server the same way."""
    key = str(content.get("key") or "")
    if not key:
        return None
    if content.get("reject"):
        return {"command": "answer", "key": key, "error": str(content.get("reject_reason") or "rejected by the user")}
    try:
        result = json.loads(content.get("result") or "{}")
    except ValueError:
        result = {}
    return {"command": "answer", "key": key, "result": result if isinstance(result, dict) else {}}


def _how_answered(future: asyncio.Future[dict[str, Any]]) -> str:
    """What the `done` event says of a request (for pages that show it answered, the chat's): the
    elicitation's action, "sent", "rejected", or "" when it ended unanswered (the call ended)."""
    if not future.done() or future.cancelled():
        return ""
    if future.exception() is not None:
        return "rejected"
    action = future.result().get("action")
    return action if action in ("accept", "decline", "cancel") else "sent"


def describe_server_request(message: dict[str, Any], *, form: bool = True) -> dict[str, Any]:
    """What the card shows of one request (its params are the server's: untrusted). `form`: an
    elicitation's answer form too (not for a card that can no longer be answered)."""
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    method = message.get("method")
    out: dict[str, Any] = {
        "key": message["key"],
        "method": method,
        "params": params,
        "params_json": jsontext.pretty(params),
        "context": message.get("context"),
    }
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    related = meta.get(RELATED_TASK)
    out["related_task"] = str(related.get("taskId") or "") if isinstance(related, dict) else ""
    if method == "elicitation/create":
        out["mode"] = params.get("mode") or ("url" if "url" in params else "form")
        out["message"] = str(params.get("message", ""))
        if out["mode"] == "url":
            out["url"] = str(params.get("url", ""))
            out["url_parts"] = url_parts(out["url"])
            out["elicitation_id"] = str(params.get("elicitationId") or "")
        elif form:
            schema = params.get("requestedSchema")
            schema = schema if isinstance(schema, dict) else {}
            # A prefix per request: two questions on the page never share an element id.
            out["form_html"] = render_form(schema, prefix=f"elicit-{message['key']}", limits=ELICITATION)
            out["schema_json"] = json.dumps(schema)
    elif method == "sampling/createMessage":
        out["messages"] = [
            {"role": str(m.get("role", "")), "html": content_block(content_item(m.get("content")))}
            for m in params.get("messages") or []
            if isinstance(m, dict)
        ]
        out["system_prompt"] = str(params.get("systemPrompt") or "")
        out["max_tokens"] = params.get("maxTokens")
        out["temperature"] = params.get("temperature")
        out["stop_sequences"] = ", ".join(str(s) for s in params.get("stopSequences") or [])
        out["include_context"] = str(params.get("includeContext") or "")
        prefs = params.get("modelPreferences")
        prefs = prefs if isinstance(prefs, dict) else {}
        out["hints"] = ", ".join(str(h.get("name")) for h in prefs.get("hints") or [] if isinstance(h, dict))
        out["priorities"] = [
            (k, prefs[k]) for k in ("costPriority", "speedPriority", "intelligencePriority") if k in prefs
        ]
    return out
