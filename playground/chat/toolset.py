"""The tools a chat's model gets: those of every ticked server, named uniquely, rendered exactly
as Model view renders them for the API (modelview/providers.py), or written into the system
prompt as the SDK's simple-chatbot does (modelview/chatbot.py). No Django."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from playground.modelview import chatbot, providers

_NOT_NAME = re.compile(r"[^a-zA-Z0-9_-]+")
NAME_MAX = 64  # both APIs: ^[a-zA-Z0-9_-]{1,64}$


@dataclass(frozen=True)
class ChatTool:
    name: str  # as the model sees it
    server: str
    session_id: int
    tool: dict[str, Any]  # the server's own (its name, its inputSchema)

    @property
    def prefixed(self) -> bool:
        return self.name != self.tool.get("name")

    def as_model_sees(self) -> dict[str, Any]:
        return {**self.tool, "name": self.name}


def unique_tools(servers: list[tuple[str, int, list[dict[str, Any]]]]) -> list[ChatTool]:
    """(server name, session id, its tools) -> the chat's tools. A name two servers share is
    prefixed with each server's name (`server_tool`), as hosts do; others keep theirs."""
    counts = Counter(str(t.get("name")) for _, _, tools in servers for t in tools)
    out: list[ChatTool] = []
    taken: set[str] = set()
    tries: Counter[str] = Counter()  # per name wanted: the suffixes tried so far
    for server, session_id, tools in servers:
        for tool in tools:
            name = str(tool.get("name"))
            if counts[name] > 1:
                name = (_NOT_NAME.sub("_", server).strip("_") or "server") + "_" + name
                name = name[:NAME_MAX]
            wanted = name
            while name in taken:  # (a prefixed name equal to another's, a server listing one twice)
                tries[wanted] += 1
                suffix = f"_{tries[wanted] + 1}"
                name = wanted[: NAME_MAX - len(suffix)] + suffix
            taken.add(name)
            out.append(ChatTool(name, server, session_id, tool))
    return out


def native(api: str, tools: list[ChatTool]) -> list[dict[str, Any]]:
    """The request's `tools`: Model view's rendering for the API, under the chat's names."""
    target = providers.BY_ID["anthropic" if api == "anthropic" else "openai-chat"]
    return providers.render(target, [t.as_model_sees() for t in tools])


def chatbot_system(tools: list[ChatTool]) -> str:
    """The simple-chatbot example's system prompt, its tools part as Model view renders it."""
    return (
        "You are a helpful assistant with access to these tools:\n\n"
        f"{chatbot.tools_text([t.as_model_sees() for t in tools])}\n"
        "Choose the appropriate tool based on the user's question. If no tool is needed, reply directly.\n\n"
        "IMPORTANT: When you need to use a tool, you must ONLY respond with the exact JSON object format "
        'below, nothing else:\n{\n    "tool": "tool-name",\n    "arguments": {\n        "argument-name": "value"\n'
        "    }\n}\n\nAfter receiving a tool's response:\n1. Transform the raw data into a natural, conversational "
        "response\n2. Keep responses concise but informative\n3. Focus on the most relevant information\n"
        "4. Use appropriate context from the user's question\n5. Avoid simply repeating the raw data\n\n"
        "Please use only the tools that are explicitly defined above."
    )
