"""Real authorization servers for tests, both approving without a person: the conformance
suite's auth mocks (an MCP server plus an OAuth authorization server) in interactive mode —
`conformance client --scenario S` without `--command` prints the MCP server's URL and waits; the
conformance table's preload keeps them on 127.0.0.1 (they listen on every interface otherwise) —
and the official SDK's authorization server (refresh tokens, JWTs and revocation, which the mocks lack)."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playground.core.management.commands.mcp_conformance_table import loopback_ports, suite_command, suite_env
from tests.http_peers import free_port, start_peer, stop_peer

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def auth_mock(scenario: str, version: str, timeout: float = 20.0) -> Iterator[str]:
    """Run one scenario's mock; yields the MCP server URL; stops the whole process group."""
    proc = subprocess.Popen(
        suite_command("client", "--scenario", scenario, "--spec-version", version),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        start_new_session=True,
        env=suite_env(loopback_ports()),
    )
    try:
        yield _read_url(proc, timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(5)
        if proc.stdout:
            proc.stdout.close()


def _read_url(proc: subprocess.Popen[bytes], timeout: float) -> str:
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not sel.select(deadline - time.monotonic()):
            break
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
        m = re.search(rb"Server URL: (\S+)", seen)
        assigned = set(re.findall(rb"\[loopback\] assigned (\d+)", seen))
        if m and assigned and assigned == set(re.findall(rb"\[loopback\] listening (\d+)", seen)):
            return m.group(1).decode()
    raise RuntimeError(f"the auth mock printed no URL: {seen.decode(errors='replace')[-500:]}")


@contextmanager
def sdk_auth_server(redirect_uri: str = "http://127.0.0.1/callback") -> Iterator[str]:
    """The official SDK's authorization server in front of an SDK MCP server (tests/peers/
    sdk_auth_server.py: refresh tokens, JWT access tokens, revocation, a pre-registered client
    for `redirect_uri`); yields the MCP URL."""
    port = free_port()
    proc = start_peer(
        [sys.executable, str(ROOT / "tests" / "peers" / "sdk_auth_server.py"), str(port), redirect_uri], port
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_peer(proc)
