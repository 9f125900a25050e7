"""Start the SDK peers by fork from a process that has already imported the SDK.

Importing `mcp` (its pydantic models) costs each peer ~0.8 s of CPU before it reads a byte, and
the suite starts ~120 of them: a fifth of the non-browser suite's CPU on 2 cores. The test run
starts one zygote (`serve`, from tests/conftest.py) that imports the SDK once and listens on a
Unix socket beside this file. A peer script started the usual way (`python sdk_server.py stdio`,
by our stdio transport or a test) calls `handoff()` before its imports: it sends the zygote its
stdin, stdout and stderr (SCM_RIGHTS), its argv, environment and working directory; the zygote
forks a copy that runs the script on those descriptors, and the started process stays as its
proxy: it forwards the signals it gets and exits with the fork's exit status (or its signal).

So the peer is the same SDK server on the same pipes, started by the same command line, only
without its import time. With no zygote (outside the tests, `make bench`, a stale socket) the
script imports and runs as always.

Usage: python prefork.py serve   (says `listening` when it does; serves until its stdin closes)
"""

from __future__ import annotations

import array
import importlib
import json
import os
import select
import signal
import socket
import sys
from pathlib import Path

# Beside this file (one zygote a checkout), or where a test of this module says.
SOCKET = Path(os.environ.get("PLAYGROUND_PREFORK_SOCKET") or Path(__file__).resolve().with_name(".prefork.sock"))
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
# What the peers import, for every mode (stdio, Streamable HTTP, SSE): the cost a fork saves them.
PRELOAD = (
    "mcp.server.mcpserver",
    "mcp.server.stdio",
    "mcp.server.sse",
    "mcp.server.streamable_http_manager",
    "mcp.types",
    "pydantic",
    "uvicorn",
)
_forked = False  # set in the zygote's fork that runs a peer: its handoff() must not hand off again


# The started process ------------------------------------------------------------------------


def handoff() -> None:
    """Have the zygote run this script; exit with its status. Returns if there is no zygote."""
    if _forked:
        return
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(SOCKET))
    except OSError:
        sock.close()
        return
    header = json.dumps({"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    fds = array.array("i", [0, 1, 2])
    sock.sendmsg([b"P"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    sock.sendall(len(header).to_bytes(4, "big") + header)
    # The fork holds the pipes now: their ends close when it exits, not when this proxy does.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    for sig in FORWARDED:
        signal.signal(sig, lambda signum, _frame: sock.sendall(signum.to_bytes(4, "big", signed=True)))
    status = _read_exactly(sock, 4)
    code = int.from_bytes(status, "big", signed=True) if len(status) == 4 else 1
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


# The zygote -----------------------------------------------------------------------------------


def serve() -> None:
    """Import the SDK, listen beside this file, fork a supervisor per peer until stdin closes."""
    if _alive():
        return  # another test run's zygote serves this checkout: its peers use it
    # This file runs as __main__: the peers' `import prefork` must find this module (and its
    # `_forked`), not import a second copy that would hand off again.
    sys.modules["prefork"] = sys.modules[__name__]
    for module in PRELOAD:
        importlib.import_module(module)

    staging = SOCKET.with_name(f"{SOCKET.name}.{os.getpid()}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(staging))
    except OSError as exc:  # a checkout's path too long for a socket's (108 bytes): no zygote
        print(f"prefork: no zygote, the SDK peers import the SDK themselves ({exc})", file=sys.stderr)
        return
    listener.listen(64)
    os.replace(staging, SOCKET)  # peers see a listening socket or none, never a half-made one
    print("listening", flush=True)
    own = SOCKET.stat().st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the supervisors (they report to their proxy)
    try:
        while True:
            ready, _, _ = select.select([listener, sys.stdin], [], [])
            if sys.stdin in ready:
                break  # the test run ended (or died)
            conn, _ = listener.accept()
            if os.fork() == 0:
                code = 1
                try:
                    listener.close()
                    code = _supervise(conn)
                finally:
                    os._exit(code)  # never back into this loop (nor its finally)
            conn.close()
    finally:
        if SOCKET.exists() and SOCKET.stat().st_ino == own:
            SOCKET.unlink()


def _alive() -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(SOCKET))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _supervise(conn: socket.socket) -> int:
    """One peer: receive its descriptors, fork it, relay signals to it and its exit status back."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    fds = array.array("i")
    _, ancillary, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    length = _read_exactly(conn, 4)
    if len(fds) != 3 or len(length) != 4:
        return 0  # another run's zygote checking whether this one is alive (_alive)
    header = json.loads(_read_exactly(conn, int.from_bytes(length, "big")))
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run(list(fds), header)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    pending = b""
    while True:
        ready, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in ready:
            _, status = os.waitpid(pid, 0)
            try:
                conn.sendall(os.waitstatus_to_exitcode(status).to_bytes(4, "big", signed=True))
            except OSError:
                pass
            return 0
        chunk = conn.recv(64)
        if not chunk:  # the proxy was killed (SIGKILL): so is the peer
            _kill(pid, signal.SIGKILL)
            select.select([pidfd], [], [])
            continue
        pending += chunk
        while len(pending) >= 4:
            _kill(pid, int.from_bytes(pending[:4], "big", signed=True))
            pending = pending[4:]


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _run(fds: list[int], header: dict) -> None:
    """The peer: the script as __main__ on the proxy's descriptors, environment and directory."""
    global _forked
    _forked = True
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    code = 0
    try:
        os.environ.clear()
        os.environ.update(header["env"])
        os.chdir(header["cwd"])
        sys.argv = header["argv"]
        sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
        import runpy

        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except KeyboardInterrupt:
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    _flush()
    os._exit(code)


def _exit_code(code: object) -> int:
    """What Python's own exit makes of SystemExit's argument."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:
    serve()
