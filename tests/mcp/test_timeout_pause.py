"""A request's timeout stops while a server request it caused waits for an answer (a person
answering an elicitation, a sampling request), and starts afresh once the answer is sent.

The in-memory peer plays the server; the responder answers only after several timeouts have
gone by (time has to pass for that: the waits below are the person's slowness, not test
synchronisation). End to end, against server-everything and the SDK peer, in
tests/browser/test_workspace.py."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.events import Tap
from tests.mcp.memory import MemoryTransport

TIMEOUT = 0.2
SLOW = 3 * TIMEOUT  # how long the "person" takes to answer
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="")


class SlowPerson:
    """Answers elicitations after SLOW seconds; remembers in which caller's context it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def capabilities(self) -> dict[str, Any]:
        return {"elicitation": {"form": {}}, "roots": {}}

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((method, CALLER.get()))
        if method == "roots/list":
            return {"roots": []}
        await asyncio.sleep(SLOW)
        return {"action": "accept", "content": {"name": "Ada"}}


def make(handler, responder: Any = None, era: str = "legacy") -> tuple[McpClient, list[Any]]:
    tap = Tap()
    events: list[Any] = []
    tap.subscribe(events.append)
    return McpClient(MemoryTransport(tap, handler), tap=tap, responder=responder or SlowPerson(), era=era), events


async def answered(t: MemoryTransport, request_id: Any) -> dict[str, Any]:
    """The client's answer to the server request `request_id` (once sent)."""
    while True:
        for frame in t.sent:
            if isinstance(frame, dict) and frame.get("id") == request_id and "method" not in frame:
                return frame
        await t.wait_sent(len(t.sent) + 1)


def eliciting_server(related_task: str | None = None):
    """tools/call "ask" (or tasks/result): asks for a name on the request's own stream, then answers."""

    async def ask(t: MemoryTransport, msg: dict[str, Any]) -> None:
        params: dict[str, Any] = {"message": "Name?", "requestedSchema": {"type": "object"}}
        if related_task:
            params["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": related_task}}
        t.deliver({"jsonrpc": "2.0", "id": f"s-{msg['id']}", "method": "elicitation/create", "params": params})
        reply = await answered(t, f"s-{msg['id']}")
        t.reply(msg, {"content": [{"type": "text", "text": "Hello " + reply["result"]["content"]["name"]}]})

    def handle(t: MemoryTransport, msg: dict[str, Any]):
        if msg.get("method") in ("tools/call", "tasks/result") and (
            msg["params"].get("name") == "ask" or msg["method"] == "tasks/result"
        ):
            return ask(t, msg)
        return None

    return handle


async def test_a_slow_answer_to_an_elicitation_keeps_the_calls_result():
    client, events = make(eliciting_server())
    await client.start()
    CALLER.set("call-7")
    result = await client.call_tool("ask", {}, timeout=TIMEOUT)
    assert result["content"][0]["text"] == "Hello Ada"
    assert not any(e.kind == "timeout" for e in events)
    assert not any(m.get("method") == "notifications/cancelled" for m in client.transport.sent)
    # Said in the transcript: the call waited past its timeout, and why that was fine.
    assert any(e.kind == "info" and "waited past its 0.2 s timeout" in (e.text or "") for e in events)
    # The request was answered in the context of the call that caused it (the page threads it there).
    assert client.responder.asked == [("elicitation/create", "call-7")]


async def test_the_timeout_starts_afresh_after_the_answer():
    """Paused, not disabled: a server that goes silent after the answer still times out."""

    async def ask_then_hang(t: MemoryTransport, msg: dict[str, Any]) -> None:
        t.deliver(
            {
                "jsonrpc": "2.0",
                "id": "s1",
                "method": "elicitation/create",
                "params": {"message": "Name?", "requestedSchema": {"type": "object"}},
            }
        )

    client, events = make(lambda t, m: ask_then_hang(t, m) if m.get("method") == "tools/call" else None)
    await client.start()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(RequestTimeout):
        await client.call_tool("ask", {}, timeout=TIMEOUT)
    assert loop.time() - started >= SLOW + TIMEOUT  # the person's time, then a whole timeout
    await answered(client.transport, "s1")
    cancel = client.transport.sent[-1]
    assert cancel["method"] == "notifications/cancelled"


async def test_where_the_transport_cannot_tell_every_request_in_flight_waits():
    """stdio and HTTP+SSE carry no link between a server request and the call that caused it:
    every request in flight with a timeout stops its clock; one without (a listen stream) is untouched."""
    calls: list[dict[str, Any]] = []
    client, events = make(lambda t, m: calls.append(m) if m.get("method") == "tools/call" else None)
    await client.start()
    first = asyncio.create_task(client.call_tool("a", {}, timeout=TIMEOUT))
    second = asyncio.create_task(client.call_tool("b", {}, timeout=TIMEOUT))
    t = client.transport
    await t.wait_sent(2)
    t.deliver(
        {
            "jsonrpc": "2.0",
            "id": "s1",
            "method": "elicitation/create",  # from outside any request
            "params": {"message": "?", "requestedSchema": {"type": "object"}},
        }
    )
    reply = await answered(t, "s1")  # after SLOW: both calls would have timed out
    assert reply["result"]["action"] == "accept"
    assert not first.done() and not second.done()
    for call in calls:
        t.reply(call, {"content": []})
    assert await first == {"content": []} and await second == {"content": []}
    assert client.responder.asked == [("elicitation/create", "")]  # no single call to thread it under


async def test_a_related_task_pauses_only_the_requests_about_that_task():
    client, events = make(eliciting_server(related_task="T1"))
    await client.start()
    other = asyncio.create_task(client.call_tool("silent", {}, timeout=TIMEOUT))
    result = await client.request("tasks/result", {"taskId": "T1"}, timeout=TIMEOUT)
    assert result["content"][0]["text"] == "Hello Ada"
    with pytest.raises(RequestTimeout):  # not about T1: its clock ran on
        await other


async def test_pings_do_not_stop_the_clock():
    """A server pinging while it hangs must not keep a call alive for ever."""

    async def ping_forever(t: MemoryTransport, msg: dict[str, Any]) -> None:
        for n in range(1000):
            t.deliver({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"})
            await answered(t, f"p{n}")
            await asyncio.sleep(TIMEOUT / 4)  # the peer's pace

    client, events = make(lambda t, m: ping_forever(t, m) if m.get("method") == "tools/call" else None)
    await client.start()
    with pytest.raises(RequestTimeout):
        await client.call_tool("hang", {}, timeout=TIMEOUT)


async def test_roots_answered_at_once_still_count_as_answered():
    """roots/list is answered without a person: the call goes on and is answered."""

    async def roots_then_answer(t: MemoryTransport, msg: dict[str, Any]) -> None:
        t.deliver({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
        await answered(t, "r1")
        t.reply(msg, {"content": []})

    client, events = make(lambda t, m: roots_then_answer(t, m) if m.get("method") == "tools/call" else None)
    await client.start()
    assert await client.call_tool("roots", {}, timeout=TIMEOUT) == {"content": []}


async def test_modern_input_round_answered_slowly_keeps_the_result():
    """Modern era: the round's questions are answered between two requests, with no clock running."""

    def handle(t: MemoryTransport, msg: dict[str, Any]) -> None:
        params = msg["params"]
        if "inputResponses" not in params:
            t.reply(
                msg,
                {
                    "resultType": "input_required",
                    "requestState": "s",
                    "inputRequests": {
                        "who": {
                            "method": "elicitation/create",
                            "params": {"message": "name?", "requestedSchema": {"type": "object"}},
                        }
                    },
                },
            )
        else:
            t.reply(
                msg,
                {
                    "resultType": "complete",
                    "content": [{"type": "text", "text": params["inputResponses"]["who"]["content"]["name"]}],
                },
            )

    client, events = make(handle, era="modern")
    await client.start()
    result = await client.call_tool("greet", {}, timeout=TIMEOUT)
    assert result["content"][0]["text"] == "Ada"
    assert not any(e.kind == "timeout" for e in events)


async def test_a_raw_request_waits_for_the_person_too():
    client, events = make(lambda t, m: None)
    await client.start()
    t = client.transport
    waiting = asyncio.create_task(
        client.request_raw('{"jsonrpc": "2.0", "id": "mine", "method": "x"}', "mine", timeout=TIMEOUT)
    )
    await t.wait_sent(1)
    t.deliver(
        {
            "jsonrpc": "2.0",
            "id": "s1",
            "method": "elicitation/create",
            "params": {"message": "?", "requestedSchema": {"type": "object"}},
        }
    )
    await answered(t, "s1")
    assert not waiting.done()
    t.deliver({"jsonrpc": "2.0", "id": "mine", "result": {"ok": True}})
    assert await waiting == {"ok": True}


# The SDK peer, for real, over each transport ---------------------------------------------------

# The call's timeout: a real peer over a real transport has that long (twice: before its question,
# and after the answer), room enough on a loaded machine. The person answers once that long and
# half as much again have passed since the call began: a clock that had not stopped would have
# run out by then, so only a paused one lets the call live (and the test waits no longer than that).
PEER_TIMEOUT = 2.0
ANSWER_AT = 1.5 * PEER_TIMEOUT


@pytest.fixture(scope="module")
def peer_urls(sdk_http, sdk_sse):
    """The SDK peer over Streamable HTTP and over HTTP+SSE (stdio is started per test)."""
    return {"http": sdk_http, "sse": sdk_sse}


class SlowName(SlowPerson):
    """Answers ANSWER_AT seconds after the call began (`call_began`, the loop's time)."""

    call_began = 0.0

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((method, CALLER.get()))
        await asyncio.sleep(self.call_began + ANSWER_AT - asyncio.get_running_loop().time())
        return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize(
    "transport,era,tool",
    [
        ("stdio", "legacy", "ask_name"),
        ("http", "legacy", "ask_name"),
        ("sse", "legacy", "ask_name"),
        ("http", "modern", "greet"),
    ],
)
async def test_the_sdk_peer_gets_a_slow_answer_over_every_transport(peer_urls, transport, era, tool):
    """stdio and HTTP+SSE cannot tell which call an elicitation belongs to, Streamable HTTP
    can (the call's stream), the modern era asks in an input round: the call waits in each."""
    import sys

    from playground.mcp.config import ServerConfig
    from playground.mcp.connect import open_client
    from tests.conftest import PEERS

    if transport == "stdio":
        config = ServerConfig(
            transport="stdio", command=sys.executable, args=[str(PEERS / "sdk_server.py"), "stdio"], era=era
        )
    else:
        config = ServerConfig(transport="http" if transport == "http" else "sse", url=peer_urls[transport], era=era)
    tap = Tap()
    events: list[Any] = []
    tap.subscribe(events.append)
    person = SlowName()
    client = await open_client(config, tap=tap, responder=person)
    try:
        CALLER.set("the call")
        loop = asyncio.get_running_loop()
        person.call_began = loop.time()
        result = await client.call_tool(tool, {}, timeout=PEER_TIMEOUT)
        assert result["content"][0]["text"] == "Hello, Ada!"
        assert loop.time() - person.call_began >= ANSWER_AT > PEER_TIMEOUT  # it outlived its timeout
        assert not any(e.kind == "timeout" for e in events)
        assert person.asked == [("elicitation/create", "the call")]
    finally:
        await client.close()
