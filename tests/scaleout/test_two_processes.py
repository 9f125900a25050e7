"""Scale-out on real parts: two Daphne processes sharing PostgreSQL and Redis.

A tab (a `websockets` client) connected to process B watches and drives a session whose worker
— and stdio child — live in process A. Then A is killed: B marks the session ended by its
stale heartbeat, with the transcript intact in PostgreSQL. Skips (with the reason) where
PostgreSQL or Redis is not listening; uses its own database and Redis prefix, removed after.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PG = ("127.0.0.1", 5432)
REDIS = ("127.0.0.1", 6379)
REDIS_DB = 11
SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
HEARTBEAT = 1.0


def listening(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
        return True
    except OSError:
        return False


pytestmark = [
    pytest.mark.skipif(not listening(PG), reason="PostgreSQL is not listening on 127.0.0.1:5432"),
    pytest.mark.skipif(not listening(REDIS), reason="Redis is not listening on 127.0.0.1:6379"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daphne exited with {proc.returncode}")
        if listening(("127.0.0.1", port)):
            return
        time.sleep(0.1)
    raise RuntimeError(f"daphne did not listen on {port}")


@pytest.fixture(scope="module")
def stack() -> Iterator[dict]:
    import psycopg
    import redis

    name = f"playground_scaleout_{secrets.token_hex(4)}"
    prefix = f"scaleout-{secrets.token_hex(4)}"
    admin = psycopg.connect(f"postgresql://postgres@{PG[0]}:{PG[1]}/postgres", autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@{PG[0]}:{PG[1]}/{name}",
           "REDIS_URL": f"redis://{REDIS[0]}:{REDIS[1]}/{REDIS_DB}", "PLAYGROUND_REDIS_PREFIX": prefix,
           "PLAYGROUND_HEARTBEAT_SECONDS": str(HEARTBEAT), "PLAYGROUND_USER": "scale", "DJANGO_SETTINGS_MODULE":
           "playground.settings"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    procs: list[subprocess.Popen] = []
    try:
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], env=env, check=True, cwd=ROOT)
        ports = {"a": free_port(), "b": free_port()}
        setup = subprocess.run([*manage, "playground_setup"], env={**env, "PLAYGROUND_PORT": str(ports["a"])},
                               check=True, cwd=ROOT, capture_output=True, text=True)
        link = re.search(r"(http://\S+/login/token/\S+/)", setup.stdout).group(1)
        for key, port in ports.items():
            proc = subprocess.Popen([str(Path(sys.executable).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port),
                                     "playground.asgi:application"], env=env, cwd=ROOT, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(proc)
            wait_port(port, proc)
        yield {"ports": ports, "link": link, "procs": dict(zip(ports, procs)), "db": name}
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()
        r = redis.Redis(host=REDIS[0], port=REDIS[1], db=REDIS_DB)
        for key in r.scan_iter(f"{prefix}*"):
            r.delete(key)
        r.close()


def log_in_and_connect(stack: dict) -> tuple[httpx.Client, int]:
    """On process A: log in with the one-time link, register the SDK peer, press Connect."""
    a = f"http://127.0.0.1:{stack['ports']['a']}"
    browser = httpx.Client(base_url=a, follow_redirects=False, timeout=20)
    assert browser.get(stack["link"]).status_code == 302
    browser.get("/servers/add/")
    token = browser.cookies["csrftoken"]
    added = browser.post("/servers/add/", data={
        "csrfmiddlewaretoken": token, "name": "peer", "transport": "stdio", "command": sys.executable,
        "args": f"{SDK_PEER}\nstdio", "env": "", "cwd": "", "url": "", "headers": "", "era": "legacy"})
    server_pk = int(re.search(r"/servers/(\d+)/", added.headers["location"]).group(1))
    connected = browser.post(f"/servers/{server_pk}/connect/", data={"csrfmiddlewaretoken": token})
    return browser, int(re.search(r"/sessions/(\d+)/", connected.headers["location"]).group(1))


async def tab(stack: dict, cookie: str, session_id: int):
    import websockets

    port = stack["ports"]["b"]
    return await websockets.connect(f"ws://127.0.0.1:{port}/ws/sessions/{session_id}/", max_size=None,
                                    additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"})


async def until(ws, *needles: str, timeout: float = 30) -> str:
    seen: list[str] = []
    async with asyncio.timeout(timeout):
        while not all(any(n in s for s in seen) for n in needles):
            seen.append(await ws.recv())
    return "\n".join(seen)


def test_a_tab_on_process_b_drives_a_worker_in_process_a_then_a_dies(stack):
    browser, session_id = log_in_and_connect(stack)
    cookie = f"sessionid={browser.cookies['sessionid']}"

    async def drive() -> None:
        ws = await tab(stack, cookie, session_id)
        try:
            await until(ws, 'id="catalogue"', ">echo<")
            await ws.send(json.dumps({"action": "call_tool", "name": "echo", "args.text": "over redis"}))
            result = await until(ws, 'aria-label="Result"', "tools/call")
            assert "over redis" in result.split('aria-label="Result"', 1)[1]
        finally:
            await ws.close()

    asyncio.run(drive())
    # The worker and its stdio child live in A (B never spawned anything).
    a, b = stack["procs"]["a"], stack["procs"]["b"]
    assert "sdk_server.py" in " ".join(_children_cmdlines(a.pid))
    assert _children_cmdlines(b.pid) == []

    os.killpg(a.pid, signal.SIGKILL)
    a.wait(10)

    async def watch_end() -> str:
        deadline = time.monotonic() + 20 * HEARTBEAT
        while True:                              # the heartbeat must go stale: a time-based condition
            ws = await tab(stack, cookie, session_id)
            try:
                page = await until(ws, 'id="session-state"')
            finally:
                await ws.close()
            if "status-ended" in page or time.monotonic() > deadline:
                return page
            await asyncio.sleep(HEARTBEAT)

    page = asyncio.run(watch_end())
    assert "status-ended" in page and "worker process ended" in page
    assert "tools/call" in page                  # the transcript replayed from PostgreSQL is intact


def _children_cmdlines(pid: int) -> list[str]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):
            continue
    return out
