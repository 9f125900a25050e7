"""`completion/complete` as the user types in a prompt's or a template's field: suggestions
for the asking tab only, and only if no newer keystroke for the same field asked again."""

from __future__ import annotations

import json
from typing import Any

from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import TransportError

from ..fragments.html import oob
from ..protocol import Command
from .base import Feature, render
from .context import SessionContext, TabContext

MAX_VALUES = 100  # suggestions shown for one field


class Completion(Feature):
    name = "completion"
    actions = frozenset({"complete"})

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        ref_type, target = str(content.get("ref_type") or ""), str(content.get("target") or "")
        if ref_type not in ("ref/prompt", "ref/resource") or not target or not content.get("argument"):
            return None
        ref = {"type": ref_type, ("name" if ref_type == "ref/prompt" else "uri"): str(content.get("ref") or "")}
        try:
            context = json.loads(content.get("context") or "{}")
        except ValueError:
            context = {}
        context = (
            {str(k): str(v) for k, v in context.items() if v not in ("", None)} if isinstance(context, dict) else {}
        )
        return {
            "command": "complete",
            "reply_channel": tab.channel_name,
            "key": target,
            "params": {
                "ref": ref,
                "context": context,
                "argument": {"name": str(content["argument"]), "value": str(content.get("value") or "")},
            },
        }

    @classmethod
    def fragments(cls, event: dict[str, Any], tab: TabContext) -> list[str]:
        return [oob(event["target"], "outerHTML", render("sessions/features/completion.html", {"c": event}))]

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self._asked: dict[str, int] = {}  # field -> the latest question's number

    async def handle(self, command: Command) -> None:
        if self.ctx.client is None or self.ctx.client.closed:
            return
        target = str(command.get("key") or "")
        self._asked[target] = seq = self._asked.get(target, 0) + 1
        self.ctx.spawn(f"complete-{target}", self._complete(self.ctx.client, command, target, seq))

    async def _complete(self, client: McpClient, command: Command, target: str, seq: int) -> None:
        params = command.get("params") or {}
        reply: dict[str, Any] = {"target": target, "values": [], "error": ""}
        try:
            result = await client.complete(params["ref"], params["argument"], params.get("context") or None)
            completion = result.get("completion") if isinstance(result, dict) else None
            if isinstance(completion, dict):
                reply["values"] = [str(v) for v in completion.get("values") or []][:MAX_VALUES]
                reply["total"] = completion.get("total")
                reply["has_more"] = completion.get("hasMore") is True
        except (JsonRpcError, RequestTimeout, TransportError) as exc:
            reply["error"] = str(exc)
        if self._asked.get(target) == seq and command.get("reply_channel"):
            await self.ctx.reply(command["reply_channel"], self.name, reply)
