"""Load on one process: many viewers of one session, many sessions at once.

Measures (prints, asserts nothing about time):
- `viewers`: N websocket consumers on one session; the time until every one of them has the
  result of a call, and until every one has the result after a 100,000-notification flood.
- `sessions`: M sessions started at once (each a stdio server), each driven by its own
  consumer: time to all connected, per-call latency, process RSS.

Runs in this process with the in-memory channel layer and a throwaway SQLite file, against
tests/peers/misbehaving.py (a light stdio server). Usage:

    .venv/bin/python bench/load_sessions.py [--viewers 50] [--sessions 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_DB = Path(tempfile.mkdtemp(prefix="playground-bench-")) / "bench.sqlite3"
os.environ["PLAYGROUND_SQLITE_PATH"] = str(_DB)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
os.environ.pop("DATABASE_URL", None)
os.environ.pop("REDIS_URL", None)

import django

django.setup()

from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.management import call_command

from playground.registry.models import Server
from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from playground.sessions.routing import websocket_urlpatterns

PEER = str(ROOT / "tests" / "peers" / "misbehaving.py")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def tab(session_id: int, user) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/sessions/{session_id}/")
    comm.scope["user"] = user
    assert (await comm.connect(timeout=60))[0]
    return comm


async def until(comm: WebsocketCommunicator, *needles: str, timeout: float = 300) -> None:
    """Read frames until each needle was in one. Each frame is looked at once and dropped: keeping
    them all and rescanning them per frame made the harness, not the app, the cost (quadratic
    per tab; 30 tabs of a flood grew this process past 1 GB)."""
    missing = set(needles)
    async with asyncio.timeout(timeout):
        while missing:
            frame = await comm.receive_from(timeout)
            missing = {n for n in missing if n not in frame}


async def drain(comm: WebsocketCommunicator) -> None:
    while not await comm.receive_nothing(0.05):
        await comm.receive_from()


@database_sync_to_async
def server(name: str, mode: str):
    user = get_user_model().objects.get_or_create(username="bench")[0]
    srv, _ = Server.objects.get_or_create(
        name=name, defaults={"transport": "stdio", "command": sys.executable, "args": [PEER, mode], "owner": user}
    )
    return user, srv


async def viewers(n: int) -> None:
    user, srv = await server("viewers", "flood")
    session = await start_session(srv, user)
    tabs = [await tab(session.pk, user) for _ in range(n)]
    await asyncio.gather(*(until(t, 'id="catalogue"', ">go<") for t in tabs))
    await asyncio.gather(*(drain(t) for t in tabs))
    t0 = time.perf_counter()
    await tabs[0].send_to(text_data=json.dumps({"action": "ping"}))
    await asyncio.gather(*(until(t, "<strong>ping</strong>") for t in tabs))
    ping = time.perf_counter() - t0
    t0 = time.perf_counter()
    await tabs[0].send_to(text_data=json.dumps({"action": "call_tool", "name": "go", "timeout": "300"}))
    await asyncio.gather(*(until(t, "flood done") for t in tabs))
    flood = time.perf_counter() - t0
    print(
        f"{n} viewers of one session: ping result on every tab in {ping * 1000:.0f} ms; "
        f"100,000-notification flood, result on every tab in {flood:.1f} s; RSS {rss_mb():.0f} MB"
    )
    for t in tabs:
        await t.disconnect()
    for worker in list(WORKERS.values()):
        await worker.stop()


async def sessions(m: int) -> None:
    user, srv = await server("many", "garbage")
    t0 = time.perf_counter()
    started = [await start_session(srv, user) for _ in range(m)]
    tabs = [await tab(s.pk, user) for s in started]
    await asyncio.gather(*(until(t, 'id="catalogue"', ">go<") for t in tabs))
    ready = time.perf_counter() - t0
    await asyncio.gather(*(drain(t) for t in tabs))
    latencies: list[float] = []

    async def call(t: WebsocketCommunicator) -> None:
        s = time.perf_counter()
        await t.send_to(text_data=json.dumps({"action": "call_tool", "name": "go"}))
        await until(t, 'aria-label="Result"')
        latencies.append(time.perf_counter() - s)

    t0 = time.perf_counter()
    await asyncio.gather(*(call(t) for t in tabs))
    wall = time.perf_counter() - t0
    q = statistics.quantiles(latencies, n=20)
    print(
        f"{m} concurrent sessions in one process: all connected with catalogue in {ready:.1f} s; "
        f"one call each at once: all done in {wall * 1000:.0f} ms, latency p50 {q[9] * 1000:.0f} ms, "
        f"p95 {q[18] * 1000:.0f} ms; RSS {rss_mb():.0f} MB (servers are separate processes)"
    )
    for t in tabs:
        await t.disconnect()
    for worker in list(WORKERS.values()):
        await worker.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    asyncio.run(viewers(args.viewers))
    asyncio.run(sessions(args.sessions))


if __name__ == "__main__":
    main()
