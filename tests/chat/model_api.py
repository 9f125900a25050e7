"""A model API on 127.0.0.1 for the tests: scripted answers written in the real wire formats of
OpenAI Chat Completions and Anthropic Messages, streamed (SSE) or not, as the request asks.

The shapes follow the APIs' documentation (OpenAI's `chat.completion.chunk` with tool-call
deltas and `data: [DONE]`; Anthropic's `message_start` … `input_json_delta` … `message_stop`);
test_model_api.py proves them by parsing the served streams with the official clients.

A script is a function of the request's body (the neutral view: `Turn`) -> `Answer`, so a final
answer can be computed from the tool result the model received.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.http_peers import FaultServer, Request, head


@dataclass
class Answer:
    text: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments as text)
    status: int = 200  # an error status: `text` is the error message
    raw: bytes | None = None  # written as is after the head (a malformed stream)
    hang: bool = False  # never answer


@dataclass
class Turn:
    api: str
    body: dict[str, Any]

    def last_tool_result(self) -> str:
        """The content of the last tool result (or simple-chatbot result note) the model got."""
        for message in reversed(self.body.get("messages", [])):
            if (
                self.api == "openai"
                and message.get("role") in ("tool", "system")
                and message is not self.body["messages"][0]
            ):
                return str(message.get("content"))
            if self.api == "anthropic" and message.get("role") == "user" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if block.get("type") == "tool_result":
                        return str(block.get("content"))
                    if block.get("type") == "text" and block.get("text", "").startswith(
                        ("Tool execution result", "Error executing tool")
                    ):
                        return block["text"]
        return ""

    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") or []
        return [t["function"]["name"] if self.api == "openai" else t["name"] for t in tools]


Script = Callable[[Turn], Answer]


def _sse(event: str | None, data: Any) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    return ((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode()


def pieces(text: str, n: int = 4) -> list[str]:
    return [text[i : i + n] for i in range(0, len(text), n)] or []


def openai_stream(answer: Answer, model: str) -> list[bytes]:
    base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse(None, {**base, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) for p in pieces(answer.text)]
    for i, (name, arguments) in enumerate(answer.tool_calls):
        start = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(chunk({"tool_calls": [start]}))
        out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in pieces(arguments, 7)]
    out.append(chunk({}, "tool_calls" if answer.tool_calls else "stop"))
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    out.append(_sse(None, {**base, "choices": [], "usage": usage}))
    out.append(_sse(None, "[DONE]"))
    return out


def openai_body(answer: Answer, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None, "refusal": None}
    if answer.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(answer.tool_calls)
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if answer.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def anthropic_stream(answer: Answer, model: str) -> list[bytes]:
    start = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 1},
    }
    out = [_sse("message_start", {"type": "message_start", "message": start}), _sse("ping", {"type": "ping"})]
    index = 0
    if answer.text:
        out.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
        )
        for p in pieces(answer.text):
            delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            out.append(_sse("content_block_delta", delta))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for i, (name, arguments) in enumerate(answer.tool_calls, start=index):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}}
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": block}))
        for p in pieces(arguments, 7):
            delta = {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            out.append(_sse("content_block_delta", delta))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = "tool_use" if answer.tool_calls else "end_turn"
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 15},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


def anthropic_body(answer: Answer, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": json.loads(a)}
        for i, (n, a) in enumerate(answer.tool_calls)
    ]
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": model,
        "stop_reason": "tool_use" if answer.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 15},
    }


class ModelApi:
    """Serves both families: POST /v1/chat/completions (OpenAI) and /v1/messages (Anthropic)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.turns: list[Turn] = []
        self.requests: list[Request] = []
        self.server = FaultServer(self._handle)

    async def __aenter__(self) -> ModelApi:
        await self.server.__aenter__()
        self.base_url = f"http://127.0.0.1:{self.server.port}/v1"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.server.__aexit__(*exc)

    async def _handle(self, request: Request, writer: asyncio.StreamWriter) -> None:
        api = "anthropic" if request.path.endswith("/messages") else "openai"
        body = json.loads(request.body or b"{}")
        turn = Turn(api, body)
        self.turns.append(turn)
        self.requests.append(request)
        answer = self.script(turn)
        model = str(body.get("model", "m"))
        if answer.hang:
            await asyncio.Event().wait()
        if answer.status != 200:
            error = (
                {"type": "error", "error": {"type": "api_error", "message": answer.text}}
                if api == "anthropic"
                else {"error": {"message": answer.text, "type": "error", "code": None}}
            )
            payload = json.dumps(error).encode()
            writer.write(
                head(f"{answer.status} Error", "application/json", f"Content-Length: {len(payload)}\r\n") + payload
            )
            await writer.drain()
            return
        if body.get("stream"):
            writer.write(head("200 OK", "text/event-stream"))
            if answer.raw is not None:
                writer.write(answer.raw)
            else:
                for chunk in (openai_stream if api == "openai" else anthropic_stream)(answer, model):
                    writer.write(chunk)
                    await writer.drain()
            await writer.drain()
            return
        payload = json.dumps((openai_body if api == "openai" else anthropic_body)(answer, model)).encode()
        writer.write(head("200 OK", "application/json", f"Content-Length: {len(payload)}\r\n") + payload)
        await writer.drain()
