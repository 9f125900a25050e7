"""daphne in a subprocess on a loopback port, for the programs that drive the app from outside
(bench/, tools/screenshot.py): returned once it accepts connections, stopped as a deployment
stops it. It stays in its caller's process group, so stopping a bench run's group stops it too.
(tests/daphne_process.py starts it in a session of its own, for the tests that signal it.)
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAPHNE = Path(sys.executable).parent / "daphne"


def free_port() -> int:
    """A loopback port nobody listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_daphne(port: int, application: str, *, cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """daphne serving `application` on 127.0.0.1:`port`, accepting connections (its output in
    `log`); stopped again, with the log's end in the error, when it does not start within 30 s."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(DAPHNE), "-b", "127.0.0.1", "-p", str(port), application],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return proc
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_daphne(proc)
            tail = log.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"daphne ({application}) did not start; {log}:\n{tail}")
        time.sleep(0.05)


def stop_daphne(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (daphne ends its sessions and their stdio servers, as a disconnect does), SIGKILL
    after 20 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
