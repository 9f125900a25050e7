"""One turn of a chat: the model is asked, its tool calls run through the sessions, their results
go back, until it answers in text, the step limit is reached, or the turn is stopped. No Django:
the page (`Emit`) and the sessions (`Runner`) are given.

What the page gets (`Emit`), each a dict with "kind":
- "reply" {id} then "text" {id, piece}: a model reply streaming, token by token;
- "card" {id, server, tool, name, prefixed, arguments, invalid, state, result?, error?, latency_ms?}:
  a tool call, sent again as it changes;
- "notice" {level, text}: what went wrong, in words (the model API, a tool's name, the step limit);
- "exchange" {exchange}: one model request and its response, for the model lane.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from playground.mcp.netguard import NetGuard
from playground.modelview import chatbot
from playground.schema import avalidate_arguments

from . import toolset, wire
from .toolset import ChatTool

Emit = Callable[[dict[str, Any]], Awaitable[None]]
RESULT_TEXT_MAX = 100_000  # characters of a tool result sent back to the model
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class Runner(Protocol):
    async def call(self, tool: ChatTool, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
        """The call's outcome: {"result": …} or {"error": {"message", …}}, and "latency_ms"."""


@dataclass
class Turn:
    endpoint: wire.Endpoint
    tools: list[ChatTool]
    mode: str  # "native" | "chatbot"
    step_limit: int
    runner: Runner
    emit: Emit
    guard: NetGuard | None = None
    stream: bool = True
    timeout: float = 120.0
    messages: list[wire.Message] = field(default_factory=list)
    id_prefix: str = ""  # ids of the page's items stay unique over a chat's turns
    # The tools as the sessions list them now, asked before each model request (a server's
    # tools/list_changed changes them mid-conversation); None: `tools` throughout.
    current_tools: Callable[[], list[ChatTool]] | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def new_id(self, prefix: str) -> str:
        return f"{self.id_prefix}{prefix}{next(self._ids)}"

    async def run(self, text: str) -> None:
        """The user's message, then the loop. The conversation grows in `self.messages`."""
        self.messages.append({"role": "user", "text": text})
        for _ in range(max(1, self.step_limit)):
            if self.current_tools is not None:
                self.tools = self.current_tools()
            by_name = {t.name: t for t in self.tools}
            if self.mode == "chatbot":
                system, rendered = toolset.chatbot_system(self.tools), []
            else:
                system, rendered = "", toolset.native(self.endpoint.api, self.tools)
            reply = await self._ask(system, rendered)
            if reply is None:
                return
            if self.mode == "chatbot":
                self.messages.append({"role": "assistant", "text": reply.text})
                kind, call = parse_chatbot(reply.text)
                if kind == "almost":
                    await self.emit(
                        {
                            "kind": "notice",
                            "level": "warn",
                            "text": f"The reply almost parses as a tool call, so it was not run: {call}",
                        }
                    )
                    return
                if kind == "text" or call is None:
                    return
                outcome, _ = await self._run_call(by_name, call.name, call.arguments)
                note = outcome.get("chatbot_text") or chatbot.result_text(outcome.get("result"))
                self.messages.append({"role": "note", "text": note[:RESULT_TEXT_MAX]})
                continue
            calls = [
                {"id": c.id or self.new_id("call_"), "name": c.name, "arguments": c.arguments} for c in reply.tool_calls
            ]
            self.messages.append({"role": "assistant", "text": reply.text, "tool_calls": calls})
            if not calls:
                return
            for i, c in enumerate(calls):
                try:
                    outcome, error = await self._run_call(by_name, c["name"], c["arguments"])
                except asyncio.CancelledError:
                    # Every call the model made gets an answer, or the next request is refused.
                    for left in calls[i:]:
                        stopped = {"role": "tool", "call_id": left["id"], "name": left["name"], "error": True}
                        self.messages.append({**stopped, "text": "Error: stopped by the user"})
                    raise
                self.messages.append(
                    {
                        "role": "tool",
                        "call_id": c["id"],
                        "name": c["name"],
                        "text": outcome["model_text"],
                        "error": error,
                    }
                )
        await self.emit(
            {
                "kind": "notice",
                "level": "error",
                "text": f"Stopped after {self.step_limit} model requests (the step limit): the model was still "
                "calling tools. Raise the limit or ask again.",
            }
        )

    async def _ask(self, system: str, tools: list[dict[str, Any]]) -> wire.Reply | None:
        reply_id = self.new_id("r")
        started = False

        async def on_text(piece: str) -> None:
            nonlocal started
            if not started:
                started = True
                await self.emit({"kind": "reply", "id": reply_id})
            await self.emit({"kind": "text", "id": reply_id, "piece": piece})

        exchange: wire.Exchange | None = None

        def keep(one: wire.Exchange) -> None:
            nonlocal exchange
            exchange = one

        try:
            reply, _ = await wire.complete(
                self.endpoint,
                system,
                self.messages,
                tools,
                stream=self.stream,
                on_text=on_text,
                guard=self.guard,
                timeout=self.timeout,
                on_exchange=keep,
            )
            return reply
        except wire.ModelError as exc:
            await self.emit({"kind": "notice", "level": "error", "text": str(exc)})
            return None
        finally:
            if exchange is not None:
                if exchange.ms is None:  # stopped mid-answer
                    exchange.error = exchange.error or "stopped"
                await asyncio.shield(self.emit({"kind": "exchange", "exchange": exchange.to_dict()}))

    async def _run_call(
        self, by_name: dict[str, ChatTool], name: str, arguments_text: str
    ) -> tuple[dict[str, Any], bool]:
        """Run one of the model's calls; (outcome with "model_text", whether it failed)."""
        card: dict[str, Any] = {"kind": "card", "id": self.new_id("t"), "name": name, "arguments": arguments_text}
        tool = by_name.get(name)
        if tool is None:
            return await self._refused(card, f"unknown tool {name!r}; the tools are: {', '.join(by_name) or 'none'}")
        card.update(server=tool.server, tool=tool.tool.get("name"), prefixed=tool.prefixed, session_id=tool.session_id)
        try:
            arguments = json.loads(arguments_text or "{}")
        except ValueError as exc:
            return await self._refused(card, f"the arguments are not JSON ({exc})")
        if not isinstance(arguments, dict):
            return await self._refused(card, "the arguments are not a JSON object")
        schema = tool.tool.get("inputSchema") or {"type": "object"}
        card["invalid"] = await avalidate_arguments(schema, arguments)  # shown; the server answers anyway
        card["state"] = "running"
        await self.emit(card)
        try:
            outcome = await self.runner.call(tool, arguments, card["id"])
        except asyncio.CancelledError:
            card.update(state="cancelled", error={"message": "stopped by the user"})
            await asyncio.shield(self.emit(card))
            raise
        card.update(state="done", latency_ms=outcome.get("latency_ms"))
        failed = "error" in outcome or bool((outcome.get("result") or {}).get("isError"))
        if "error" in outcome:
            card["error"] = outcome["error"]
            text = f"Error: {outcome['error'].get('message', outcome['error'])}"
        else:
            card["result"] = outcome.get("result")
            text = result_for_model(outcome.get("result"))
        card["failed"] = failed
        await self.emit(card)
        if "error" in outcome:
            outcome["chatbot_text"] = f"Error executing tool: {outcome['error'].get('message', '')}"
        outcome["model_text"] = text[:RESULT_TEXT_MAX]
        return outcome, failed

    async def _refused(self, card: dict[str, Any], why: str) -> tuple[dict[str, Any], bool]:
        """A call that never reaches a server: shown, and told to the model."""
        card.update(state="refused", error={"message": why})
        await self.emit(card)
        return {"model_text": f"Error: {why}", "chatbot_text": f"Error executing tool: {why}"}, True


def result_for_model(result: Any) -> str:
    """A tools/call result as text for the model: its text blocks, other blocks and
    structuredContent as JSON (what hosts send back)."""
    if not isinstance(result, dict):
        return json.dumps(result)
    parts = []
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(json.dumps(block)[:2000])
    if "structuredContent" in result and not parts:
        parts.append(json.dumps(result["structuredContent"]))
    return "\n".join(parts) or json.dumps(result)


@dataclass
class ChatbotCall:
    name: str
    arguments: str


def parse_chatbot(text: str) -> tuple[str, Any]:
    """The simple-chatbot way: ("call", ChatbotCall) for a reply that is a JSON object with
    "tool" and "arguments"; ("almost", why) for one that looks meant as a call but is not
    one; ("text", None) otherwise."""
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except ValueError as exc:
        fenced = _FENCE.match(stripped)
        if fenced:
            return "almost", "it is wrapped in a ``` code block (the reply must be the JSON object alone)"
        if stripped.startswith("{") or '"tool"' in stripped:
            return "almost", f"it is not valid JSON ({exc})"
        return "text", None
    if isinstance(value, dict) and "tool" in value and "arguments" in value:
        return "call", ChatbotCall(str(value["tool"]), json.dumps(value["arguments"]))
    if isinstance(value, dict):
        missing = [k for k in ("tool", "arguments") if k not in value]
        return "almost", f"the JSON object has no {' or '.join(repr(k) for k in missing)}"
    return "text", None
