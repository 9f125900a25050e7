"""The floor of the parts we do not own, served by daphne beside the playground (`run.py`'s relay).

Two websocket relays that do nothing but move a JSON-RPC text between a websocket and an
SDK server's stdin/stdout, on the same daphne (Twisted, autobahn), the same SDK server and the
same bench client as the playground's arm:

- `/floor/daphne/` — a bare ASGI app: daphne's websocket and an asyncio pipe, nothing else;
- `/floor/channels/` — a Channels `AsyncWebsocketConsumer` (its dispatch loop, no channel layer).

Whatever either takes is the cost of daphne (and Channels) plus the server: a relay built on them
cannot be faster. The playground's own work (the form, the worker, the tap, the recorder, the
rendering) is what its arm takes beyond these.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

import django

django.setup()

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.routing import URLRouter
from django.urls import path

PEER = Path(__file__).resolve().parent / "peer_sdk.py"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "floor", "version": "1"}},
}


class Pipe:
    """The SDK server over stdio, initialized: a line written, a line read."""

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(PEER),
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


application = URLRouter([path("floor/daphne/", bare), path("floor/channels/", ChannelsRelay.as_asgi())])
