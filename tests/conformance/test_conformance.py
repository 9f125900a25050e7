"""The official conformance suite's client scenarios, run against our headless adapter
(`python -m playground.mcp.conformance_adapter`, also `manage.py mcp_conformance`), one test per (scenario, spec version) pair.

A pair passes only strictly: at least one check ran, none failed, none warned, and the
adapter exited 0 in time (the suite itself prints PASSED for 0/0 checks).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from playground.core.management.commands.mcp_conformance_table import (
    AUTH_SCENARIOS,
    CORE_SCENARIOS,
    NODE22_BIN,
    PRELOAD,
    PROJECT,
    SCENARIOS,
    SUITE,
    adapter_command,
    client_pairs,
    format_table,
    listed_scenarios,
    run_pair,
    run_table,
)

if not SUITE.exists() or not (NODE22_BIN / "node").exists() or not PRELOAD.exists():
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


# Run by the suite as the "client": finds the suite among its ancestors and writes down the
# local address of every socket the suite listens on (/proc/net/tcp*, matched by inode).
LISTEN_REPORTER = """
import json, os, sys
from pathlib import Path

def ancestors():
    pid = os.getppid()
    while pid > 1:
        yield pid
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])

suite = next(p for p in ancestors() if b"/conformance/dist/index.js" in Path(f"/proc/{p}/cmdline").read_bytes())
inodes = set()
for fd in Path(f"/proc/{suite}/fd").iterdir():
    try:
        target = os.readlink(fd)
    except OSError:
        continue
    if target.startswith("socket:["):
        inodes.add(target[len("socket:["):-1])
listening = [row.split()[1] for table in ("/proc/net/tcp", "/proc/net/tcp6")
             for row in Path(table).read_text().splitlines()[1:]
             if row.split()[3] == "0A" and row.split()[9] in inodes]
Path(os.environ["LISTEN_REPORT"]).write_text(json.dumps({"url": sys.argv[-1], "listening": listening}))
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("scenario", "version", "servers"),
    [
        ("initialize", "2025-11-25", 1),  # listen(0, callback)
        ("auth/authorization-server-migration", "2026-07-28", 3),  # listen(0), address() read at once; 3 servers
    ],
)
def test_the_suites_servers_listen_on_loopback_only(
    scenario: str, version: str, servers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Servers used in tests bind 127.0.0.1 only: every socket the suite listens on while the
    client runs (the pair itself fails here: the "client" only looks)."""
    script, report = tmp_path / "listening.py", tmp_path / "listening.json"
    script.write_text(LISTEN_REPORTER)
    monkeypatch.setenv("LISTEN_REPORT", str(report))
    run_pair(scenario, version, timeout=60, command=f"{sys.executable} {script}")
    seen = json.loads(report.read_text())
    addresses = seen["listening"]
    assert len(addresses) == servers, seen
    assert all(a.startswith("0100007F:") for a in addresses), f"not on 127.0.0.1 only: {seen}"
    port = int(seen["url"].rsplit(":", 1)[1].split("/")[0])
    assert f"0100007F:{port:04X}" in addresses


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
    script.write_text(
        "import os, pathlib, time\n"
        "pathlib.Path(os.environ['HANG_PIDFILE']).write_text(str(os.getpid()))\n"
        "time.sleep(600)\n"
    )
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
        port = sock.getsockname()[1]  # bound but not listening: connections are refused
        proc = subprocess.run(
            adapter_command().split(" ") + [f"http://127.0.0.1:{port}/mcp"],
            capture_output=True,
            text=True,
            timeout=50,
            cwd=PROJECT,
            env={
                **os.environ,
                "MCP_CONFORMANCE_SCENARIO": "tools_call",
                "MCP_CONFORMANCE_PROTOCOL_VERSION": "2025-11-25",
            },
        )
    assert proc.returncode == 1
    assert "tools_call @ 2025-11-25 FAILED: could not connect" in proc.stderr
