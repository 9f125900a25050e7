"""The forwarding: the server started with the host's argv and environment (less the capture
token), and three threads that move bytes host -> server, server -> host and server's stderr ->
host's stderr as they come (os.read / os.write: no decoding, no buffering, no newline added or
taken away), each handing the chunk to the recorder (one deque append, never a wait) just before
passing it on: the other side cannot have it yet, so whatever it answers is recorded after it.
Handed over after the write, a reply could overtake it (the host answering a server's request
before the thread that forwarded the request had handed it over), and the captured transcript had
the answer before the question.

What the host sees is what it would see without the capture: the server's exit code (or its
death by the same signal), the end of stdout when the server closes it, a broken pipe when the
server stops reading; SIGINT, SIGTERM and SIGHUP are passed to the server, and the host closing
our stdin closes the server's.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from . import TOKEN_VAR

CHUNK = 1 << 20  # the most one read takes (a pipe holds 64 KiB unless enlarged: below)
PIPE_SIZE = 1 << 20  # the server's stdout pipe, enlarged (Linux): a flood moves in 16x fewer reads and writes
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
DRAIN = 2.0  # seconds to wait, after the server exited, for its stdout/stderr to end (a child may hold them)

Sink = Callable[[str, bytes], None]


def server_env(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The host's environment, unchanged but for our own token."""
    return {name: value for name, value in environ.items() if name != TOKEN_VAR}


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _close_onto_null(fd: int) -> None:
    """Close our end of a pipe the host holds, keeping the descriptor number taken."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


@dataclass
class Outcome:
    code: int  # the server's exit code; negative: killed by that signal
    reason: str
    signals: list[int] = field(default_factory=list)


class Proxy:
    def __init__(
        self,
        argv: list[str],
        cwd: str | None,
        sink: Sink,
        host_in: int = 0,
        host_out: int = 1,
        host_err: int = 2,
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.sink = sink  # (stream, chunk): "send", "recv", "stderr"; b"" at a stream's end
        self.host_in, self.host_out, self.host_err = host_in, host_out, host_err
        self.proc: subprocess.Popen[bytes] | None = None
        self.host_closed = False
        self.signals: list[int] = []
        self._early: list[int] = []

    def start(self, started: Callable[[int], None] = lambda pid: None) -> None:
        """Start the server (raises OSError as Popen does), tell `started` its pid, then start
        the forwarding threads."""
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(os.environ),
            cwd=self.cwd,
            bufsize=0,
        )
        started(self.proc.pid)
        for signum in self._early:  # received while it was starting: passed on now
            os.kill(self.proc.pid, signum)
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None
        if hasattr(fcntl, "F_SETPIPE_SZ"):
            try:
                fcntl.fcntl(stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_SIZE)
            except OSError:  # beyond /proc/sys/fs/pipe-max-size: the default size
                pass
        self._threads = [
            threading.Thread(target=self._host_to_server, args=(stdin,), name="capture-send", daemon=True),
            threading.Thread(target=self._pump, args=(stdout, self.host_out, "recv"), name="capture-recv", daemon=True),
            threading.Thread(
                target=self._pump, args=(stderr, self.host_err, "stderr"), name="capture-err", daemon=True
            ),
        ]
        for thread in self._threads:
            thread.start()

    def forward_signals(self) -> None:
        """Our SIGINT/SIGTERM/SIGHUP go to the server (main thread only; before `start`)."""
        for signum in FORWARDED:
            signal.signal(signum, self._signal)

    def _signal(self, signum: int, frame: object) -> None:
        self.signals.append(signum)
        proc = self.proc
        if proc is None:
            self._early.append(signum)
        elif proc.returncode is None:
            try:
                os.kill(proc.pid, signum)
            except ProcessLookupError:
                pass

    def wait(self) -> Outcome:
        """Until the server has exited and its output ended (or DRAIN seconds passed)."""
        assert self.proc is not None
        code = self.proc.wait()
        for thread in self._threads[1:]:  # (the host may keep our stdin open: not waited for)
            thread.join(DRAIN)
        if self.signals:
            reason = f"signal {signal.Signals(self.signals[0]).name}"
        elif code < 0:
            reason = f"server killed by {signal.Signals(-code).name}"
        elif self.host_closed:
            reason = "host closed stdin"
        else:
            reason = "server exited"
        return Outcome(code, reason, list(self.signals))

    # --- the three forwarding threads ---------------------------------------------------------

    def _host_to_server(self, to_server: IO[bytes]) -> None:
        sink = self.sink
        fd = to_server.fileno()
        while True:
            try:
                data = os.read(self.host_in, CHUNK)
            except OSError:
                data = b""
            if not data:
                self.host_closed = True
                _close(to_server)  # the server sees its stdin end
                sink("send", b"")
                return
            sink("send", data)  # before the server can have it (and answer it)
            try:
                _write_all(fd, data)
            except OSError:  # the server stopped reading: the host's next write breaks its pipe
                sink("send", b"")
                _close(to_server)
                _close_onto_null(self.host_in)
                return

    def _pump(self, source: IO[bytes], target: int, stream: str) -> None:
        """Server stdout -> host stdout ("recv"), or server stderr -> host stderr ("stderr")."""
        sink = self.sink
        fd = source.fileno()
        broken = False
        while True:
            try:
                data = os.read(fd, CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            sink(stream, data)  # before the host can have it (and answer it)
            try:
                _write_all(target, data)
            except OSError:  # the host stopped reading: the server's next write breaks its pipe too
                broken = True
                break
        sink(stream, b"")
        _close(source)
        if stream == "recv" and not broken:
            _close_onto_null(target)  # the host sees our stdout end when the server's did


def _close(file: IO[bytes]) -> None:
    try:
        file.close()
    except OSError:
        pass
