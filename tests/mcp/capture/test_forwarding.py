"""The stdio capture forwards byte for byte and records every line: a peer that writes garbage,
CRLF, invalid UTF-8, half lines, a flood, stderr without newlines, and exits 3; the host's
environment passes unchanged but for the token; signals and stdin's end reach the server."""

from __future__ import annotations

import array
import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import threading
from pathlib import Path

from playground.mcp.capture.proxy import Proxy
from tests.mcp.capture.conftest import (
    MANAGE,
    PEER,
    SERVER,
    contiguous,
    finish,
    frames,
    host_env,
    lines_of,
    read_until,
    start,
)
from tests.mcp.capture.receiver import Receiver

FLOOD = 20_000


def test_what_the_host_gets_is_what_the_server_wrote(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    env = host_env(tmp_path, PASSED_THROUGH="yes")
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "script", str(FLOOD)], env)
    # Half a line reaches the host before its newline does (the peer writes the rest only after "go").
    head = read_until(proc, b"half a li")
    assert head.endswith(b"half a li")
    assert proc.stdin is not None
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    rest, err = finish(proc)
    assert proc.returncode == 3
    wrote_out = (tmp_path / "stdout").read_bytes()
    assert head + rest == wrote_out  # byte for byte: CRLF, invalid UTF-8, NUL, no newline added at the end
    assert err == (tmp_path / "stderr").read_bytes()  # (the capture said nothing of its own)
    assert (tmp_path / "stdin").read_bytes() == b"go\n"

    # The server's environment: the host's, less the token.
    seen = json.loads((tmp_path / "env.json").read_text())
    assert seen == {k: v for k, v in env.items() if k != "PLAYGROUND_CAPTURE_TOKEN"}

    fresh.wait(fresh.ended)
    capture = fresh.only()
    records = capture.ordered()
    assert contiguous(records) and capture.duplicates == 0
    assert records[0]["kind"] == "start" and records[-1]["kind"] == "end"
    assert records[0]["argv"] == [python_exe, PEER, str(tmp_path), "script", str(FLOOD)]
    assert records[0]["cwd"] == "/" and records[0]["server"] == SERVER and isinstance(records[0]["pid"], int)
    assert records[-1]["code"] == 3 and records[-1]["reason"] == "server exited"
    assert frames(records, "recv") == lines_of(wrote_out)  # every line, the last (partial) one included
    assert frames(records, "send") == [b"go"]
    stderr_lines = [r["text"] for r in records if r["kind"] == "stderr"]
    assert stderr_lines == [line.decode("utf-8", "replace") for line in lines_of((tmp_path / "stderr").read_bytes())]
    # Non-UTF-8 lines went as base64, the others as text; times never go back.
    assert any("b64" in r for r in records) and any("\r" in r.get("text", "") for r in records)
    assert all(a["t"] <= b["t"] for a, b in zip(records, records[1:], strict=False))
    assert not [r for r in records if r["kind"] == "dropped"]


def test_host_closing_stdin_closes_the_servers(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = host_env(tmp_path)
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], env, options=("--cwd", str(workdir)))
    out, err = proc.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', timeout=30)
    assert out == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\neof\n' and err == b""
    assert proc.returncode == 0
    fresh.wait(fresh.ended)
    records = fresh.only().ordered()
    assert records[-1] == {**records[-1], "kind": "end", "code": 0, "reason": "host closed stdin"}
    assert records[0]["cwd"] == str(workdir) == (tmp_path / "cwd").read_text()


# A server that reads its stdin only once the test opens the fifo it names: until then, what was
# forwarded to it waits unread in its stdin's pipe. Then it echoes that line and exits.
HELD_SERVER = """
import sys
open(sys.argv[1]).close()
sys.stdout.write(sys.stdin.readline())
"""


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe `fd` is an end of (FIONREAD: either end)."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def test_a_chunk_is_recorded_before_it_is_passed_on(tmp_path: Path, python_exe: str) -> None:
    """The recorder gets each chunk before the other side can have it: a reply (a host's answer
    to an elicitation, a server's response) is always recorded after what it replies to. Handed
    over after the write, the answer to a server's request was at times recorded before the
    request, and a replay of the captured session had no answer to give (issue 25)."""
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    host_in, to_capture = os.pipe()
    from_capture, host_out = os.pipe()
    errors_r, errors_w = os.pipe()
    unread_then: dict[str, int] = {}
    handed = {"send": threading.Event(), "recv": threading.Event()}

    def sink(stream: str, data: bytes) -> None:
        if data and stream in handed and not handed[stream].is_set():
            assert proxy.proc is not None and proxy.proc.stdin is not None
            target = proxy.proc.stdin.fileno() if stream == "send" else from_capture
            unread_then[stream] = _unread(target)
            handed[stream].set()

    proxy = Proxy([python_exe, "-c", HELD_SERVER, str(fifo)], None, sink, host_in, host_out, errors_w)
    proxy.start()
    try:
        os.write(to_capture, b"ping\n")
        assert handed["send"].wait(30)
        with open(fifo, "w"):  # the server may read now
            pass
        assert handed["recv"].wait(30)
        assert os.read(from_capture, 100) == b"ping\n"  # (read only once the recorder had it)
        assert unread_then == {"send": 0, "recv": 0}  # neither the server nor the host had it yet
    finally:
        os.close(to_capture)
        outcome = proxy.wait()
        for fd in (host_in, from_capture, host_out, errors_r, errors_w):
            os.close(fd)
    assert outcome.code == 0


def test_sigterm_reaches_the_server(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "signals"], host_env(tmp_path))
    read_until(proc, b"ready\n")
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert out == b"got SIGTERM\n" and proc.returncode == 7  # the server's own handler ran, its code came back
    fresh.wait(fresh.ended)
    end = fresh.only().ordered()[-1]
    assert (end["code"], end["reason"]) == (7, "signal SIGTERM")


def test_a_server_killed_by_a_signal_kills_the_capture_alike(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "plain"], host_env(tmp_path))
    read_until(proc, b"ready\n")
    proc.send_signal(signal.SIGINT)  # passed on; the peer dies of it (Python re-raises an unhandled SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGINT  # and the host sees the capture die of it alike

    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "plain"], host_env(tmp_path))
    pid = next(r for c in fresh.wait(lambda: list(fresh.captures.values())[1:]) for r in c.records.values())["pid"]
    read_until(proc, b"ready\n")
    os.kill(pid, signal.SIGKILL)  # the server dies of a signal: the host sees the capture die of it
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_a_command_that_does_not_exist(fresh: Receiver, tmp_path: Path) -> None:
    proc = start(fresh.base, [str(tmp_path / "nowhere")], host_env(tmp_path))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 127 and out == b""
    assert err.decode().startswith("[playground capture] could not start the server") and err.count(b"\n") == 1
    fresh.wait(fresh.ended)
    records = fresh.only().ordered()
    assert [r["kind"] for r in records] == ["start", "end"] and records[1]["code"] is None


def test_the_capture_path_imports_no_django_nor_the_cli(tmp_path: Path) -> None:
    """The host waits for the server to start: manage.py goes straight to the capture."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", MANAGE, "mcp", "--capture", "http://127.0.0.1:9", "--", "true"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**host_env(tmp_path), "PLAYGROUND_CAPTURE_TOKEN": ""},
    )
    assert run.returncode == 0
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "playground.mcp.capture.proxy" in imported
    assert not {name for name in imported if name.startswith(("django", "playground.mcp.cli", "http.client"))}
