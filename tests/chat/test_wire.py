"""The model wire against the test's model API, and that API proven to speak the real formats:
the official `openai` and `anthropic` clients parse the same served answers to the same tool
calls and text as playground/chat/wire.py does."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from playground import budget
from playground.chat import wire
from playground.mcp.netguard import NetGuard

from .model_api import Answer, ModelApi, Turn

CALL = ("echo", json.dumps({"message": 'héllo "quoted" {braces}'}))


def tool_then_text(turn: Turn) -> Answer:
    if turn.last_tool_result():
        return Answer(text=f"The tool said: {turn.last_tool_result()}")
    return Answer(text="Let me call it.", tool_calls=[CALL])


@pytest.fixture
async def api():
    async with ModelApi(tool_then_text) as served:
        yield served


async def test_openai_client_parses_the_served_stream(api):
    client = openai.AsyncOpenAI(base_url=api.base_url, api_key="sk-test-key", max_retries=0)
    stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    text, args, name = "", "", ""
    async for chunk in stream:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                name += call.function.name or ""
                args += call.function.arguments or ""
    assert (text, name, json.loads(args)) == ("Let me call it.", CALL[0], json.loads(CALL[1]))
    full = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert full.choices[0].message.tool_calls[0].function.arguments == CALL[1]


async def test_anthropic_client_parses_the_served_stream(api):
    client = anthropic.AsyncAnthropic(base_url=api.base_url.removesuffix("/v1"), api_key="sk-ant-key", max_retries=0)
    async with client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as s:
        message = await s.get_final_message()
    blocks = {b.type: b for b in message.content}
    assert blocks["text"].text == "Let me call it."
    assert (blocks["tool_use"].name, blocks["tool_use"].input) == (CALL[0], json.loads(CALL[1]))
    assert message.stop_reason == "tool_use" and message.usage.output_tokens == 15
    full = await client.messages.create(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}])
    assert full.content[1].input == json.loads(CALL[1])


@pytest.mark.parametrize("api_name", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [True, False])
async def test_wire_reads_both_families(api, api_name, stream):
    endpoint = wire.Endpoint(api_name, api.base_url, "sk-secret-abcdef-123456", "m")
    streamed: list[str] = []

    async def on_text(piece: str) -> None:
        streamed.append(piece)

    messages = [{"role": "user", "text": "hi"}]
    reply, exchange = await wire.complete(endpoint, "be brief", messages, [], stream=stream, on_text=on_text)
    assert reply.text == "Let me call it." and "".join(streamed) == reply.text
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [(CALL[0], json.loads(CALL[1]))]
    assert len(streamed) > 1 if stream else len(streamed) == 1  # token by token when streamed
    assert reply.usage and exchange.status == 200 and exchange.ms is not None
    assert "sk-secret-abcdef-123456" not in json.dumps(exchange.to_dict())  # the key masked in the lane
    # The tool result goes back in the API's own shape, and the answer is computed from it.
    messages += [
        {"role": "assistant", "text": reply.text, "tool_calls": [c.__dict__ for c in reply.tool_calls]},
        {"role": "tool", "call_id": reply.tool_calls[0].id, "name": "echo", "text": "Echo: 42"},
    ]
    final, _ = await wire.complete(endpoint, "", messages, [], stream=stream)
    assert final.text == "The tool said: Echo: 42" and not final.tool_calls
    # The official client accepts the conversation the wire wrote (the request is the real shape).
    url, headers, body = wire.request_of(endpoint, "", messages, [], stream=False)
    if api_name == "openai":
        client = openai.AsyncOpenAI(base_url=api.base_url, api_key="k", max_retries=0)
        again = await client.chat.completions.create(model="m", messages=body["messages"])
        assert again.choices[0].message.content == "The tool said: Echo: 42"
    else:
        client2 = anthropic.AsyncAnthropic(base_url=api.base_url.removesuffix("/v1"), api_key="k", max_retries=0)
        again2 = await client2.messages.create(model="m", max_tokens=10, messages=body["messages"])
        assert again2.content[0].text == "The tool said: Echo: 42"


@pytest.mark.parametrize("api_name", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (Answer(status=401, text="bad key"), "HTTP 401 from the model API: the API key was refused — bad key"),
        (Answer(status=429, text="slow down"), "HTTP 429 from the model API: rate limited"),
        (Answer(status=500, text="boom"), "HTTP 500 from the model API: the provider failed — boom"),
        (Answer(raw=b"data: {not json\n\n"), "malformed stream: a chunk is not JSON"),
        (Answer(raw=b""), "malformed stream: it ended without"),
    ],
)
async def test_wire_failures_are_said(api_name, answer, said):
    async with ModelApi(lambda turn: answer) as api:
        endpoint = wire.Endpoint(api_name, api.base_url, "k" * 20, "m")
        with pytest.raises(wire.ModelError) as caught:
            await wire.complete(endpoint, "", [{"role": "user", "text": "hi"}], [])
    assert said in str(caught.value)
    assert caught.value.exchange.error == str(caught.value)  # type: ignore[attr-defined]


async def test_a_slow_provider_times_out_and_a_down_one_is_said():
    async with ModelApi(lambda turn: Answer(hang=True)) as api:
        endpoint = wire.Endpoint("openai", api.base_url, "", "m")
        with pytest.raises(wire.ModelError, match="did not answer in time"):
            await wire.complete(endpoint, "", [{"role": "user", "text": "hi"}], [], timeout=0.3)
        port = api.server.port
    down = wire.Endpoint("openai", f"http://127.0.0.1:{port}/v1", "", "m")
    with pytest.raises(wire.ModelError, match="cannot reach the model API"):
        await wire.complete(down, "", [{"role": "user", "text": "hi"}], [])


async def test_the_address_guard_refuses_before_connecting():
    refuse = NetGuard(lambda ip: "refused here" if ip.is_loopback else None)
    async with ModelApi(tool_then_text) as api:
        endpoint = wire.Endpoint("anthropic", api.base_url, "k", "m")
        with pytest.raises(wire.ModelError, match="refused by the address guard"):
            await wire.complete(endpoint, "", [{"role": "user", "text": "hi"}], [], guard=refuse)
        assert api.turns == []


@pytest.mark.parametrize("stream", [True, False])
async def test_a_reply_past_its_budget_is_not_read_further(stream):
    """A model (or something posing as one) sending without end: the budget stops the reading."""
    text = "x" * (budget.MODEL_REPLY.output + 10)
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}
    huge = Answer(raw=f"data: {json.dumps(chunk)}\n\n".encode()) if stream else Answer(text=text)
    async with ModelApi(lambda turn: huge) as api:
        endpoint = wire.Endpoint("openai", api.base_url, "", "m")
        with pytest.raises(wire.ModelError, match=budget.MODEL_REPLY.says):
            await wire.complete(endpoint, "", [{"role": "user", "text": "hi"}], [], stream=stream)
