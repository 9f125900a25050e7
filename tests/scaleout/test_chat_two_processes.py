"""A chat across two Daphne processes sharing PostgreSQL and Redis (the stack of
test_two_processes.py): a chat tab on process B uses the chat's live session whose worker (and
stdio child) live in process A, through the worker's channel; when A dies, B's chat learns the
end from the session's group (its call waiting there is told so) and starts a session of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal

import httpx
import pytest

from tests.chat.model_api import Answer, ModelApi, Turn
from tests.daphne_process import add_server, children, page_socket, until

from . import test_two_processes as two_processes
from .test_two_processes import HEARTBEAT, SDK_PEER, saved_rows

# The other module's fixtures: its own database and Redis prefix, two daphnes, a logged-in client.
stack = two_processes.stack
browser = two_processes.browser

pytestmark = pytest.mark.services("postgresql", "redis")
OVER = 'id="chat-status" hx-swap-oob="innerHTML"> </div>'  # the turn has ended (Stop gone)
SESSION = re.compile(r"peer \(session (\d+)\)")


def add_provider(browser: httpx.Client, port: int, base_url: str, chat_id: int) -> str:
    """A provider for the test's model API: its pk, as the chat page's Model select has it."""
    base = f"http://127.0.0.1:{port}"
    browser.get(f"{base}/providers/add/")
    form = {"csrfmiddlewaretoken": browser.cookies["csrftoken"], "api": "openai", "base_url": base_url}
    saved = browser.post(f"{base}/providers/add/", data={**form, "api_key": "sk-test", "model": "m"})
    assert saved.status_code == 302, saved.text
    page = browser.get(f"{base}/chats/{chat_id}/").text
    return re.search(r'<option value="(\d+)"', page.split('id="chat-model"', 1)[1]).group(1)


def new_chat(browser: httpx.Client, port: int) -> int:
    base = f"http://127.0.0.1:{port}"
    browser.get(f"{base}/chats/")
    made = browser.post(f"{base}/chats/", data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]})
    return int(re.search(r"/chats/(\d+)/", made.headers["location"]).group(1))


async def chat_tab(browser: httpx.Client, port: int, chat_id: int):
    """The chat page's websocket on the process at `port`."""
    return await page_socket(browser, port, f"/ws/chats/{chat_id}/")


def script(turn: Turn) -> Answer:
    """Each user message is echoed by the tool, and its result quoted."""
    last = turn.body["messages"][-1]
    if last["role"] == "tool":
        return Answer(text=f"echoed: {last['content']}")
    return Answer(tool_calls=[("echo", json.dumps({"text": last["content"]}))])


def test_a_chat_on_process_b_uses_its_session_whose_worker_lives_in_process_a(stack, browser):
    a, b = stack["procs"]["a"], stack["procs"]["b"]
    port_a, port_b = stack["ports"]["a"], stack["ports"]["b"]
    server_pk = add_server(browser, port_a, "peer", [str(SDK_PEER), "stdio"])
    chat_id = new_chat(browser, port_a)

    async def drive() -> tuple[int, str, str]:
        async with ModelApi(script) as api:
            provider = add_provider(browser, port_a, api.base_url, chat_id)

            async def say(ws, word: str, *needles: str, timeout: float = 60) -> str:
                await ws.send(
                    json.dumps({"action": "send", "message": word, "provider": provider, "server": [server_pk]})
                )
                return await until(ws, *needles, OVER, timeout=timeout)

            first = secrets.token_hex(4)
            ws = await chat_tab(browser, port_a, chat_id)
            try:
                seen = await say(ws, first, f"echoed: {first}")
            finally:
                await ws.close()
            session_a = int(SESSION.search(seen).group(1))
            # Another tab of the chat, on process B: it follows the live session of process A ...
            ws = await chat_tab(browser, port_b, chat_id)
            try:
                second = secrets.token_hex(4)
                seen = await say(ws, second, f"echoed: {second}")
                assert int(SESSION.search(seen).group(1)) == session_a  # (not a session of its own)
                assert "sdk_server.py" in " ".join(children(a.pid).values())
                assert children(b.pid) == {}  # the call went to A's worker, over Redis
                # ... and when A dies, the call waiting there is told the session ended, once B's
                # watch on the session finds A's heartbeat three beats old.
                os.killpg(a.pid, signal.SIGKILL)
                await asyncio.to_thread(a.wait, 10)
                third = secrets.token_hex(4)
                ended = await say(ws, third, "the session has ended: worker process ended", timeout=20 * HEARTBEAT)
                # The next turn starts a session in B.
                fourth = secrets.token_hex(4)
                seen = await say(ws, fourth, f"echoed: {fourth}")
                session_b = int(SESSION.search(seen).group(1))
                assert session_b != session_a and "sdk_server.py" in " ".join(children(b.pid).values())
            finally:
                await ws.close()
            return session_a, ended, seen

    session_a, ended, _ = asyncio.run(drive())
    assert "echoed: Error: the session has ended: worker process ended" in ended  # (told to the model too)
    rows, _count = saved_rows(stack, session_a)
    assert "worker process ended" in rows[-1]["text"]
    calls = [r for r in rows if r["dir"] == "send" and (r.get("message") or {}).get("method") == "tools/call"]
    assert len(calls) == 2  # the first two turns' (the third's reached no worker)
