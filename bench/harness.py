"""The app under measurement: daphne in a subprocess on a temporary SQLite database, logged in
through the one-time token link, driven by a light websocket client as the page drives it.

The benchmark process shares the database file with daphne (Django ORM set up here too), so
it can create the user and servers, seed big transcripts and count persisted events.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
PEER_SDK = BENCH / "peer_sdk.py"
PEER_FLOOD = BENCH / "peer_flood.py"
TMP = Path(tempfile.mkdtemp(prefix="playground-bench-"))

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
os.environ["PLAYGROUND_SQLITE_PATH"] = str(TMP / "bench.sqlite3")
os.environ.pop("DATABASE_URL", None)
os.environ.pop("REDIS_URL", None)
# `run.py --scaleout`: the configuration of several processes (PostgreSQL and Redis on this
# machine, as CI's), on a database and a Redis prefix of the bench's own, dropped at the end.
SCALEOUT = os.environ.pop("PLAYGROUND_BENCH_SCALEOUT", "") == "1"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_NAME = f"playground_bench_{os.getpid()}"
REDIS_DB = 12
if SCALEOUT:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{PG_NAME}"')
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{PG_NAME}"
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:6379/{REDIS_DB}"
    os.environ["PLAYGROUND_REDIS_PREFIX"] = f"bench-{os.getpid()}"


def drop_scaleout() -> None:
    """The bench's PostgreSQL database and Redis keys (--scaleout), once daphne has stopped."""
    if not SCALEOUT:
        return
    import psycopg
    import redis
    from django.db import connections

    connections.close_all()
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
    r = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    for key in r.scan_iter(f"{os.environ['PLAYGROUND_REDIS_PREFIX']}*"):
        r.delete(key)
    r.close()


DAPHNE_ENV = dict(os.environ, PLAYGROUND_LOG_LEVEL="WARNING")
DAPHNE_ENV.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # (set by the browser test run, if we run inside it)
# This harness calls the ORM from its event loop on purpose (setup and counting, never timed);
# daphne's environment (above) does not get this.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
sys.path.insert(0, str(ROOT))

import django

django.setup()

import httpx
from django.contrib.auth import get_user_model
from django.core.management import call_command
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect

from playground.registry.models import LoginToken, Server
from playground.transcripts.models import Event, Session
from tools.daphne_server import free_port, start_daphne, stop_daphne

CLK_TCK = os.sysconf("SC_CLK_TCK")


# Process facts (/proc) --------------------------------------------------------------


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])  # kB
    raise KeyError(key)


def rss_mb(pid: int) -> float:
    return _status(pid, "VmRSS") / 1024


def peak_mb(pid: int) -> float:
    """Peak resident size since the last `reset_peak` (VmHWM)."""
    return _status(pid, "VmHWM") / 1024


def reset_peak(pid: int) -> None:
    """Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


# The app ------------------------------------------------------------------------------


class App:
    """daphne serving playground.asgi on loopback, one logged-in user, helpers to drive it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.http: httpx.Client | None = None
        self.cookie = ""

    def start(self) -> None:
        call_command("migrate", verbosity=0, interactive=False)
        self.user, _ = get_user_model().objects.get_or_create(username="bench")
        self.proc = start_daphne(
            self.port, "playground.asgi:application", cwd=ROOT, env=DAPHNE_ENV, log=TMP / "daphne.log"
        )
        self.http = httpx.Client(base_url=self.base, timeout=120, headers={"Origin": self.base})
        token = LoginToken.issue(self.user)
        r = self.http.get(f"/login/token/{token}/")
        assert r.status_code in (200, 302), r.status_code
        self.http.get("/")  # sets the CSRF cookie
        self.cookie = "; ".join(f"{k}={v}" for k, v in self.http.cookies.items())

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.http is not None:
            self.http.close()
        if self.proc is not None:
            stop_daphne(self.proc)

    # Servers and sessions -------------------------------------------------------------

    def server(self, name: str, script: Path) -> Server:
        server, _ = Server.objects.update_or_create(
            name=name,
            defaults={"owner": self.user, "transport": "stdio", "command": sys.executable, "args": [str(script)]},
        )
        return server

    def connect(self, server: Server) -> int:
        """POST "Connect" as the page does: the worker starts inside daphne. Returns the session id."""
        assert self.http is not None
        r = self.http.post(
            f"/servers/{server.pk}/connect/", headers={"X-CSRFToken": self.http.cookies.get("csrftoken", "")}
        )
        assert r.status_code == 302, (r.status_code, r.text[:500])
        return int(re.search(r"/sessions/(\d+)/", r.headers["location"]).group(1))

    async def socket(self, session_id: int, **kw: Any) -> ClientConnection:
        return await ws_connect(
            f"ws://127.0.0.1:{self.port}/ws/sessions/{session_id}/",
            additional_headers={"Cookie": self.cookie},
            origin=self.base,
            max_size=None,
            compression=None,
            **kw,
        )


class Floor:
    """daphne serving `floor_asgi` (the relay's floor: daphne, and Channels, with nothing of ours)."""

    def __init__(self) -> None:
        self.port = free_port()

    def start(self) -> None:
        env = dict(DAPHNE_ENV, PYTHONPATH=str(ROOT))
        self.proc = start_daphne(self.port, "floor_asgi:application", cwd=BENCH, env=env, log=TMP / "floor.log")

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def socket(self, which: str) -> ClientConnection:
        return await ws_connect(f"ws://127.0.0.1:{self.port}/floor/{which}/", max_size=None, compression=None)

    def stop(self) -> None:
        stop_daphne(self.proc)


async def wait_for(ws: ClientConnection, needle: str, timeout: float = 60) -> str:
    """Read frames until one contains `needle`; return it."""
    async with asyncio.timeout(timeout):
        while True:
            frame = await ws.recv()
            if needle in frame:
                return frame


def call_frame(name: str, **args: Any) -> str:
    """What the tool form sends (htmx hx-ws:send): its form values plus `headers`."""
    return json.dumps(
        {
            "action": "call_tool",
            "name": name,
            "mode": "form",
            **{f"args.{k}": str(v) for k, v in args.items()},
            "headers": {},
        }
    )


def count_events(session_id: int, method: str = "") -> int:
    qs = Event.objects.filter(session_id=session_id)
    return qs.filter(method=method).count() if method else qs.count()


def call_latencies(session_id: int, method: str = "tools/call") -> list[float]:
    """What the tap measured for each `method` request of a session, in order: from the request
    frame written to its response read (the server and the pipe, none of the relay)."""
    sent = set(Event.objects.filter(session_id=session_id, dir="send", method=method).values_list("seq", flat=True))
    out = []
    for data in Event.objects.filter(session_id=session_id, dir="recv").order_by("seq").values_list("data", flat=True):
        if data.get("reply_to") in sent and data.get("latency_ms") is not None:
            out.append(float(data["latency_ms"]))
    return out


def session_status(session_id: int) -> str:
    return Session.objects.values_list("status", flat=True).get(pk=session_id)
