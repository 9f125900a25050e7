"""`manage.py mcp --capture BASE --capture-server ID [--cwd DIR] -- COMMAND [ARG ...]`, the entry a
host starts in place of a server, and `manage.py mcp --capture-import FILE --capture BASE`, which
delivers a spill file later. manage.py comes here before importing anything else of the CLI: the
host waits for the server to start (docs/capture.md).
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
import uuid
from pathlib import Path

from . import TOKEN_VAR, say
from .leftovers import deliver, deliver_in_background
from .outbox import Outbox, limits
from .proxy import Proxy
from .recorder import Recorder
from .uploader import Poster, Uploader

FLUSH = 3.0  # seconds, at the end, to deliver what is left before keeping it in the spill file
EXIT_USAGE = 2
# The forwarding threads wait for the interpreter lock after each read and write; the recorder's
# thread holds it while a flood keeps it busy. A switch every 0.1 ms instead of 5 ms: bench/capture.py
# measured the flood through the capture at 0.26 -> 0.77 of the direct throughput.
SWITCH = 0.0001
EXIT_NOT_FOUND = 127  # as a shell says of a command it cannot find (126: found, cannot run)


def wanted(argv: list[str]) -> bool:
    """Is this `mcp` command line a capture (its options before `--`)?"""
    head = argv[: argv.index("--")] if "--" in argv else argv
    return any(arg.split("=", 1)[0] in ("--capture", "--capture-import") for arg in head)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "capture (a host starts this in place of the server: docs/capture.md)",
        f"The token comes from the environment variable {TOKEN_VAR}, which the server does not get.",
    )
    group.add_argument(
        "--capture",
        metavar="BASE_URL",
        help="run -- COMMAND for a host, recording the traffic into the playground at BASE_URL",
    )
    group.add_argument("--capture-server", metavar="ID", type=int, help="with --capture: the registered server's id")
    group.add_argument(
        "--capture-import",
        metavar="FILE",
        help="with --capture BASE_URL: deliver a spill file a capture left (the playground was unreachable)",
    )


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp", description="Capture the traffic between a host and a stdio server.")
    add_arguments(parser)
    parser.add_argument("--cwd", help="the server's working directory")
    parser.add_argument(
        "--url", help="instead of -- COMMAND: bridge stdio to this Streamable HTTP URL (the playground's HTTP capture)"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG ...]: the server")
    return parser


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    command = list(ns.command or [])
    if command and command[0] == "--":
        command = command[1:]
    if not ns.capture:
        say("--capture BASE_URL is required (the playground's address)")
        return EXIT_USAGE
    if ns.capture_import:
        if command or ns.capture_server is not None:
            say("--capture-import takes a file and --capture BASE_URL only")
            return EXIT_USAGE
        return import_file(Path(ns.capture_import), ns.capture, os.environ.get(TOKEN_VAR, ""))
    if ns.url:
        if command:
            say("give either --url URL or -- COMMAND, not both")
            return EXIT_USAGE
        from .bridge import Bridge

        return Bridge(ns.url).run()
    if not command:
        say("give the server's command after --: mcp --capture BASE_URL --capture-server ID -- COMMAND [ARG ...]")
        return EXIT_USAGE
    code = capture(command, ns.cwd, ns.capture, ns.capture_server, os.environ.get(TOKEN_VAR, ""))
    if code < 0:  # the server died of a signal: so do we, and the host sees the same
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


def capture(command: list[str], cwd: str | None, base: str, server: int | None, token: str) -> int:
    """Run the server for the host, recording when the token and the URL allow; its exit code."""
    sys.setswitchinterval(SWITCH)
    problem = None
    poster = None
    if not token:
        problem = f"{TOKEN_VAR} is not set"
    elif server is None:
        problem = "--capture-server ID is missing"
    else:
        try:
            poster = Poster(base, token)
        except ValueError as exc:
            problem = str(exc)
    recorder = uploader = outbox = None
    if poster is not None and server is not None:
        name = uuid.uuid4().hex
        memory, spill = limits()
        outbox = Outbox(name, memory_limit=memory, spill_limit=spill)
        recorder = Recorder(name, server, outbox)
        recording = recorder

        def refused() -> None:
            recording.recording = False

        uploader = Uploader(outbox, poster, refused)
        recorder.rejected = lambda: uploader.rejected if uploader is not None else 0
    else:
        say(f"{problem}: not recording; the server runs as without the capture.")
    cwd_shown = os.path.abspath(cwd or os.getcwd())

    def started(pid: int | None) -> None:
        if recorder is not None:
            recorder.event("start", argv=command, pid=pid, cwd=cwd_shown)

    proxy = Proxy(command, cwd, recorder.chunk if recorder is not None else _ignore)
    proxy.forward_signals()  # before the server starts: a signal in between is passed on once it has
    try:
        proxy.start(started)
    except OSError as exc:
        say(f"could not start the server {command[0]!r}: {exc.strerror or exc}")
        code = EXIT_NOT_FOUND if exc.errno in (errno.ENOENT, errno.ENOTDIR) else EXIT_NOT_FOUND - 1
        if recorder is not None and uploader is not None:
            started(None)
            recorder.event("end", code=None, reason=f"could not start the server: {exc.strerror or exc}")
            recorder.start()
            uploader.start()
        _finish(recorder, uploader, outbox, base)
        return code
    leftovers = None
    if recorder is not None and uploader is not None and outbox is not None:
        recorder.start()
        uploader.start()
        leftovers = deliver_in_background(outbox.folder, base, token, uploader.reached)
    outcome = proxy.wait()
    if recorder is not None:
        recorder.recording = False  # (the host may still write: after the end, not recorded)
        recorder.event("end", code=outcome.code if outcome.code >= 0 else None, reason=outcome.reason)
    _finish(recorder, uploader, outbox, base)
    if leftovers is not None and uploader is not None and uploader.reached.is_set():
        leftovers.join(FLUSH)  # (one not delivered by then is taken over by a later capture)
    return outcome.code


def _ignore(stream: str, data: bytes) -> None:
    pass


def _finish(recorder: Recorder | None, uploader: Uploader | None, outbox: Outbox | None, base: str) -> None:
    if recorder is None or uploader is None or outbox is None:
        return
    recorder.stop(timeout=10.0)
    uploader.finish(FLUSH)
    if uploader.refused:
        return
    path, records = outbox.persist()
    if path is not None:
        say(
            f"the playground at {base} did not take {records} records: kept in {path}; "
            f"deliver them with: manage.py mcp --capture-import {path} --capture {base}"
        )
    elif outbox.spill_error:
        say(f"could not keep the records the playground did not take: {outbox.spill_error}")


def import_file(path: Path, base: str, token: str) -> int:
    """Deliver a spill file (its records as the capture would have sent them), then remove it."""
    if not token:
        say(f"{TOKEN_VAR} is not set: the playground needs the capture token")
        return EXIT_USAGE
    try:
        poster = Poster(base, token)
        done = deliver(path, poster)
    except (ValueError, OSError) as exc:
        say(str(exc))
        return EXIT_USAGE
    poster.close()
    if done.error:
        say(f"{done.error} ({base}); {done.delivered} records delivered, the file kept")
        return 3 if done.unreachable else 1
    dropped = f", {done.skipped} too large for the playground" if done.skipped else ""
    say(f"delivered {done.delivered} records of {path.name} (session {done.session}){dropped}; the file is removed")
    return 0
