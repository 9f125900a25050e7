"""A capture's uploads reaching two Daphne processes (PostgreSQL, Redis) in any order: the
captured session keeps one order of events, the order things happened, and a tab on either
process follows it live.

Its own database and Redis prefix (the `stack` of test_two_processes)."""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
import sys
from concurrent.futures import ThreadPoolExecutor

import anyio
import httpx
import pytest

from tests.capture.helpers import host_exchange
from tests.daphne_process import tab, until

from . import test_two_processes as two_processes
from .test_two_processes import SDK_PEER, saved_rows

# The other module's fixtures: its own database and Redis prefix, two daphnes, a logged-in client.
stack = two_processes.stack
browser = two_processes.browser

pytestmark = pytest.mark.services("postgresql", "redis")


@pytest.fixture(scope="module")
def exchange() -> list[dict]:
    return anyio.run(host_exchange)


def register(client: httpx.Client, port: int) -> tuple[int, str]:
    """A stdio server and a capture token, made through the pages: (server id, token)."""
    base = f"http://127.0.0.1:{port}"
    client.get(f"{base}/servers/add/")
    csrf = client.cookies["csrftoken"]
    fields = {"csrfmiddlewaretoken": csrf, "name": "captured", "transport": "stdio", "command": sys.executable}
    fields |= {"args": f"{SDK_PEER}\nstdio", "env": "", "cwd": "", "url": "", "headers": "", "era": "legacy"}
    added = client.post(f"{base}/servers/add/", data=fields)
    server_id = int(re.search(r"/servers/(\d+)/", added.headers["location"]).group(1))
    page = client.post(f"{base}/capture/tokens/create/", data={"csrfmiddlewaretoken": csrf, "name": "scale"})
    token = html.unescape(re.search(r'<pre class="mono" id="new-token">(.*?)</pre>', page.text).group(1))
    return server_id, token


def upload(port: int, token: str, records: list[dict]) -> dict:
    answer = httpx.post(
        f"http://127.0.0.1:{port}/capture/v1/frames",
        content="".join(json.dumps(r) + "\n" for r in records),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_uploads_to_two_processes_in_any_order_keep_one_order(stack, browser, exchange):
    ports = stack["ports"]
    server_id, token = register(browser, ports["a"])
    records = [{**r, "server": server_id} for r in exchange]
    first = upload(ports["a"], token, records[:2])
    session_id = first["session"]
    echo = next(r["i"] for r in records if r["kind"] == "frame" and "hello capture" in r.get("text", ""))

    async def follow_on_b() -> str:
        ws = await tab(browser, ports["b"], session_id)
        try:
            await until(ws, 'id="transcript-lines"')
            # The rest, in chunks of three, shuffled, posted at once to both processes.
            chunks = [records[i : i + 3] for i in range(2, len(records), 3)]
            random.Random(25).shuffle(chunks)
            with ThreadPoolExecutor(6) as pool:
                answers = list(pool.map(lambda n: upload(ports["ab"[n % 2]], token, chunks[n]), range(len(chunks))))
            assert {a["session"] for a in answers} == {session_id}
            assert max(a["acked"] for a in answers) == len(records) - 1
            return await until(ws, "hello capture", "Hello, Ada!", "the capture ended")
        finally:
            await ws.close()

    seen = asyncio.run(follow_on_b())
    assert seen.index("hello capture") < seen.index("Hello, Ada!")
    rows, count = saved_rows(stack, session_id)
    frames = [(r["dir"], json.loads(r["text"])) for r in records if r["kind"] == "frame"]
    assert [(r["dir"], r["message"]) for r in rows if r["dir"] in ("send", "recv")] == frames
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1)) and count == len(rows)
    assert echo > 2
