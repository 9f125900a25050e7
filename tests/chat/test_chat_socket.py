"""The chat page's socket end to end: the test's model API (both families) on one side, real MCP
servers (the SDK's peer, server-everything) on the other, the tool calls through the sessions'
workers (in their transcripts), and what bad input gets."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import re
import secrets
import sys

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import AsyncClient
from django.utils import timezone

from playground.chat.models import Chat, Provider
from playground.chat.routing import websocket_urlpatterns
from playground.registry.models import Server
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Event, Session
from tests.conftest import PEERS
from tests.sessions.helpers import communicator, events, everything_server, receive_until, send, stop_all

from .model_api import Answer, ModelApi, Turn

pytestmark = pytest.mark.django_db(transaction=True)
KEY = "sk-test-" + "k" * 24
OVER = 'id="chat-status" hx-swap-oob="innerHTML"> </div>'  # the turn has ended (Stop gone)


@database_sync_to_async
def setup(api: str, base_url: str, *, everything: bool = False):
    user = get_user_model().objects.create_user("alice", password="pw")
    peer = Server.objects.create(
        owner=user, name="peer", transport="stdio", command=sys.executable, args=[str(PEERS / "sdk_server.py"), "stdio"]
    )
    servers = [peer]
    if everything:
        servers.append(Server.objects.create(owner=user, **everything_server()))
    provider = Provider.objects.create(owner=user, api=api, base_url=base_url, api_key=KEY, model="test-model")
    chat = Chat.objects.create(owner=user)
    return user, servers, provider, chat


@database_sync_to_async
def stdio_peer(user, name: str, file: str) -> Server:
    """A server of the user's: the peer `file` of tests/peers, over stdio."""
    return Server.objects.create(
        owner=user, name=name, transport="stdio", command=sys.executable, args=[str(PEERS / file)]
    )


@contextlib.asynccontextmanager
async def second_tab(user, chat):
    """A tab on the chat (another one, or the same after a reload): a socket of its own."""
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/chats/{chat.pk}/")
    comm.scope["user"] = user
    connected, _ = await comm.connect()
    assert connected
    try:
        yield comm
    finally:
        await comm.disconnect()


@contextlib.asynccontextmanager
async def chat_tab(user, chat):
    """The tab that runs the turns: its servers' sessions stop with the test."""
    async with second_tab(user, chat) as comm:
        try:
            yield comm
        finally:
            await stop_all()


def say(comm, text, provider, servers, **more):
    return send(
        comm, action="send", message=text, provider=str(provider.pk), server=[str(s.pk) for s in servers], **more
    )


HOSTILE = '<img src=x onerror="alert(1)">'


@pytest.mark.parametrize("api_name", ["openai", "anthropic"])
async def test_two_servers_one_chat_prefixed_names_and_an_answer_from_the_tool_result(api_name):
    word = "pineapple-" + secrets.token_hex(3)

    def script(turn: Turn) -> Answer:
        if turn.last_tool_result():
            return Answer(text=f"{HOSTILE} The echo tool answered: {turn.last_tool_result()}")
        names = turn.tool_names()
        assert "peer_echo" in names and "everything_echo" in names  # the collision, prefixed
        assert "add" in names  # (the SDK peer's own, unprefixed)
        return Answer(tool_calls=[("peer_echo", json.dumps({"text": word}))])

    async with ModelApi(script) as api:
        user, servers, provider, chat = await setup(api_name, api.base_url, everything=True)
        async with chat_tab(user, chat) as comm:
            await say(comm, "echo something", provider, servers)
            seen = await receive_until(comm, f"The echo tool answered: {word}", OVER, timeout=60)
    assert "peer_echo" in seen and "on peer" in seen and "arguments match the inputSchema" in seen
    assert HOSTILE not in seen and "<img" not in seen and "&lt;img" in seen  # escaped, streamed piece by piece too
    saved = await database_sync_to_async(Chat.objects.get)(pk=chat.pk)
    assert [i["kind"] for i in saved.items] == ["user", "card", "reply"]
    assert saved.items[-1]["text"] == f"{HOSTILE} The echo tool answered: {word}"
    assert len(saved.lane) == 2 and KEY not in json.dumps(saved.lane)  # the model lane, the key masked
    sent = saved.lane[0]["request"]["tools"]  # as Model view renders it, under the chat's names
    assert ("input_schema" in sent[0]) if api_name == "anthropic" else (sent[0]["type"] == "function")
    # The call ran through the peer's session: it is in that session's transcript.
    card = saved.items[1]
    frames = await database_sync_to_async(
        lambda: list(Event.objects.filter(session_id=card["session_id"]).values_list("data", flat=True))
    )()
    assert any('"tools/call"' in json.dumps(f) and word in json.dumps(f) for f in frames)
    assert await database_sync_to_async(lambda: saved.sessions.count())() == 2


async def test_anthropic_simple_chatbot_way_unknown_tool_invalid_arguments_and_an_almost_call():
    def script(turn: Turn) -> Answer:
        assert "Tool: echo" in turn.body["system"] and not turn.body.get("tools")  # tools in the prompt
        n = sum(1 for m in turn.body["messages"] if m["role"] == "assistant")
        if n == 0:
            return Answer(text=json.dumps({"tool": "nope", "arguments": {}}))
        if n == 1:
            assert "unknown tool 'nope'" in turn.last_tool_result()
            return Answer(text=json.dumps({"tool": "add", "arguments": {"a": "x", "b": 2}}))
        return Answer(text='```json\n{"tool": "echo", "arguments": {"text": "hi"}}\n```')

    async with ModelApi(script) as api:
        user, servers, provider, chat = await setup("anthropic", api.base_url)
        async with chat_tab(user, chat) as comm:
            await say(comm, "add things", provider, servers, mode="chatbot")
            seen = await receive_until(comm, "almost parses as a tool call", timeout=60)
    assert "unknown tool &#x27;nope&#x27;" in seen
    assert "do not match the tool's inputSchema" in seen  # the invalid arguments, shown
    # ... sent anyway: the server's error went back to the model as the example sends results.
    third = api.turns[2].last_tool_result()
    assert (
        third.startswith("Tool execution result: ") and "is_error=True" in third and "Error executing tool add" in third
    )


async def test_step_limit_non_json_arguments_and_a_failing_provider_leave_the_sessions_usable():
    calls = {"n": 0}

    def script(turn: Turn) -> Answer:
        calls["n"] += 1
        if turn.body["messages"][-1].get("content") == "fail please":
            return Answer(status=500, text="the provider fell over")
        if turn.body["messages"][-1].get("content") == "and now?":
            return Answer(text="fine again")
        return Answer(tool_calls=[("echo", "{not json")])

    async with ModelApi(script) as api:
        user, servers, provider, chat = await setup("openai", api.base_url)
        async with chat_tab(user, chat) as comm:
            await say(comm, "loop forever", provider, servers, steps="3")
            seen = await receive_until(comm, "Stopped after 3 model requests", OVER, timeout=60)
            assert "the arguments are not JSON" in seen and calls["n"] == 3
            await say(comm, "fail please", provider, servers)
            seen = await receive_until(comm, "HTTP 500 from the model API: the provider failed", OVER, timeout=30)
            await say(comm, "and now?", provider, servers)
            await receive_until(comm, "fine again", timeout=30)


async def test_stop_cancels_the_running_tool_call_in_its_session():
    def script(turn: Turn) -> Answer:
        if turn.body["messages"][-1].get("content") == "again":
            return Answer(text="still here")
        return Answer(tool_calls=[("hang", "{}")])

    async with ModelApi(script) as api:
        user, servers, provider, chat = await setup("openai", api.base_url)
        async with chat_tab(user, chat) as comm:
            await say(comm, "hang", provider, servers)
            await receive_until(comm, "state-running", timeout=60)
            await send(comm, action="stop")
            seen = await receive_until(
                comm, "Stopped: the turn and its running tool calls were cancelled", OVER, timeout=30
            )
            assert "state-cancelled" in seen
            await say(comm, "again", provider, servers)
            await receive_until(comm, "still here", timeout=30)
    saved = await database_sync_to_async(Chat.objects.get)(pk=chat.pk)
    session_id = next(i["session_id"] for i in saved.items if i["kind"] == "card")
    frames = await database_sync_to_async(
        lambda: list(Event.objects.filter(session_id=session_id).values_list("data", flat=True))
    )()
    assert any("notifications/cancelled" in json.dumps(f) for f in frames)  # cancelled at the server too
    # The next request answered the stopped call (the APIs refuse a call left unanswered).
    assert api.turns[-1].body["messages"][-2]["content"] == "Error: stopped by the user"


async def test_a_servers_sampling_request_answered_by_the_chats_model_after_approval_and_an_edit():
    def script(turn: Turn) -> Answer:
        first = turn.body["messages"][0]
        if first.get("role") == "system" and "helpful test server" in first.get("content", ""):
            return Answer(text="a mango")  # the sampling request, asked of the chat's model
        if turn.last_tool_result():
            return Answer(text=f"The server said: {turn.last_tool_result()}")
        return Answer(tool_calls=[("trigger-sampling-request", json.dumps({"prompt": "name a fruit"}))])

    async with ModelApi(script) as api:
        user, servers, provider, chat = await setup("openai", api.base_url)
        everything = await database_sync_to_async(Server.objects.create)(owner=user, **everything_server())
        async with chat_tab(user, chat) as comm:
            await say(comm, "sample please", provider, [everything])
            seen = await receive_until(comm, "Ask the chat's model", timeout=60)
            found = re.search(r'id="sampling-(\d+)-(\w+)"', seen)
            assert found and "name a fruit" in seen
            session_id, key = found.groups()
            await send(comm, action="sample", session=session_id, key=key)
            seen = await receive_until(comm, "answered by the model", timeout=30)
            assert ">a mango</textarea>" in seen  # the model's reply, to approve or edit
            await send(comm, action="sample_send", session=session_id, key=key, text="a mango (edited)")
            await receive_until(comm, "The server said:", "a mango (edited)", OVER, timeout=30)
    saved = await database_sync_to_async(Chat.objects.get)(pk=chat.pk)
    assert any(x["request"]["messages"][0]["content"] == "You are a helpful test server." for x in saved.lane)


async def test_a_tools_progress_reaches_its_card():
    def script(turn: Turn) -> Answer:
        if turn.last_tool_result():
            return Answer(text=f"slow said: {turn.last_tool_result()}")
        return Answer(tool_calls=[("slow", json.dumps({"steps": 3, "delay": 0.05}))])

    async with ModelApi(script) as api:
        user, servers, provider, chat = await setup("openai", api.base_url)
        async with chat_tab(user, chat) as comm:
            await say(comm, "go slowly", provider, servers)
            seen = await receive_until(comm, "slow said: done after 3 steps", OVER, timeout=60)
    assert re.search(r'id="card-[\w-]+-progress" hx-swap-oob="innerHTML">progress \d / 3 step \d', seen)


def ask_name_script(turn: Turn) -> Answer:
    if turn.last_tool_result():
        return Answer(text=f"ask_name said: {turn.last_tool_result()}")
    return Answer(tool_calls=[("ask_name", "{}")])


CARD = re.compile(r'id="elicitation-((\d+)-(q\d+))"')


async def elicitation_answers(session_id: int) -> list[dict]:
    """The elicitation results the session sent its server (from its transcript)."""
    rows = await events(session_id)
    messages = [r.get("message") for r in rows if r["dir"] == "send"]
    return [m["result"] for m in messages if isinstance(m, dict) and "action" in (m.get("result") or {})]


async def test_an_elicitation_answered_in_the_chat_reaches_the_server_and_the_model_gets_the_result():
    async with ModelApi(ask_name_script) as api:
        user, servers, provider, chat = await setup("openai", api.base_url)
        async with chat_tab(user, chat) as comm:
            await say(comm, "who am I?", provider, servers)
            seen = await receive_until(comm, "What is your name?", 'data-elicit-action="accept"', timeout=60)
            key, session_id, request_key = CARD.search(seen).groups()
            # The session page's card and form (from the requestedSchema), its answer keyed by session.
            assert f'id="server-request-{key}"' in seen and f'data-key="{key}"' in seen
            assert f'name="elicit-{key}.name"' in seen and "waiting for your answer" in seen
            # Saved as it waits: a reload, or a second tab, draws it with its form ...
            client = AsyncClient()
            await client.aforce_login(user)
            page = (await client.get(f"/chats/{chat.pk}/")).content.decode()
            assert f'data-key="{key}"' in page and 'data-elicit-action="decline"' in page
            assert f'name="elicit-{key}.name"' in page and 'id="answer-form"' in page
            async with second_tab(user, chat) as other:
                # ... whose socket follows the session: it sees the card answered.
                answer = json.dumps({"action": "accept", "content": {"name": "Ada"}})
                await send(comm, action="answer", key=key, result=answer)
                seen = await receive_until(comm, "answered (accept)", "ask_name said: Hello, Ada!", OVER, timeout=30)
                assert "answered (accept)" in await receive_until(other, "answered (accept)", timeout=30)
                # Not answerable twice: a second answer (from either tab) goes nowhere.
                await send(other, action="answer", key=key, result=json.dumps({"action": "decline"}))
                await send(comm, action="answer", key=key, result=json.dumps({"action": "decline"}))
    assert api.turns[-1].last_tool_result() == "Hello, Ada!"  # the model got the tool's result
    saved = await database_sync_to_async(Chat.objects.get)(pk=chat.pk)
    (asked,) = [i for i in saved.items if i["kind"] == "elicitation"]
    assert asked["state"] == "answered" and asked["answer"] == "accept"
    # Answered once, with the person's content.
    assert await elicitation_answers(int(session_id)) == [{"action": "accept", "content": {"name": "Ada"}}]
    page = (await client.get(f"/chats/{chat.pk}/")).content.decode()
    assert "answered (accept)" in page and f'data-key="{key}"' not in page  # no form after a reload


async def test_an_elicitation_answered_on_the_session_page_reads_answered_in_the_chat():
    async with ModelApi(ask_name_script) as api:
        user, servers, provider, chat = await setup("openai", api.base_url)
        async with chat_tab(user, chat) as comm:
            await say(comm, "who am I?", provider, servers)
            seen = await receive_until(comm, "What is your name?", 'data-elicit-action="accept"', timeout=60)
            key, session_id, request_key = CARD.search(seen).groups()
            # Answered on the session's page (its answer action, as the page's card sends it).
            from playground.sessions.live.workers import WORKERS

            worker = WORKERS[int(session_id)]
            answer = {"action": "decline"}
            await worker.layer.send(worker.channel, {"command": "answer", "key": request_key, "result": answer})
            seen = await receive_until(comm, "answered (decline)", "ask_name said: No name (decline)", OVER, timeout=30)
            # Answering it from the chat now does nothing: the card had no form left to send.
            await send(comm, action="answer", key=key, result=json.dumps({"action": "accept"}))
    assert await elicitation_answers(int(session_id)) == [{"action": "decline"}]
    saved = await database_sync_to_async(Chat.objects.get)(pk=chat.pk)
    assert [(i["state"], i["answer"]) for i in saved.items if i["kind"] == "elicitation"] == [("answered", "decline")]


async def test_an_elicitations_message_and_schema_are_escaped_in_the_chat():
    def script(turn: Turn) -> Answer:
        if turn.last_tool_result():
            return Answer(text="done")
        return Answer(tool_calls=[("ask", "{}")])

    async with ModelApi(script) as api:
        user, _, provider, chat = await setup("openai", api.base_url)
        hostile = await stdio_peer(user, "hostile", "hostile_server.py")
        async with chat_tab(user, chat) as comm:
            await say(comm, "ask", provider, [hostile])
            seen = await receive_until(comm, "Question ", 'data-elicit-action="accept"', timeout=60)
    assert "<img" not in seen and "<script" not in seen.lower() and "&lt;" in seen


async def test_a_tool_list_changed_after_the_first_turn_reaches_the_model():
    """The server adds a tool during the first turn (and says tools/list_changed): the next
    turn's model request offers it, and its call runs."""

    def script(turn: Turn) -> Answer:
        last = turn.body["messages"][-1]
        if last["role"] == "tool":
            return Answer(text=f"the tool said: {last['content']}")
        if last["content"] == "grow":
            return Answer(tool_calls=[("grow", "{}")])
        return Answer(tool_calls=[("sprout", json.dumps({"text": "hi"}))])

    async with ModelApi(script) as api:
        user, _, provider, chat = await setup("openai", api.base_url)
        growing = await stdio_peer(user, "growing", "growing_server.py")
        async with chat_tab(user, chat) as comm:
            await say(comm, "grow", provider, [growing])
            seen = await receive_until(comm, "the tool said: grew sprout", OVER, timeout=60)
            session_id = int(re.search(r"growing \(session (\d+)\)", seen).group(1))
            # The session has listed its tools again (its page shows the new list).
            tab = communicator(session_id, user)
            assert (await tab.connect())[0]
            await receive_until(tab, 'id="catalogue"', ">sprout<", timeout=30)
            await tab.disconnect()
            await say(comm, "now the new one", provider, [growing])
            await receive_until(comm, "the tool said: sprout says hi", OVER, timeout=60)
    assert "sprout" in api.turns[-2].tool_names() and "sprout" not in api.turns[0].tool_names()


async def test_an_open_chat_keeps_its_sessions_shown_between_turns(settings):
    """A chat page left open longer than PLAYGROUND_IDLE_MINUTES since its last turn: its sessions
    are still shown (as a session's tab shows it, every beat), so they are not ended as idle; the
    next turn uses them."""
    settings.PLAYGROUND_HEARTBEAT_SECONDS = 0.05
    settings.PLAYGROUND_IDLE_MINUTES = 0.02  # 1.2 s

    def script(turn: Turn) -> Answer:
        last = turn.body["messages"][-1]
        if last["role"] == "tool":
            return Answer(text=f"the tool said: {last['content']}")
        return Answer(tool_calls=[("echo", json.dumps({"text": last["content"]}))])

    async with ModelApi(script) as api:
        user, servers, provider, chat = await setup("openai", api.base_url)
        async with chat_tab(user, chat) as comm:
            await say(comm, "first", provider, servers)
            seen = await receive_until(comm, "the tool said: first", OVER, timeout=60)
            session_id = int(re.search(r"peer \(session (\d+)\)", seen).group(1))
            # Shown after the idle time has passed since the turn (the worker's idle check ran
            # every beat meanwhile).
            past_idle = timezone.now() + datetime.timedelta(minutes=2 * settings.PLAYGROUND_IDLE_MINUTES)

            async def shown() -> Session:
                return await database_sync_to_async(Session.objects.get)(pk=session_id)

            async with asyncio.timeout(30):
                while (row := await shown()).status in ("connecting", "connected") and row.viewed_at < past_idle:
                    await asyncio.sleep(settings.PLAYGROUND_HEARTBEAT_SECONDS)
            assert row.status == "connected" and session_id in WORKERS, row.end_reason
            await say(comm, "second", provider, servers)
            seen = await receive_until(comm, "the tool said: second", OVER, timeout=60)
            assert f"peer (session {session_id})" in seen
    assert await database_sync_to_async(lambda: chat.sessions.count())() == 1
