"""The floor of the parts we do not own, served by daphne beside the playground (`run.py`'s relay).

Two websocket relays that do nothing but move a JSON-RPC text between a websocket and an
SDK server's stdin/stdout, on the same daphne (Twisted, autobahn), the same SDK server and the
same bench client as the playground's arm:

- `/floor/daphne/` — a bare ASGI app: daphne's websocket and an asyncio pipe, nothing else;
- `/floor/channels/` — a Channels `AsyncWebsocketConsumer` (its dispatch loop, no channel layer).

Whatever either takes is the cost of daphne (and Channels) plus the server: a relay built on them
cannot be faster. The playground's own work (the form, the worker, the tap, the recorder, the
rendering) is what its arm takes beyond these.

And the flood's floor, `/floor/flood/` (a Channels consumer on the flood peer): asked
`{"count": N, "keep": false}` it sends every line on to the websocket as it reads it (what the
Inspector does with its event stream); with `"keep": true` it parses each line (orjson) and
saves it in SQLite (one multi-row INSERT per 500 lines in a thread, WAL, synchronous=NORMAL, as
the recorder saves) and sends only the count at the end: the least a relay that keeps every
message must do. `{"done": N}` ends either.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

import django

django.setup()

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.routing import URLRouter
from django.urls import path

PEER = Path(__file__).resolve().parent / "peer_sdk.py"
PEER_FLOOD = Path(__file__).resolve().parent / "peer_flood.py"
BATCH = 500
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "floor", "version": "1"}},
}


class Pipe:
    """The SDK server over stdio, initialized: a line written, a line read."""

    def __init__(self, peer: Path = PEER) -> None:
        self.peer = peer

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(self.peer),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
        )
        await self.ask(json.dumps(INITIALIZE))
        self.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def write(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")

    async def ask(self, text: str) -> str:
        self.write(text)
        assert self.proc.stdout is not None
        return (await self.proc.stdout.readline()).decode()

    async def stop(self) -> None:
        self.proc.kill()
        await self.proc.wait()


async def bare(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """daphne's websocket alone."""
    pipe = Pipe()
    try:
        while True:
            message = await receive()
            if message["type"] == "websocket.connect":
                await pipe.start()
                await send({"type": "websocket.accept"})
            elif message["type"] == "websocket.receive":
                await send({"type": "websocket.send", "text": await pipe.ask(message["text"])})
            elif message["type"] == "websocket.disconnect":
                return
    finally:
        if hasattr(pipe, "proc"):
            await pipe.stop()


class ChannelsRelay(AsyncWebsocketConsumer):
    """Channels' consumer on daphne's websocket (no channel layer: the alias names none)."""

    channel_layer_alias = "floor-none"

    async def connect(self) -> None:
        self.pipe = Pipe()
        await self.pipe.start()
        await self.accept()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        assert text_data is not None
        await self.send(text_data=await self.pipe.ask(text_data))

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "pipe"):
            await self.pipe.stop()


class FloodFloor(AsyncWebsocketConsumer):
    """The flood's floor: each line sent on, or parsed and saved (the module's docstring)."""

    channel_layer_alias = "floor-none"

    async def connect(self) -> None:
        self.pipe = Pipe(PEER_FLOOD)
        await self.pipe.start()
        self.folder = tempfile.mkdtemp(prefix="floor-flood-")
        self.db = sqlite3.connect(Path(self.folder) / "events.sqlite3", check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE event (seq INTEGER PRIMARY KEY, method TEXT, data TEXT)")
        self.seq = 0
        self.saver = ThreadPoolExecutor(1)  # one database thread, as Channels' (saves in order)
        await self.accept()

    def _save(self, rows: list[tuple[int, str, str]]) -> asyncio.Future[None]:
        return asyncio.get_running_loop().run_in_executor(self.saver, self._insert, rows)

    def _insert(self, rows: list[tuple[int, str, str]]) -> None:
        self.db.execute("INSERT INTO event VALUES " + ",".join(["(?,?,?)"] * len(rows)), [v for r in rows for v in r])
        self.db.commit()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        ask = json.loads(text_data or "{}")
        keep = bool(ask.get("keep"))
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        self.pipe.write(json.dumps({**call, "params": {"name": "flood", "arguments": {"count": ask["count"]}}}))
        assert self.pipe.proc.stdout is not None
        first = self.seq
        rows: list[tuple[int, str, str]] = []
        saving: list[asyncio.Future[None]] = []
        while True:
            line = (await self.pipe.proc.stdout.readline()).decode()
            if not keep:
                await self.send(text_data=line)
            else:
                message = orjson.loads(line)
                self.seq += 1
                rows.append((self.seq, message.get("method") or "", line))
                if len(rows) >= BATCH:
                    if len(saving) >= 2:  # two saves in flight at most, as the recorder
                        await saving.pop(0)
                    saving.append(self._save(rows))
                    rows = []
            if '"id":1,' in line or '"id": 1,' in line:
                break
        if rows:
            saving.append(self._save(rows))
        for save in saving:
            await save
        kept = self.db.execute("SELECT count(*) FROM event WHERE seq > ?", (first,)).fetchone()[0]
        await self.send(text_data=json.dumps({"done": ask["count"], "kept": kept}))

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "pipe"):
            await self.pipe.stop()
        if hasattr(self, "db"):
            self.saver.shutdown()
            self.db.close()


application = URLRouter(
    [
        path("floor/daphne/", bare),
        path("floor/channels/", ChannelsRelay.as_asgi()),
        path("floor/flood/", FloodFloor.as_asgi()),
    ]
)
