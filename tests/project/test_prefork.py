"""The suite's SDK peers start by fork from a zygote (tests/peers/prefork.py): the started process
must still behave as the server it stands for (its answers on its pipes, its exit, its signals)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PEERS

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A zygote of this test's own on a socket in tmp_path: the environment that points peers at it."""
    env = {**os.environ, "PLAYGROUND_PREFORK_SOCKET": str(tmp_path / "z.sock")}
    proc = subprocess.Popen(
        [sys.executable, str(PEERS / "prefork.py"), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "listening\n"
    yield env
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(10) == 0
    assert not (tmp_path / "z.sock").exists()


def started(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(PEERS / "sdk_server.py"), "stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def initialized(proc: subprocess.Popen[bytes]) -> dict:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_a_peer_answers_from_the_fork_and_exits_as_it_does(zygote: dict[str, str]) -> None:
    proc = started(zygote)
    reply = initialized(proc)
    assert reply["result"]["serverInfo"]["name"] == "sdk-peer"
    # The started process handed its pipes over: it holds none of them, the fork answered.
    assert [os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in (0, 1, 2)] == [os.devnull] * 3
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()  # the SDK's stdio server ends at EOF: so does the started process, with its status
    assert proc.wait(10) == 0
    assert proc.stdout.read() == b""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_the_started_process_ends_the_fork(zygote: dict[str, str], sig: signal.Signals) -> None:
    proc = started(zygote)
    initialized(proc)
    os.killpg(proc.pid, sig)  # as our stdio transport stops a server: its process group
    assert proc.wait(10) == -sig
    # Every writer of its stdout is gone (the fork too): the pipe reads EOF, not a hang.
    assert proc.stdout is not None and proc.stdout.read() == b""
