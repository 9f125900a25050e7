"""The app as it is deployed, for tests that need a real process: daphne serving
playground.asgi in a subprocess (its own session, so its whole group can be signalled), a
user logged in with `playground_setup`'s one-time link, and a tab — a `websockets` client
sending what the page sends. Used by tests/scaleout/ (two processes on PostgreSQL and Redis)
and tests/sessions/live/test_durability.py (a process stopped by a signal).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.http_peers import wait_port

ROOT = Path(__file__).resolve().parent.parent
MANAGE = [sys.executable, str(ROOT / "manage.py")]
DAPHNE = str(Path(sys.executable).parent / "daphne")


def app_env(**settings: str) -> dict[str, str]:
    """This environment with `settings`, without what only the test run should have."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "playground.settings", **settings}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def set_up(env: dict[str, str], port: int) -> str:
    """Migrate, then `playground_setup`: the one-time login link (pointing at `port`)."""
    subprocess.run([*MANAGE, "migrate", "--noinput", "-v", "0"], env=env, check=True, cwd=ROOT)
    setup = subprocess.run(
        [*MANAGE, "playground_setup"],
        env={**env, "PLAYGROUND_PORT": str(port)},
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return re.search(r"(http://\S+/login/token/\S+/)", setup.stdout).group(1)


def _interruptible() -> None:
    """In the child before exec: SIGINT as a terminal's foreground job has it. A job started in
    the background by a non-interactive shell (how CI runners often start `make test`) ignores
    SIGINT, and an ignored signal stays ignored across exec: daphne then keeps it ignored (Python
    installs its handler only over the default, and Twisted only over Python's), so Ctrl-C would
    not reach it at all. `make run` in a terminal is the case the tests stand for."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ignored_signals(pid: int) -> set[int]:
    """The signals process `pid` ignores (its SigIgn mask in /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", status, re.M).group(1), 16)
    return {number for number in range(1, 65) if mask >> (number - 1) & 1}


def start_daphne(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """daphne on 127.0.0.1:`port`, listening when this returns; its stderr in `log`."""
    proc = subprocess.Popen(
        [DAPHNE, "-b", "127.0.0.1", "-p", str(port), "playground.asgi:application"],
        env=env,
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=_interruptible,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    try:
        wait_port(port, proc, timeout=30)
    except Exception:
        stop_daphne(proc)
        raise
    return proc


def stop_daphne(proc: subprocess.Popen) -> None:
    """SIGTERM its group, then SIGKILL (what a test leaves behind, if anything)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def log_in(link: str) -> httpx.Client:
    """A browser logged in with the one-time link (the cookie holds for every port: same host)."""
    client = httpx.Client(follow_redirects=False, timeout=20)
    assert client.get(link).status_code == 302
    return client


def connect(browser: httpx.Client, port: int, name: str, args: list[str]) -> int:
    """Register a stdio server (this Python running `args`) and press Connect, on the process
    at `port`: its worker starts there. The session's id."""
    server_pk = add_server(browser, port, name, args)
    token = browser.cookies["csrftoken"]
    connected = browser.post(
        f"http://127.0.0.1:{port}/servers/{server_pk}/connect/", data={"csrfmiddlewaretoken": token}
    )
    return int(re.search(r"/sessions/(\d+)/", connected.headers["location"]).group(1))


def add_server(browser: httpx.Client, port: int, name: str, args: list[str]) -> int:
    """Register a stdio server (this Python running `args`) on the process at `port`: its pk."""
    base = f"http://127.0.0.1:{port}"
    browser.get(f"{base}/servers/add/")
    token = browser.cookies["csrftoken"]
    added = browser.post(
        f"{base}/servers/add/",
        data={
            "csrfmiddlewaretoken": token,
            "name": name,
            "transport": "stdio",
            "command": sys.executable,
            "args": "\n".join(args),
            "env": "",
            "cwd": "",
            "url": "",
            "headers": "",
            "era": "legacy",
        },
    )
    return int(re.search(r"/servers/(\d+)/", added.headers["location"]).group(1))


async def tab(browser: httpx.Client, port: int, session_id: int):
    """The session page's websocket on the process at `port`."""
    return await page_socket(browser, port, f"/ws/sessions/{session_id}/")


async def page_socket(browser: httpx.Client, port: int, path: str):
    """A page's websocket at `path` on the process at `port`, as the logged-in browser opens it."""
    import websockets

    return await websockets.connect(
        f"ws://127.0.0.1:{port}{path}",
        max_size=None,
        additional_headers={
            "Cookie": f"sessionid={browser.cookies['sessionid']}",
            "Origin": f"http://127.0.0.1:{port}",
        },
    )


async def until(ws, *needles: str, timeout: float = 30) -> str:
    """Read fragments until every needle was seen (each in one fragment); everything read. On a
    timeout, says what did come."""
    seen: list[str] = []
    try:
        async with asyncio.timeout(timeout):
            while not all(any(n in s for s in seen) for n in needles):
                seen.append(await ws.recv())
    except TimeoutError:
        missing = [n for n in needles if not any(n in s for s in seen)]
        raise AssertionError(f"never received {missing}; got:\n" + "\n".join(t[:400] for t in seen[-12:])) from None
    return "\n".join(seen)


def children(pid: int) -> dict[int, str]:
    """The processes whose parent is `pid`, with their command lines."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
    return out
