"""`auto` over stdio probes `server/discover` with a short timeout (a legacy server may ignore
it). A server still starting — silent while it imports, or while uvx/npx fetch it — is waited
for within the transport's grace, not taken for a legacy one; a silent one is still given up on."""

from __future__ import annotations

import sys

import pytest

from playground.mcp import connect
from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.transports import stdio
from tests.conftest import PEERS
from tests.http_peers import Recorder

PEER = str(PEERS / "sdk_server.py")
# The official SDK's server, started after a silent pause longer than the probe's timeout.
SLOW_START = (
    "import runpy, sys, time; time.sleep(float(sys.argv[1])); sys.argv = [sys.argv[2], 'stdio']; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)
# The same after a line on stderr, as npx says what it installs before the server starts.
INSTALLING = "import sys; print('npm warn exec installing the package', file=sys.stderr, flush=True); " + SLOW_START


@pytest.mark.parametrize("start", [SLOW_START, INSTALLING], ids=["silent", "stderr-first"])
async def test_a_modern_server_slow_to_start_is_found_modern(monkeypatch: pytest.MonkeyPatch, start: str) -> None:
    monkeypatch.setattr(connect, "STDIO_PROBE_TIMEOUT", 0.3)
    rec = Recorder()
    config = ServerConfig(command=sys.executable, args=["-c", start, "1.0", PEER], era="auto", timeout=20)
    client = await open_client(config, tap=rec.tap)
    try:
        (era,) = rec.notes("era")
        assert era.data["era"] == "modern" and era.data["evidence"] == "discover-result", era.text
        assert any(t.get("name") == "echo" for t in await client.list_tools())
    finally:
        await client.close()


async def test_a_server_that_never_says_a_word_is_given_up_on_after_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connect, "STDIO_PROBE_TIMEOUT", 0.3)
    monkeypatch.setattr(stdio, "STARTUP_GRACE", 1.0)
    rec = Recorder()
    silent = ServerConfig(command=sys.executable, args=["-c", "import sys; sys.stdin.read()"], era="auto", timeout=1)
    with pytest.raises(ConnectError):
        await open_client(silent, tap=rec.tap)
    (era,) = rec.notes("era")
    assert era.data["era"] == "legacy" and "no answer to server/discover" in era.text
    started = next(e for e in rec.events if e.dir == "note" and e.kind == "started")
    assert era.t - started.t >= 1.0  # the grace ran out first
