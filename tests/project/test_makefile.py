"""What the Makefile runs, read from `make -n` (a dry run prints the commands without running them)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_apt_get_waits_for_the_dpkg_lock():
    """`make test` failed at once when another apt-get held the dpkg lock (issue 31): each apt-get
    the Chromium step may run waits for it."""
    dry = subprocess.run(
        ["make", "-n", "chromium", "CHROMIUM=/nonexistent/chromium"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    calls = re.findall(r"apt-get[^&|;)]*", dry)
    assert len(calls) == 4  # update and install, then the same with sudo
    assert all("-o DPkg::Lock::Timeout=" in call for call in calls), calls
