"""The capture as a host starts it (`python manage.py mcp --capture BASE --capture-server ID -- …`),
and a receiver of its uploads (receiver.py) per module."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NODE, PEERS, ROOT
from tests.mcp.capture.receiver import Receiver

TOKEN = "capture-token-of-alice"
SERVER = 7  # alice's server
OTHER_SERVER = 8  # someone else's
MANAGE = str(ROOT / "manage.py")
PEER = str(PEERS / "capture_peer.py")
INSPECTOR = ROOT / "tools" / "npm" / "node_modules" / "@modelcontextprotocol" / "inspector"


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with Receiver({TOKEN: {SERVER}}) as r:
        yield r


@pytest.fixture
def fresh(receiver: Receiver) -> Receiver:
    """The module's receiver, emptied and up."""
    with receiver.changed:
        receiver.captures.clear()
        receiver.statuses.clear()
        receiver.answer_status = None
        receiver.fail_after_store = 0
    if receiver._server is None:
        receiver.up()
    return receiver


def capture_argv(base: str, command: list[str], server: int = SERVER, options: tuple[str, ...] = ()) -> list[str]:
    """The entry's command and args (the contract): the venv's python, manage.py, the options."""
    return [sys.executable, MANAGE, "mcp", "--capture", base, "--capture-server", str(server), *options, "--", *command]


def host_env(tmp: Path, token: str = TOKEN, **extra: str) -> dict[str, str]:
    """What a host gives the capture: its environment with the entry's env (the token) added."""
    return {
        **os.environ,
        "PLAYGROUND_CAPTURE_TOKEN": token,
        "PLAYGROUND_CAPTURE_SPILL_DIR": str(tmp / "spill"),
        **extra,
    }


def start(
    base: str, command: list[str], env: dict[str, str], server: int = SERVER, options: tuple[str, ...] = ()
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        capture_argv(base, command, server, options),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd="/",
    )


def read_until(proc: subprocess.Popen[bytes], marker: bytes) -> bytes:
    """Read the capture's stdout until `marker` has come (blocking reads: no sleeps)."""
    assert proc.stdout is not None
    got = b""
    while marker not in got:
        chunk = os.read(proc.stdout.fileno(), 65536)
        assert chunk, f"stdout ended before {marker!r}: {got!r}"
        got += chunk
    return got


def finish(proc: subprocess.Popen[bytes], timeout: float = 60) -> tuple[bytes, bytes]:
    """The rest of stdout (to its end), then stderr, then the exit: stdin left open, as a host that
    has not closed it yet (stderr must stay under a pipe's 64 KiB meanwhile)."""
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    out = b"".join(iter(lambda: os.read(proc.stdout.fileno(), 65536), b""))  # type: ignore[union-attr]
    err = proc.stderr.read()
    proc.wait(timeout)
    proc.stdin.close()
    return out, err


def frames(records: list[dict[str, Any]], direction: str) -> list[bytes]:
    """The lines of one direction, as bytes again: a frame joined to the `part` records it
    says came before it (the contract; parts no frame claims are dropped, as the playground does)."""
    lines, parts = [], []
    for r in records:
        if r.get("dir") != direction:
            continue
        if r["kind"] == "part":
            parts.append(base64.b64decode(r["b64"]))
        elif r["kind"] == "frame":
            own = r["text"].encode() if "text" in r else base64.b64decode(r["b64"])
            claimed = parts[max(0, len(parts) - r["parts"]) :] if r.get("parts") else []
            lines.append(b"".join([*claimed, own]))
            parts = []
    return lines


def lines_of(data: bytes) -> list[bytes]:
    """A stream cut into the lines a capture records: at each newline, a partial last line too."""
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


def contiguous(records: list[dict[str, Any]]) -> bool:
    return [r["i"] for r in records] == list(range(len(records)))


def inspector(args: list[str], cwd: Path) -> dict[str, Any]:
    run = subprocess.run(
        [str(NODE), str(INSPECTOR / "clients" / "launcher" / "build" / "index.js"), *args],  # mcp-inspector
        capture_output=True,
        text=True,
        timeout=90,
        cwd=cwd,
        env={
            **os.environ,
            "HOME": str(cwd),
            "MCP_INSPECTOR_SECRET_STORE": "memory",
        },  # (its catalogue, if it wrote one, stays here)
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


async def session_of(target: Any) -> list[Any]:
    """What the official SDK client gets from a few calls of the SDK peer (tests/peers/sdk_server.py),
    as plain data: `target` is its stdio parameters or its URL."""
    from mcp import Client

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(60):
        async with Client(target) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            results = [
                await client.call_tool("echo", {"text": "héllo\nworld"}),
                await client.call_tool("add", {"a": 2, "b": 40}),
                await client.call_tool("weather", {"city": "Lyon"}),
                await client.call_tool("fail", {"message": "no"}),
                await client.call_tool("slow", {"steps": 3, "delay": 0}, progress_callback=on_progress),
                await client.call_tool("stderr_line", {"text": "on stderr"}),
            ]
    return [tools, progress, *(r.model_dump(mode="json") for r in results)]
