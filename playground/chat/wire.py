"""The model wire: one request to a model API (OpenAI Chat Completions or Anthropic Messages),
streamed or not, and its exchange recorded for the model lane. No Django.

httpx (through the address guard) and httpx-sse, not the official `openai`/`anthropic` clients:
a debugger records the exact wire (every SSE chunk as it came, the status, the headers), and the
official clients hide the raw chunks, retry 429/5xx silently (a person testing a provider must
see the 429), and would need their HTTP client swapped for the guarded one anyway. The tests
cross-check: the official clients parse the same served streams to the same calls and text.

The conversation is kept in one neutral form (`Message`) and written per API here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from httpx_sse import EventSource, SSEError

from playground.budget import MODEL_REPLY, Budget, OverBudget
from playground.mcp.netguard import NetGuard
from playground.mcp.secrets import MASK

Api = Literal["openai", "anthropic"]
ANTHROPIC_VERSION = "2023-06-01"
MAX_TOKENS = 4096  # Anthropic requires max_tokens
CHUNKS_KEPT = 2000  # raw chunks recorded per exchange (the assembled message is always kept)
ERROR_BODY_SHOWN = 2000

# A neutral message: {"role": "user"|"assistant"|"tool"|"note", "text": str,
#   "tool_calls": [{"id", "name", "arguments"(text)}] (assistant), "call_id", "name", "error" (tool)}.
# "note" is a text sent back to a model without tool calling (the simple-chatbot way's results).
Message = dict[str, Any]
OnText = Callable[[str], Awaitable[None]]


class ModelError(Exception):
    """The model API failed; the message says how, in words for the chat."""


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # the model's text, parsed later (it may not be JSON)


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class Endpoint:
    api: Api
    base_url: str
    api_key: str
    model: str


def masked_key(key: str) -> str:
    return f"{key[:3]}{MASK}" if len(key) > 12 else MASK


def request_of(
    endpoint: Endpoint, system: str, messages: list[Message], tools: list[dict[str, Any]], stream: bool
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(url, headers, body) of one request; `tools` already rendered for the API (Model view)."""
    base = endpoint.base_url.rstrip("/")
    if endpoint.api == "anthropic":
        url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        headers = {"x-api-key": endpoint.api_key, "anthropic-version": ANTHROPIC_VERSION}
        body: dict[str, Any] = {
            "model": endpoint.model,
            "max_tokens": MAX_TOKENS,
            "messages": anthropic_messages(messages),
        }
        if system:
            body["system"] = system
    else:
        url = base + "/chat/completions"
        headers = {"authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        body = {"model": endpoint.model, "messages": openai_messages(system, messages)}
        if stream:
            body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = tools
    if stream:
        body["stream"] = True
    return url, {"content-type": "application/json", **headers}, body


def openai_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m["role"] == "assistant":
            one: dict[str, Any] = {"role": "assistant", "content": m.get("text") or None}
            if m.get("tool_calls"):
                one["tool_calls"] = [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in m["tool_calls"]
                ]
            out.append(one)
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["call_id"], "content": m["text"]})
        elif m["role"] == "note":
            out.append({"role": "system", "content": m["text"]})  # as the simple-chatbot example sends it
        else:
            out.append({"role": "user", "content": m["text"]})
    return out


def anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages alternate user/assistant; tool results are user content blocks, merged."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for m in messages:
        if m["role"] == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m["text"]}] if m.get("text") else []
            for c in m.get("tool_calls") or []:
                blocks.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": _object(c["arguments"])})
            add("assistant", blocks)
        elif m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["call_id"], "content": m["text"]}
            if m.get("error"):
                block["is_error"] = True
            add("user", [block])
        else:
            add("user", [{"type": "text", "text": m["text"]}])
    return out


def _object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# --- the exchange ----------------------------------------------------------------------------------


@dataclass
class Exchange:
    """One request and its response, as the model lane shows it (the key masked)."""

    api: Api
    url: str
    request_headers: dict[str, str]
    request: dict[str, Any]
    started: float = field(default_factory=time.time)
    status: int | None = None
    chunks: list[str] = field(default_factory=list)
    chunks_dropped: int = 0
    response: Any = None  # the JSON body, or the message assembled from the stream
    usage: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    ms: float | None = None
    budget: Budget = field(default_factory=MODEL_REPLY.budget, repr=False)  # what the model may make us hold

    def chunk(self, text: str) -> None:
        self.budget.spend()
        self.budget.emit(len(text))
        if len(self.chunks) < CHUNKS_KEPT:
            self.chunks.append(text)
        else:
            self.chunks_dropped += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "url": self.url,
            "request_headers": self.request_headers,
            "request": self.request,
            "status": self.status,
            "chunks": self.chunks,
            "chunks_dropped": self.chunks_dropped,
            "response": self.response,
            "usage": self.usage,
            "error": self.error,
            "ms": self.ms,
        }  # (not the budget)


async def complete(
    endpoint: Endpoint,
    system: str,
    messages: list[Message],
    tools: list[dict[str, Any]],
    *,
    stream: bool = True,
    on_text: OnText | None = None,
    guard: NetGuard | None = None,
    timeout: float = 120.0,
    on_exchange: Callable[[Exchange], None] | None = None,
) -> tuple[Reply, Exchange]:
    """One model request. Raises ModelError (its exchange attached as `.exchange`) on failure."""
    url, headers, body = request_of(endpoint, system, messages, tools, stream)
    shown = {
        k: (v.replace(endpoint.api_key, masked_key(endpoint.api_key)) if endpoint.api_key else v)
        for k, v in headers.items()
    }
    exchange = Exchange(endpoint.api, url, shown, body)
    if on_exchange is not None:
        on_exchange(exchange)
    started = time.monotonic()
    client = guard.client(timeout=httpx.Timeout(timeout, connect=10.0)) if guard else httpx.AsyncClient(timeout=timeout)
    try:
        async with client, client.stream("POST", url, headers=headers, json=body) as response:
            exchange.status = response.status_code
            if response.status_code >= 400:
                raw = await _read(response, exchange)
                exchange.response = _json_or_text(raw)
                raise ModelError(_status_message(response.status_code, raw))
            if stream and response.headers.get("content-type", "").startswith("text/event-stream"):
                parse = _openai_stream if endpoint.api == "openai" else _anthropic_stream
                reply = await parse(EventSource(response), exchange, on_text)
            else:
                raw = await _read(response, exchange)
                exchange.chunks.append(raw[: 1 << 20])
                try:
                    data = json.loads(raw)
                except ValueError as exc:
                    raise ModelError(f"the model API's answer is not JSON ({exc})") from exc
                exchange.response = data
                reply = _openai_body(data) if endpoint.api == "openai" else _anthropic_body(data)
                if reply.text and on_text is not None:
                    await on_text(reply.text)
            exchange.usage = reply.usage
            return reply, exchange
    except OverBudget as exc:
        exchange.error = f"{exc} (the answer was not read further)"
        raise _failed(exchange) from exc
    except ModelError as exc:
        exchange.error = str(exc)
        exc.exchange = exchange  # type: ignore[attr-defined]
        raise
    except httpx.TimeoutException as exc:
        exchange.error = f"the model API did not answer in time ({type(exc).__name__})"
        raise _failed(exchange) from exc
    except httpx.ConnectError as exc:
        exchange.error = f"cannot reach the model API at {url}: {exc}"
        raise _failed(exchange) from exc
    except (httpx.HTTPError, SSEError) as exc:
        exchange.error = f"the model API's answer broke off: {exc or type(exc).__name__}"
        raise _failed(exchange) from exc
    finally:
        exchange.ms = round((time.monotonic() - started) * 1000, 1)


async def _read(response: httpx.Response, exchange: Exchange) -> str:
    """A whole body, within the reply's budget (a body is held before it is parsed)."""
    parts = []
    async for part in response.aiter_bytes():
        exchange.budget.emit(len(part))
        parts.append(part)
    return b"".join(parts).decode("utf-8", "replace")


def _failed(exchange: Exchange) -> ModelError:
    error = ModelError(exchange.error or "failed")
    error.exchange = exchange  # type: ignore[attr-defined]
    return error


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw[:ERROR_BODY_SHOWN]


def _status_message(status: int, raw: str) -> str:
    body = _json_or_text(raw)
    detail = ""
    if isinstance(body, dict):
        error = body.get("error")
        detail = str(error.get("message", "")) if isinstance(error, dict) else str(error or "")
    elif isinstance(body, str):
        detail = body[:300]
    what = {
        401: "the API key was refused",
        403: "the API key may not use this",
        404: "not found (the base URL or the model's name?)",
        429: "rate limited or out of quota",
    }.get(status, "the provider failed" if status >= 500 else "the request was refused")
    return f"HTTP {status} from the model API: {what}" + (f" — {detail}" if detail else "")


def _data(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ModelError(f"malformed stream: a chunk is not JSON ({exc}): {text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise ModelError(f"malformed stream: a chunk is not an object: {text[:200]!r}")
    return value


# --- OpenAI Chat Completions ------------------------------------------------------------------------


def _openai_body(data: Any) -> Reply:
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ModelError(f"the model API's answer has no choices[0].message ({exc!r})") from exc
    calls = [
        ToolCall(str(c.get("id", "")), str(c["function"].get("name", "")), str(c["function"].get("arguments", "")))
        for c in message.get("tool_calls") or []
        if isinstance(c, dict) and isinstance(c.get("function"), dict)
    ]
    return Reply(str(message.get("content") or ""), calls, choice.get("finish_reason"), data.get("usage") or {})


async def _openai_stream(source: EventSource, exchange: Exchange, on_text: OnText | None) -> Reply:
    reply = Reply()
    calls: dict[int, dict[str, str]] = {}
    done = False
    async for event in source.aiter_sse():
        exchange.chunk(event.data)
        if event.data.strip() == "[DONE]":
            done = True
            break
        chunk = _data(event.data)
        if isinstance(chunk.get("error"), dict):
            raise ModelError(
                f"the model API sent an error in the stream: {chunk['error'].get('message', chunk['error'])}"
            )
        if chunk.get("usage"):
            reply.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                reply.text += delta["content"]
                if on_text is not None:
                    await on_text(delta["content"])
            for part in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(part.get("index", 0)), {"id": "", "name": "", "arguments": ""})
                slot["id"] = part.get("id") or slot["id"]
                function = part.get("function") or {}
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                reply.stop_reason = choice["finish_reason"]
    if not done:
        raise ModelError("malformed stream: it ended without data: [DONE]")
    reply.tool_calls = [ToolCall(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]
    exchange.response = {
        "role": "assistant",
        "content": reply.text or None,
        "tool_calls": [c.__dict__ for c in reply.tool_calls],
        "finish_reason": reply.stop_reason,
    }
    return reply


# --- Anthropic Messages -----------------------------------------------------------------------------


def _anthropic_body(data: Any) -> Reply:
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise ModelError("the model API's answer has no content list")
    reply = Reply(stop_reason=data.get("stop_reason"), usage=data.get("usage") or {})
    for block in data["content"]:
        if block.get("type") == "text":
            reply.text += str(block.get("text", ""))
        elif block.get("type") == "tool_use":
            reply.tool_calls.append(
                ToolCall(str(block.get("id", "")), str(block.get("name", "")), json.dumps(block.get("input", {})))
            )
    return reply


async def _anthropic_stream(source: EventSource, exchange: Exchange, on_text: OnText | None) -> Reply:
    reply = Reply()
    blocks: dict[int, dict[str, Any]] = {}
    stopped = False
    async for event in source.aiter_sse():
        exchange.chunk(f"event: {event.event}\ndata: {event.data}")
        if event.event == "ping":
            continue
        data = _data(event.data)
        kind = data.get("type", event.event)
        if kind == "error":
            error = data.get("error") or {}
            raise ModelError(
                f"the model API sent an error in the stream: {error.get('type', '')} {error.get('message', '')}".strip()
            )
        if kind == "message_start":
            reply.usage = dict((data.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            block = dict(data.get("content_block") or {})
            block["partial_json"] = ""
            blocks[int(data.get("index", 0))] = block
        elif kind == "content_block_delta":
            started_block = blocks.get(int(data.get("index", 0)))
            delta = data.get("delta") or {}
            if started_block is None:
                raise ModelError("malformed stream: a content_block_delta for a block never started")
            block = started_block
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
                reply.text += delta.get("text", "")
                if on_text is not None and delta.get("text"):
                    await on_text(delta["text"])
            elif delta.get("type") == "input_json_delta":
                block["partial_json"] += delta.get("partial_json", "")
        elif kind == "message_delta":
            reply.stop_reason = (data.get("delta") or {}).get("stop_reason") or reply.stop_reason
            reply.usage.update(data.get("usage") or {})
        elif kind == "message_stop":
            stopped = True
            break
    if not stopped:
        raise ModelError("malformed stream: it ended without message_stop")
    for _, block in sorted(blocks.items()):
        if block.get("type") == "tool_use":
            arguments = block["partial_json"] or json.dumps(block.get("input") or {})
            reply.tool_calls.append(ToolCall(str(block.get("id", "")), str(block.get("name", "")), arguments))
    exchange.response = {
        "role": "assistant",
        "content": [{k: v for k, v in b.items() if k != "partial_json" or v} for _, b in sorted(blocks.items())],
        "stop_reason": reply.stop_reason,
    }
    return reply
