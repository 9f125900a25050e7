"""The official conformance suite's client scenarios, run against our headless adapter
(`manage.py mcp_conformance`), one test per (scenario, spec version) pair.

A pair passes only strictly: at least one check ran, none failed, none warned, and the
adapter exited 0 in time (the suite itself prints PASSED for 0/0 checks).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from playground.core.management.commands.mcp_conformance_table import (
    AUTH_SCENARIOS, CONFORMANCE, CORE_SCENARIOS, NODE22_BIN, SCENARIOS, adapter_command, client_pairs, format_table,
    listed_scenarios, run_pair, run_table,
)

if not CONFORMANCE.exists() or not (NODE22_BIN / "node").exists():
    pytest.fail("the conformance suite or Node 22 is not installed: run `make peers`", pytrace=False)

PAIRS = client_pairs(CORE_SCENARIOS)
AUTH_PAIRS = client_pairs(AUTH_SCENARIOS)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("scenario", "version"), PAIRS, ids=[f"{s}@{v}" for s, v in PAIRS])
def test_client_scenario(scenario: str, version: str) -> None:
    result = run_pair(scenario, version, timeout=55)
    assert result.strict_pass, result.explain()


@pytest.mark.timeout(600)
def test_every_auth_scenario_passes_strictly() -> None:
    """The 44 `auth/*` pairs, two at a time (each spawns the suite's mock AS and our adapter)."""
    results = run_table(AUTH_PAIRS, parallel=2)
    failed = [r for r in results if not r.strict_pass]
    assert not failed, "\n\n".join(r.explain() for r in failed)


def test_pairs_cover_every_scenario_at_every_listed_version() -> None:
    assert [s for s in SCENARIOS if s not in {s for s, _ in PAIRS + AUTH_PAIRS}] == []
    assert ("tools_call", "2025-06-18") in PAIRS and ("tools_call", "2026-07-28") in PAIRS
    listed = listed_scenarios()
    ours = {name for name, versions in listed.items() if name.startswith("auth/") and versions}
    assert ours == set(AUTH_SCENARIOS), "an auth scenario with spec versions is listed but not run (or vice versa)"
    assert len(AUTH_PAIRS) == 44


@pytest.mark.timeout(60)
def test_a_client_that_does_nothing_is_not_a_pass() -> None:
    """The suite reports PASSED (exit 0) with 0/0 checks here; the table must not."""
    result = run_pair("initialize", "2025-11-25", command="true")
    assert result.exit_code == 0 and result.passed == 0
    assert not result.strict_pass
    assert "FAIL" in format_table([result])


def _alive(pid: int) -> bool:
    """Running (a zombie awaiting its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state


@pytest.mark.timeout(60)
def test_a_hanging_client_fails_and_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pair that outlives its timeout is a FAIL, and the suite and the client are both gone."""
    pidfile = tmp_path / "pid"
    script = tmp_path / "hang.py"
    script.write_text("import os, pathlib, time\n"
                      "pathlib.Path(os.environ['HANG_PIDFILE']).write_text(str(os.getpid()))\n"
                      "time.sleep(600)\n")
    monkeypatch.setenv("HANG_PIDFILE", str(pidfile))
    result = run_pair("tools_call", "2025-11-25", timeout=5, command=f"{sys.executable} {script}")
    assert not result.strict_pass
    assert any("did not finish" in p for p in result.problems)
    pid = int(pidfile.read_text())
    assert not _alive(pid), f"client process {pid} was left running"


@pytest.mark.timeout(60)
def test_adapter_fails_clearly_when_it_cannot_connect() -> None:
    """Exit non-zero with the reason on stderr (here: nothing listens on the port)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]   # bound but not listening: connections are refused
        proc = subprocess.run(adapter_command().split(" ") + [f"http://127.0.0.1:{port}/mcp"],
                              capture_output=True, text=True, timeout=50,
                              env={**os.environ, "MCP_CONFORMANCE_SCENARIO": "tools_call",
                                   "MCP_CONFORMANCE_PROTOCOL_VERSION": "2025-11-25"})
    assert proc.returncode == 1
    assert "tools_call @ 2025-11-25 FAILED: could not connect" in proc.stderr
