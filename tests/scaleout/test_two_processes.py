"""Scale-out on real parts: two Daphne processes sharing PostgreSQL and Redis.

A tab (a `websockets` client) connected to process B watches and drives a session whose worker
— and stdio child — live in process A. Then A is killed: B marks the session ended by its
stale heartbeat, with the transcript intact in PostgreSQL. A hostile server's NUL and unpaired
surrogates are stored too. Skips (with the reason) where PostgreSQL or Redis is not listening, or
fails there with PLAYGROUND_REQUIRE_SERVICES=1 (tests/services.py); uses its own database and
Redis prefix (two runs at once do not meet), removed after.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.daphne_process import app_env, children, connect, log_in, set_up, start_daphne, stop_daphne, until
from tests.daphne_process import tab as page_tab
from tests.http_peers import free_port
from tests.services import POSTGRESQL as PG
from tests.services import REDIS

ROOT = Path(__file__).resolve().parents[2]
REDIS_DB = 11
SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
MISBEHAVING = ROOT / "tests" / "peers" / "misbehaving.py"
HEARTBEAT = 1.0


pytestmark = pytest.mark.services("postgresql", "redis")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Its own database and Redis prefix; each daphne's output in pytest's temporary folder."""
    import psycopg
    import redis

    logs = tmp_path_factory.mktemp("scaleout")

    name = f"playground_scaleout_{secrets.token_hex(4)}"
    prefix = f"scaleout-{secrets.token_hex(4)}"
    admin = psycopg.connect(f"postgresql://postgres@{PG[0]}:{PG[1]}/postgres", autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')
    env = app_env(
        DATABASE_URL=f"postgres://postgres@{PG[0]}:{PG[1]}/{name}",
        REDIS_URL=f"redis://{REDIS[0]}:{REDIS[1]}/{REDIS_DB}",
        PLAYGROUND_REDIS_PREFIX=prefix,
        PLAYGROUND_HEARTBEAT_SECONDS=str(HEARTBEAT),
        PLAYGROUND_USER="scale",
    )
    procs: list = []
    try:
        ports = {"a": free_port(), "b": free_port()}
        link = set_up(env, ports["a"])
        for key, port in ports.items():
            procs.append(start_daphne(env, port, logs / f"daphne-{key}.log"))
        yield {
            "ports": ports,
            "link": link,
            "procs": dict(zip(ports, procs)),
            "db": name,
            "dsn": f"postgresql://postgres@{PG[0]}:{PG[1]}/{name}",
        }
    finally:
        for proc in procs:
            stop_daphne(proc)
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()
        r = redis.Redis(host=REDIS[0], port=REDIS[1], db=REDIS_DB)
        for key in r.scan_iter(f"{prefix}*"):
            r.delete(key)
        r.close()


@pytest.fixture(scope="module")
def browser(stack: dict) -> Iterator[httpx.Client]:
    """Logged in with the one-time link (the cookie holds for both processes: same host)."""
    client = log_in(stack["link"])
    yield client
    client.close()


def saved_rows(stack: dict, session_id: int) -> tuple[list[dict], int]:
    """The session's transcript and event count as PostgreSQL has them."""
    import psycopg

    with psycopg.connect(stack["dsn"]) as db:
        rows = [
            r[0]
            for r in db.execute("SELECT data FROM transcripts_event WHERE session_id = %s ORDER BY seq", (session_id,))
        ]
        count = db.execute("SELECT event_count FROM transcripts_session WHERE id = %s", (session_id,)).fetchone()[0]
    return rows, count


async def tab(stack: dict, browser: httpx.Client, session_id: int):
    """A tab on process B."""
    return await page_tab(browser, stack["ports"]["b"], session_id)


def test_nul_and_unpaired_surrogates_from_a_server_are_stored_in_postgresql(stack, browser):
    """jsonb refuses U+0000 and unpaired surrogates: one such frame used to fail every later write."""
    from playground.transcripts.storable import PROBLEM

    session_id = connect(browser, stack["ports"]["b"], "escapes", [str(MISBEHAVING), "escapes"])

    async def drive() -> None:
        ws = await tab(stack, browser, session_id)
        try:
            await until(ws, 'id="catalogue"', ">go<")
            await ws.send(json.dumps({"action": "call_tool", "name": "go"}))
            await until(ws, 'aria-label="Result"', "done \ufffd")
            await ws.send(json.dumps({"action": "disconnect"}))
            await until(ws, "status-ended")  # the last events are flushed before the state says so
        finally:
            await ws.close()

    asyncio.run(drive())
    rows, count = saved_rows(stack, session_id)
    assert [r["seq"] for r in rows] == list(range(1, count + 1)) and rows[-1]["kind"] == "closed"
    note = next(r for r in rows if (r.get("message") or {}).get("method") == "notifications/message")
    assert note["message"]["params"]["data"] == "lone \ufffd nul \ufffd end" and PROBLEM in note["problems"]
    raw_nul = next(r for r in rows if (r.get("raw") or "").startswith("raw NUL"))
    assert raw_nul["raw"] == "raw NUL \ufffd here" and raw_nul["parse_error"] and PROBLEM in raw_nul["problems"]


def test_a_tab_on_process_b_drives_a_worker_in_process_a_then_a_dies(stack, browser):
    session_id = connect(browser, stack["ports"]["a"], "peer", [str(SDK_PEER), "stdio"])
    a, b = stack["procs"]["a"], stack["procs"]["b"]

    async def drive_then_watch_a_die() -> str:
        ws = await tab(stack, browser, session_id)
        try:
            await until(ws, 'id="catalogue"', ">echo<")
            await ws.send(json.dumps({"action": "call_tool", "name": "echo", "args.text": "over redis"}))
            # (The request's own transcript line, which a page is sent once it is saved.)
            result = await until(ws, 'aria-label="Result"', 'data-method="tools/call"')
            assert "over redis" in result.split('aria-label="Result"', 1)[1]
            # The worker and its stdio child live in A (B never spawned anything).
            assert "sdk_server.py" in " ".join(children(a.pid).values())
            assert children(b.pid) == {}
            os.killpg(a.pid, signal.SIGKILL)
            await asyncio.to_thread(a.wait, 10)
            # The same tab sees the session end once A's heartbeat is three beats old.
            return await until(ws, "status-ended", "worker process ended", timeout=20 * HEARTBEAT)
        finally:
            await ws.close()

    seen = asyncio.run(drive_then_watch_a_die())
    assert "the transcript is saved up to that point" in seen
    rows, count = saved_rows(stack, session_id)  # in PostgreSQL (DATABASE_URL took effect), intact
    assert [r["seq"] for r in rows] == list(range(1, count + 1))
    assert any((r.get("message") or {}).get("method") == "tools/call" for r in rows)
    assert "worker process ended" in rows[-1]["text"]
    ws_page = asyncio.run(_replay(stack, browser, session_id))  # a new tab replays it from PostgreSQL
    assert "status-ended" in ws_page and "tools/call" in ws_page


async def _replay(stack: dict, browser: httpx.Client, session_id: int) -> str:
    ws = await tab(stack, browser, session_id)
    try:
        return await until(ws, 'id="session-state"')
    finally:
        await ws.close()
