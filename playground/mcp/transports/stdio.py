"""stdio transport: the server is a child process; frames are lines on its stdin and stdout.

Everything the child writes is recorded on the tap as it arrives, including lines that are
not JSON, invalid UTF-8, a partial last line and lines too long for asyncio's line reader
(stdout is read in chunks into our own buffer, so a huge frame never kills the reader).
stderr is always drained, so a chatty server never blocks on a full pipe.

The child runs in its own session (process group): `close()` can then stop the whole tree,
including grandchildren, and never leaves a zombie or an orphan behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any

from .. import jsonrpc
from ..environment import resolve_command, server_environment
from ..events import Tap
from ..framing import MAX_FRAME
from .base import Transport, TransportError

# How much is read from a pipe at a time.
CHUNK = 65536
# How long `close()` waits for SIGKILL to take effect and for the readers to finish.
KILL_WAIT = 5.0
# Seconds a server that has written nothing yet is given to start before request deadlines run
# out on it (a Python server's imports on a busy machine, `uvx` or `npx` fetching a package).
STARTUP_GRACE = 20.0


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Fires `exited` as soon as the child is reaped.

    `Process.wait()` only returns once every pipe is closed too, which never happens
    while a grandchild still holds stdout; a crash must be seen without that.

    `inline(fd, data)` sees what a pipe brings first (from the first byte: it counts what it
    leaves to the pipe's stream) and may take it in this callback (True), before it reaches the
    stream and its reader task (StdioTransport._inline).
    """

    def __init__(
        self, limit: int, loop: asyncio.AbstractEventLoop, inline: Callable[[int, bytes], bool] | None = None
    ) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()
        self.inline = inline

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if self.inline is not None and isinstance(data, bytes) and self.inline(fd, data):
            return
        super().pipe_data_received(fd, data)

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


def describe_exit(returncode: int | None) -> str:
    """'server process exited with code 3' / '... killed by signal SIGTERM (code -15)'."""
    if returncode is None:
        return "server process is still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"server process was killed by {name} (code {returncode})"
    return f"server process exited with code {returncode}"


class _Lines:
    """A pipe split into lines with our own buffer (no LimitOverrunError, no size limit beyond
    `max_line`). A line longer than `max_line` is handed to `on_overflow` cut at `max_line`
    bytes and the rest of it is skipped. A partial last line counts as a line (`end`)."""

    def __init__(
        self,
        on_line: Callable[[bytes], Any],
        on_overflow: Callable[[bytes], Any],
        max_line: int,
        failed: Callable[[Exception], None],
    ) -> None:
        self.on_line, self.on_overflow, self.max_line, self.failed = on_line, on_overflow, max_line, failed
        self.buf = bytearray()  # the unfinished line so far
        self.skipping = False  # inside the tail of an over-long line

    def feed(self, chunk: bytes) -> None:
        # Split in C, then one handler call a line (a flood brings hundreds a chunk).
        lines = chunk.split(b"\n")
        tail = lines.pop()  # after the chunk's last newline: unfinished
        buf = self.buf
        if lines:
            if self.skipping:
                del lines[0]  # the end of the over-long line: skipped
                self.skipping = False
            elif buf:
                buf += lines[0]
                lines[0] = bytes(buf)
            buf.clear()
            on_line = self.on_line
            for line in lines:
                try:
                    on_line(line)
                except Exception as exc:
                    self.failed(exc)
        if not self.skipping:
            buf += tail
        if len(buf) > self.max_line:
            self._guard(self.on_overflow, bytes(buf[: self.max_line]))
            self.skipping = True
            buf.clear()

    def end(self) -> None:
        if self.buf and not self.skipping:
            self._guard(self.on_line, bytes(self.buf))
        self.buf.clear()

    def _guard(self, handle: Callable[[bytes], Any], line: bytes) -> None:
        """A failing tap listener or client handler must not stop the reader."""
        try:
            handle(line)
        except Exception as exc:
            self.failed(exc)


def _group_members(pgid: int) -> list[int] | None:
    """Live (non-zombie) pids in process group `pgid`; None where /proc is unavailable."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    members = []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        # fields: state, ppid, pgrp, ...
        if len(fields) > 2 and fields[0] not in (b"Z", b"X") and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies awaiting init don't count)."""
    members = _group_members(pgid)
    if members is not None:
        return bool(members)
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class StdioTransport(Transport):
    """Spawns `command args` and speaks newline-delimited JSON-RPC over its stdin/stdout."""

    name = "stdio"

    def __init__(
        self,
        tap: Tap,
        command: str,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        *,
        inherit_env: bool = False,
        max_line: int = MAX_FRAME,
        shutdown_grace: float = 2.0,
    ) -> None:
        super().__init__(tap)
        self.command = command
        self.args = list(args or [])
        self.env = dict(env or {})
        self.cwd = cwd
        self.inherit_env = inherit_env
        self.max_line = max_line
        self.shutdown_grace = shutdown_grace
        self.process: asyncio.subprocess.Process | None = None
        self._protocol: _Protocol | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._lines = {
            1: _Lines(self._on_stdout_line, self._on_stdout_overflow, max_line, self._handler_failed),
            2: _Lines(self.tap.stderr, self.tap.stderr, max_line, self._handler_failed),
        }
        self._unread = {1: 0, 2: 0}  # bytes of each pipe in its stream, not yet read by its reader task
        self._reading = False  # started: the readers are there (`_inline` may take a pipe's bytes)
        self._stdout_task: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._spawned_at = 0.0
        self._heard = False  # the server has written on stdout (its stderr may be npx/uvx installing it)
        self._watch_task: asyncio.Task[None] | None = None
        self._close_task: asyncio.Task[None] | None = None
        self._closing = False
        self._closed_noted = False  # the "closed" note is made once, by whoever sees the end first

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process else None

    # Lifecycle ----------------------------------------------------------------

    async def start(self) -> None:
        if self._closing:
            raise TransportError("stdio transport is closed")
        if self.process is not None:
            raise TransportError("stdio transport already started")
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _Protocol(limit=CHUNK * 4, loop=loop, inline=self._inline),
                resolve_command(self.command),
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=server_environment(self.env, self.inherit_env),
                cwd=self.cwd,
                start_new_session=True,
            )
        except (OSError, ValueError) as exc:
            message = self._spawn_error(exc)
            self.tap.note("error", message, command=self.command)
            raise TransportError(message) from exc
        self._transport, self._protocol = transport, protocol
        self.process = asyncio.subprocess.Process(transport, protocol, loop)
        self._spawned_at = loop.time()
        # "started", not "connected": nothing has answered yet (initialize will tell).
        self.tap.note("started", f"spawned {self.command} (pid {self.process.pid})", pid=self.process.pid)
        self._stdout_task = asyncio.create_task(self._read_stdout(), name=f"stdio-stdout-{self.pid}")
        self._stderr_task = asyncio.create_task(self._read_stderr(), name=f"stdio-stderr-{self.pid}")
        self._watch_task = asyncio.create_task(self._watch(), name=f"stdio-watch-{self.pid}")
        self._tasks = [self._stdout_task, self._stderr_task, self._watch_task]
        self._reading = True  # (what came before "started" was noted waits in the streams, in order)

    def _spawn_error(self, exc: Exception) -> str:
        if self.cwd is not None and getattr(exc, "filename", None) == self.cwd:
            return f"cannot start {self.command!r}: working directory {self.cwd!r}: {getattr(exc, 'strerror', exc)}"
        if isinstance(exc, FileNotFoundError):
            if any(c.isspace() for c in self.command.strip()):
                # Saved before the server form split command lines, or set by hand (admin, API).
                return (
                    f"cannot start {self.command!r}: command not found (a whole command line? The program "
                    "and its arguments go separately: saving the server's form splits it)"
                )
            return f"cannot start {self.command!r}: command not found"
        if isinstance(exc, PermissionError):
            return f"cannot start {self.command!r}: not executable (permission denied)"
        detail = getattr(exc, "strerror", None) or str(exc)
        return f"cannot start {self.command!r}: {detail}"

    async def close(self) -> None:
        """Close stdin, wait, SIGTERM the group, wait, SIGKILL; reap; stop the readers."""
        if self._close_task is None:
            self._closing = True
            self._close_task = asyncio.create_task(self._shutdown(), name="stdio-close")
        await asyncio.shield(self._close_task)

    async def _shutdown(self) -> None:
        proc, protocol = self.process, self._protocol
        if proc is None or protocol is None:
            return
        how = "had already exited"
        if not protocol.exited.is_set():
            self._close_stdin()
            how = "exited after stdin was closed"
            if not await self._wait_exit(self.shutdown_grace):
                how = "terminated with SIGTERM"
                self._signal_group(signal.SIGTERM)
                if not await self._wait_exit(self.shutdown_grace):
                    how = "killed with SIGKILL"
                    self._signal_group(signal.SIGKILL)
                    await self._wait_exit(KILL_WAIT)
        await self._stop_group(proc.pid)
        # Everything is dead: the pipes reach EOF and the readers finish on their own.
        readers = [t for t in (self._stdout_task, self._stderr_task) if t is not None]
        if readers:
            await asyncio.wait(readers, timeout=KILL_WAIT)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._transport is not None:
            self._transport.close()
        if not self._closed_noted:
            self._closed_noted = True
            code = proc.returncode
            self.tap.note(
                "closed", f"stopped server (pid {proc.pid}): {how}; {describe_exit(code)}", returncode=code, how=how
            )

    def _close_stdin(self) -> None:
        assert self.process is not None
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    async def _wait_exit(self, timeout: float) -> bool:
        assert self._protocol is not None
        try:
            await asyncio.wait_for(self._protocol.exited.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _signal_group(self, sig: int) -> None:
        """Signal the child's whole process group (it leads its own session: pgid == pid)."""
        assert self.process is not None
        if not group_alive(self.process.pid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def _stop_group(self, pgid: int) -> None:
        """The leader is gone; stop what it left in its group (grandchildren): TERM, then KILL."""
        if not group_alive(pgid):
            return
        self._signal_group(signal.SIGTERM)
        if await self._group_gone(pgid, self.shutdown_grace):
            return
        self._signal_group(signal.SIGKILL)
        await self._group_gone(pgid, KILL_WAIT)

    @staticmethod
    async def _group_gone(pgid: int, timeout: float) -> bool:
        """Grandchildren are not our children: there is nothing to wait on but polling the group."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while group_alive(pgid):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    # Sending ------------------------------------------------------------------

    async def send(self, frame: dict[str, Any] | str, *, headers: dict[str, str] | None = None) -> None:
        """Write the frame as one line, then record it. `headers` mean nothing on stdio."""
        proc, protocol = self.process, self._protocol
        if proc is None or protocol is None:
            raise TransportError("stdio transport is not started")
        if self._closing:
            raise TransportError("stdio transport is closed")
        if protocol.exited.is_set():
            raise TransportError(f"cannot send: {describe_exit(proc.returncode)}")
        stdin = proc.stdin
        if stdin is None or stdin.is_closing():
            raise TransportError("cannot send: the server's stdin is closed")
        text = frame if isinstance(frame, str) else jsonrpc.encode(frame)
        data = text if text.endswith("\n") else text + "\n"
        try:
            stdin.write(data.encode("utf-8", errors="surrogatepass"))
        finally:
            # Recorded once written: the server starts on it while the tap parses it (its answer
            # is read in a later turn of the loop, after this record).
            self.tap.send(text)
        if stdin.transport.get_write_buffer_size() == 0 and not stdin.is_closing():
            return  # the pipe took it all: nothing to drain (the usual case, on every call's path)
        drain = asyncio.ensure_future(stdin.drain())
        exited = asyncio.ensure_future(protocol.exited.wait())
        try:
            # A server that stops reading must not hang us forever once it is gone.
            await asyncio.wait({drain, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
            if not drain.done():
                drain.cancel()
        if drain.cancelled():
            raise TransportError(f"cannot send: {describe_exit(proc.returncode)}")
        exc = drain.exception()
        if exc is not None:
            raise TransportError(
                f"cannot send: the server's stdin is closed ({exc!r}); {describe_exit(proc.returncode)}"
            ) from exc

    def starting(self) -> bool:
        """Nothing from the server on stdout yet (stderr may be npx or uvx saying what it
        installs), within STARTUP_GRACE of its spawn: `auto`'s short probe must not take a server
        that is still importing (or being fetched by uvx/npx) for a
        legacy one that ignores `server/discover`."""
        if self._heard or self.process is None or self.process.returncode is not None:
            return False
        return asyncio.get_running_loop().time() - self._spawned_at < STARTUP_GRACE

    # Reading ------------------------------------------------------------------

    async def _read_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        await self._read_lines(self.process.stdout, 1)

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        await self._read_lines(self.process.stderr, 2)

    def _inline(self, fd: int, data: bytes) -> bool:
        """A pipe's bytes handled in its protocol's callback, when nothing of that pipe waits
        in its stream (they come in order), the tap is not paused, and it is not a flood's full
        read: a server's answer is then taken in this turn of the loop, not the reader task's
        next one. Anything else goes to the stream and its reader task, as before."""
        lines = self._lines.get(fd)
        if lines is None or not self._reading or self._unread[fd] or self.tap.paused or len(data) >= CHUNK:
            if lines is not None:
                self._unread[fd] += len(data)
            return False
        if fd == 1:
            self._heard = True
        lines.feed(data)
        return True

    async def _read_lines(self, stream: asyncio.StreamReader, fd: int) -> None:
        """What `_inline` did not take, in order, until the pipe's end (a partial last line
        counts as a line). Nothing is read while the tap is paused: the server then blocks on
        a full pipe."""
        lines = self._lines[fd]
        while True:
            await self.tap.ready()  # paused while the tap's listener catches up
            # A read returns at once while the pipe's reader holds data (up to 4 chunks): without
            # this the loop ran nothing else until that ran out or the tap paused, and the worker
            # could not hand the next batch to the database thread, idle ~40% of a flood.
            await asyncio.sleep(0)
            chunk = await stream.read(CHUNK)
            if not chunk:
                break
            self._unread[fd] -= len(chunk)
            if fd == 1:
                self._heard = True
            lines.feed(chunk)
        lines.end()

    def _handler_failed(self, exc: Exception) -> None:
        with contextlib.suppress(Exception):
            self.tap.note("error", f"handling a line from the server failed: {exc!r}")

    def _on_stdout_line(self, line: bytes) -> None:
        _event, parsed = self.tap.recv(line)
        if isinstance(parsed, (dict, list)):
            self._on_message(parsed)

    def _on_stdout_overflow(self, head: bytes) -> None:
        self.tap.recv(
            head, problems=[f"line longer than {self.max_line} bytes: recorded cut at that size, the rest was skipped"]
        )

    async def _watch(self) -> None:
        """Report the end of the connection when the server exits or closes stdout on its own."""
        assert self._protocol is not None and self._stdout_task is not None and self.process is not None
        exited = asyncio.ensure_future(self._protocol.exited.wait())
        try:
            await asyncio.wait({exited, self._stdout_task}, return_when=asyncio.FIRST_COMPLETED)
            if exited.done():
                # Let the readers take in what the server wrote before it died (its traceback);
                # bounded, because a grandchild may keep the pipes open.
                readers = [t for t in (self._stdout_task, self._stderr_task) if t is not None]
                await asyncio.wait(readers, timeout=self.shutdown_grace)
            else:
                await self._wait_exit(self.shutdown_grace)
        finally:
            exited.cancel()
        if self._closing or self._closed_noted:
            return
        self._closed_noted = True
        code = self.process.returncode
        if self._protocol.exited.is_set():
            reason = describe_exit(code)
        else:
            reason = f"server closed its stdout (pid {self.process.pid} still running)"
        self.tap.note("closed", reason, returncode=code)
        self._on_closed(reason)
