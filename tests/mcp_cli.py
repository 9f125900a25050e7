"""The headless CLI run as a person runs it (`manage.py mcp ...`, a process of its own), for the
tests of its contract (tests/mcp/) and of what it shares with the page (tests/sessions/)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT


def mcp(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "mcp", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def lines(proc: subprocess.CompletedProcess[str]) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
