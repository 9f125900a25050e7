"""The stdio transport against real peers (the SDK peer, server-everything) and small hostile
scripts: every line recorded, only JSON delivered, nothing left running after close()."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from playground.mcp import jsonrpc
from playground.mcp.events import Tap, TranscriptEvent
from playground.mcp.transports.base import TransportError
from playground.mcp.transports.stdio import StdioTransport, _Lines, group_alive
from tests.conftest import PEERS

WAIT = 20.0  # generous upper bound for any single wait; never a synchronisation sleep

LEGACY = "2025-11-25"


class Harness:
    """A tap and a transport, with waits on what they report."""

    def __init__(self, command: str, args: list[str], **kw: Any) -> None:
        self.tap = Tap()
        self.events: list[TranscriptEvent] = []
        self.messages: asyncio.Queue[Any] = asyncio.Queue()
        self.closed_reasons: list[str | None] = []
        self.closed = asyncio.Event()
        self._changed = asyncio.Event()
        self.tap.subscribe(self._listen)
        self.transport = StdioTransport(self.tap, command, args, **kw)
        self.transport.bind(self.messages.put_nowait, self._on_closed, lambda rid, exc: None)

    def _listen(self, event: TranscriptEvent) -> None:
        self.events.append(event)
        self._changed.set()

    def _on_closed(self, reason: str | None) -> None:
        self.closed_reasons.append(reason)
        self.closed.set()

    async def message(self) -> Any:
        return await asyncio.wait_for(self.messages.get(), WAIT)

    async def event(self, pred: Callable[[TranscriptEvent], bool]) -> TranscriptEvent:
        """The first event matching `pred`, waiting for it if needed."""

        async def scan() -> TranscriptEvent:
            while True:
                self._changed.clear()
                for event in self.events:
                    if pred(event):
                        return event
                await self._changed.wait()

        return await asyncio.wait_for(scan(), WAIT)

    async def count(self, pred: Callable[[TranscriptEvent], bool], n: int) -> None:
        async def scan() -> None:
            while sum(1 for e in self.events if pred(e)) < n:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(scan(), WAIT)

    async def wait_closed(self) -> None:
        await asyncio.wait_for(self.closed.wait(), WAIT)

    def of(self, dir: str) -> list[TranscriptEvent]:
        return [e for e in self.events if e.dir == dir]

    def notes(self, kind: str) -> list[TranscriptEvent]:
        return [e for e in self.events if e.dir == "note" and e.kind == kind]


def proc_state(pid: int) -> str | None:
    """The /proc state letter of `pid`, or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()[0].decode()


def assert_reaped(pid: int) -> None:
    """Our own child: it must be gone entirely (not even a zombie)."""
    assert proc_state(pid) is None, f"pid {pid} still exists (state {proc_state(pid)})"


def assert_dead(pid: int) -> None:
    """Someone else's child (a grandchild, reparented to init): dead, at most a zombie awaiting init."""
    assert proc_state(pid) in (None, "Z", "X"), f"pid {pid} is still running"


@pytest.fixture
async def make():
    """Builds harnesses; at teardown closes them and checks that no process is left behind."""
    made: list[Harness] = []

    def build(command: str, args: list[str] | None = None, **kw: Any) -> Harness:
        harness = Harness(command, args or [], **kw)
        made.append(harness)
        return harness

    yield build
    for harness in made:
        await harness.transport.close()
        pid = harness.transport.pid
        if pid is not None:
            assert_reaped(pid)
            assert not group_alive(pid)


def script(code: str) -> tuple[str, list[str]]:
    """A python -c peer."""
    return sys.executable, ["-c", textwrap.dedent(code)]


def initialize(id: int = 1) -> dict[str, Any]:
    return jsonrpc.request(
        id,
        "initialize",
        {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "playground-tests", "version": "0"}},
    )


# Real peers ---------------------------------------------------------------------


async def test_sdk_peer_handshake_and_tools_list(make, python_exe):
    h = make(python_exe, [str(PEERS / "sdk_server.py"), "stdio"])
    await h.transport.start()
    pid = h.transport.pid
    started = h.notes("started")
    assert len(started) == 1 and started[0].data == {"pid": pid}
    assert started[0].text == f"spawned {python_exe} (pid {pid})"
    assert h.notes("connected") == []  # nothing answered yet

    await h.transport.send(initialize(1))
    init = await h.message()
    assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "sdk-peer"
    assert init["result"]["protocolVersion"] == LEGACY
    await h.transport.send(jsonrpc.notification("notifications/initialized"))
    await h.transport.send(jsonrpc.request(2, "tools/list"))
    listed = await h.message()
    assert listed["id"] == 2
    assert "echo" in [tool["name"] for tool in listed["result"]["tools"]]

    # The transcript, frame by frame: what was sent, what came back, and which answers what.
    frames = [e for e in h.events if e.dir in ("send", "recv")]
    assert [(e.dir, e.method, e.rpc_id) for e in frames] == [
        ("send", "initialize", 1),
        ("recv", None, 1),
        ("send", "notifications/initialized", None),
        ("send", "tools/list", 2),
        ("recv", None, 2),
    ]
    sent_init, got_init, sent_note, sent_list, got_list = frames
    assert sent_init.raw == jsonrpc.encode(initialize(1))
    assert all(e.parse_error is None and e.problems is None for e in frames)
    assert got_init.reply_to == sent_init.seq and got_init.latency_ms is not None
    assert got_list.reply_to == sent_list.seq
    assert sent_note.reply_to is None
    assert got_list.message == listed and json.loads(got_list.raw) == listed

    # A tool that writes on stderr: the line is recorded as a stderr event.
    await h.transport.send(
        jsonrpc.request(3, "tools/call", {"name": "stderr_line", "arguments": {"text": "hello-stderr"}})
    )
    called = await h.message()
    assert called["id"] == 3 and not called["result"].get("isError")
    line = await h.event(lambda e: e.dir == "stderr" and "hello-stderr" in (e.text or ""))
    assert line.raw == "hello-stderr"

    await h.transport.close()
    assert_reaped(pid)
    closed = h.notes("closed")
    assert len(closed) == 1 and closed[0].data["returncode"] is not None
    assert h.closed_reasons == []  # closing on purpose is not "closed on its own"


async def test_server_everything_over_stdio(make, everything_cmd):
    h = make(everything_cmd[0], everything_cmd[1:])
    await h.transport.start()
    pid = h.transport.pid
    await h.transport.send(initialize(1))
    init = await h.message()
    assert init["id"] == 1 and "result" in init, init
    await h.transport.send(jsonrpc.notification("notifications/initialized"))
    await h.transport.send(jsonrpc.request(2, "tools/list"))
    # server-everything may send notifications of its own first: wait for our answer.
    while True:
        listed = await h.message()
        if listed.get("id") == 2:
            break
    assert "echo" in [tool["name"] for tool in listed["result"]["tools"]]
    answer = next(e for e in h.of("recv") if e.rpc_id == 2)
    request = next(e for e in h.of("send") if e.rpc_id == 2)
    assert answer.reply_to == request.seq

    await h.transport.close()
    assert_reaped(pid)
    assert not group_alive(pid)
    closed = h.notes("closed")
    assert len(closed) == 1 and "stopped server" in closed[0].text


# Hostile scripts ------------------------------------------------------------------


async def test_garbage_partial_lines_and_exit(make):
    cmd, args = script(r"""
        import sys
        out = sys.stdout
        out.write("not json at all\n")
        out.write('{"jsonrpc":"2.0","method":"notifications/hello"}\n')
        out.write("[1, 2]\n")
        out.write("42\n")
        out.write("\n")
        out.write('{"jsonrpc":"2.0","method":"trunc')   # partial last line, no newline
        out.flush()
    """)
    h = make(cmd, args)
    await h.transport.start()
    await h.wait_closed()
    raws = [e.raw for e in h.of("recv")]
    assert raws == [
        "not json at all",
        '{"jsonrpc":"2.0","method":"notifications/hello"}',
        "[1, 2]",
        "42",
        "",
        '{"jsonrpc":"2.0","method":"trunc',
    ]
    parse_failed = [e.raw for e in h.of("recv") if e.parse_error]
    assert parse_failed == ["not json at all", "", '{"jsonrpc":"2.0","method":"trunc']
    # Only objects and arrays are delivered; the rest is only recorded.
    delivered = []
    while not h.messages.empty():
        delivered.append(h.messages.get_nowait())
    assert delivered == [{"jsonrpc": "2.0", "method": "notifications/hello"}, [1, 2]]
    closed = h.notes("closed")
    assert len(closed) == 1 and closed[0].text == "server process exited with code 0"
    assert closed[0].data == {"returncode": 0}
    assert closed[0].seq > max(e.seq for e in h.of("recv"))
    assert h.closed_reasons == ["server process exited with code 0"]


async def test_a_paused_tap_stops_the_reading_until_resumed(make):
    """Back-pressure: while the tap is paused nothing is read; resumed, every line arrives."""
    cmd, args = script(r"""
        import sys
        for i in range(3):
            sys.stdout.write('{"jsonrpc":"2.0","method":"notifications/n%d"}\n' % i)
        sys.stdout.flush()
    """)
    h = make(cmd, args)
    h.tap.pause()
    await h.transport.start()
    await asyncio.wait_for(h.transport._protocol.exited.wait(), WAIT)
    assert h.of("recv") == [] and h.messages.empty()  # it wrote and exited; we read nothing
    h.tap.resume()
    await h.wait_closed()
    assert [e.method for e in h.of("recv")] == ["notifications/n0", "notifications/n1", "notifications/n2"]
    assert h.notes("closed")[0].seq > h.of("recv")[-1].seq


async def test_invalid_utf8_is_recorded_and_does_not_crash(make):
    cmd, args = script(r"""
        import sys
        sys.stderr.buffer.write(b"bad stderr \xff\xfe\n"); sys.stderr.flush()
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","method":"n","params":{"s":"\xff"}}\n')
        sys.stdout.buffer.write(b"\xc3\x28 garbage\n")
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","method":"after"}\n')
        sys.stdout.flush()
        sys.stdin.read()
    """)
    h = make(cmd, args)
    await h.transport.start()
    first = await h.message()
    assert first["params"]["s"] == "\ufffd"
    assert (await h.message())["method"] == "after"
    recv = h.of("recv")
    assert len(recv) == 3
    assert any("invalid UTF-8" in p for p in recv[0].problems)
    assert recv[1].parse_error and recv[1].size == len(b"\xc3\x28 garbage")
    err = await h.event(lambda e: e.dir == "stderr")
    assert err.text == "bad stderr \ufffd\ufffd"


async def test_crash_mid_call(make):
    cmd, args = script(r"""
        import sys
        sys.stdin.readline()
        sys.stderr.write("Traceback (most recent call last):\nRuntimeError: boom\n")
        sys.stderr.flush()
        sys.exit(3)
    """)
    h = make(cmd, args)
    await h.transport.start()
    await h.transport.send(jsonrpc.request(1, "tools/call", {"name": "x"}))
    await h.wait_closed()
    assert h.closed_reasons == ["server process exited with code 3"]
    closed = h.notes("closed")
    assert len(closed) == 1 and closed[0].data == {"returncode": 3}
    stderr = [e.text for e in h.of("stderr")]
    assert stderr == ["Traceback (most recent call last):", "RuntimeError: boom"]
    assert all(e.seq < closed[0].seq for e in h.of("stderr"))
    with pytest.raises(TransportError, match="exited with code 3"):
        await h.transport.send(jsonrpc.request(2, "ping"))
    await h.transport.close()
    assert len(h.notes("closed")) == 1 and len(h.closed_reasons) == 1


async def test_send_to_a_server_that_closed_its_stdin_raises(make):
    cmd, args = script(r"""
        import os, sys, time
        os.close(0)
        print('{"jsonrpc":"2.0","method":"ready"}', flush=True)
        time.sleep(60)
    """)
    h = make(cmd, args, shutdown_grace=0.5)
    await h.transport.start()
    assert (await h.message())["method"] == "ready"
    with pytest.raises(TransportError, match="stdin"):
        await h.transport.send(jsonrpc.request(1, "ping"))
    # asyncio sees the pipe's reading end close, so nothing is recorded as sent: nothing was.
    assert [e.raw for e in h.of("send")] in ([], [jsonrpc.encode(jsonrpc.request(1, "ping"))])


async def test_server_ignoring_sigterm_is_killed(make):
    cmd, args = script(r"""
        import signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print('{"jsonrpc":"2.0","method":"ready"}', flush=True)
        while True:
            time.sleep(60)
    """)
    h = make(cmd, args, shutdown_grace=0.3)
    await h.transport.start()
    pid = h.transport.pid
    assert (await h.message())["method"] == "ready"
    await h.transport.close()
    assert_reaped(pid)
    closed = h.notes("closed")
    assert len(closed) == 1
    assert closed[0].data == {"returncode": -9, "how": "killed with SIGKILL"}
    assert "SIGKILL" in closed[0].text


async def test_grandchild_is_killed_with_the_group(make):
    cmd, args = script(r"""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\n"
            "while True: time.sleep(60)"], stdout=subprocess.PIPE)
        child.stdout.readline()
        print('{"jsonrpc":"2.0","method":"child","params":{"pid":%d}}' % child.pid, flush=True)
        sys.stdin.read()    # exits on stdin EOF, leaving the stubborn child behind
    """)
    h = make(cmd, args, shutdown_grace=0.3)
    await h.transport.start()
    pid = h.transport.pid
    grandchild = (await h.message())["params"]["pid"]
    assert proc_state(grandchild) not in (None, "Z")
    await h.transport.close()
    assert_reaped(pid)
    assert_dead(grandchild)
    assert not group_alive(pid)
    assert h.notes("closed")[0].data == {"returncode": 0, "how": "exited after stdin was closed"}


async def test_grandchild_holding_the_pipes_does_not_hide_a_crash(make):
    cmd, args = script(r"""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(60)"])
        print('{"jsonrpc":"2.0","method":"child","params":{"pid":%d}}' % child.pid, flush=True)
        sys.stdin.readline()
        sys.exit(5)
    """)
    h = make(cmd, args, shutdown_grace=0.3)
    await h.transport.start()
    pid = h.transport.pid
    grandchild = (await h.message())["params"]["pid"]
    await h.transport.send(jsonrpc.notification("notifications/initialized"))
    await h.wait_closed()  # the grandchild still holds stdout open: exit is seen anyway
    assert h.closed_reasons == ["server process exited with code 5"]
    await h.transport.close()
    assert_reaped(pid)
    assert_dead(grandchild)


async def test_stderr_flood_does_not_block_the_server(make):
    cmd, args = script(r"""
        import sys
        line = "x" * 200 + "\n"
        for i in range(20000):
            sys.stderr.write(line)
        sys.stderr.flush()
        print('{"jsonrpc":"2.0","method":"done"}', flush=True)
        sys.stdin.read()
    """)
    h = make(cmd, args)
    await h.transport.start()
    assert (await h.message())["method"] == "done"
    await h.count(lambda e: e.dir == "stderr", 20000)
    assert all(e.text == "x" * 200 for e in h.of("stderr"))


async def test_fifty_megabyte_line(make):
    size = 50_000_000
    cmd, args = script(rf"""
        import sys
        out = sys.stdout.buffer
        out.write(b'{{"jsonrpc":"2.0","id":1,"result":{{"blob":"')
        out.write(b"a" * {size})
        out.write(b'"}}}}\n{{"jsonrpc":"2.0","method":"after"}}\n')
        out.flush()
        sys.stdin.read()
    """)
    h = make(cmd, args)
    await h.transport.start()
    big = await h.message()
    assert big["id"] == 1 and len(big["result"]["blob"]) == size
    assert (await h.message())["method"] == "after"
    event = h.of("recv")[0]
    assert event.truncated and event.size == size + len('{"jsonrpc":"2.0","id":1,"result":{"blob":""}}')
    assert len(event.raw) == h.tap.max_raw


async def test_line_longer_than_max_line_is_recorded_cut_and_skipped(make):
    cmd, args = script(r"""
        import sys
        sys.stdout.write('{"jsonrpc":"2.0","method":"huge","params":{"s":"' + "b" * 300000 + '"}}\n')
        sys.stdout.write('{"jsonrpc":"2.0","method":"after"}\n')
        sys.stdout.flush()
        sys.stdin.read()
    """)
    h = make(cmd, args, max_line=100_000)
    await h.transport.start()
    assert (await h.message())["method"] == "after"  # the huge one was not delivered
    huge, after = h.of("recv")
    assert huge.size == 100_000 and huge.parse_error
    assert any("longer than 100000 bytes" in p for p in huge.problems)
    assert after.raw == '{"jsonrpc":"2.0","method":"after"}'


ENV_PROBE = r"""
    import json, os
    print(json.dumps({"env": dict(os.environ), "cwd": os.getcwd(), "pgid": os.getpgid(0), "pid": os.getpid()}),
          flush=True)
    input()
"""


async def test_a_server_gets_only_the_default_environment_and_its_own_variables(make, tmp_path, monkeypatch):
    """Not the playground's secrets: HOME, LOGNAME, PATH, SHELL, TERM, USER (what the SDKs pass),
    then the configured variables; and its working directory and own process group."""
    monkeypatch.setenv("PLAYGROUND_SECRET_KEY", "s3cret-from-the-parent")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:pw@db/app")
    monkeypatch.setenv("HOME", "/home/someone")
    cmd, args = script(ENV_PROBE)
    h = make(cmd, args, env={"PLAYGROUND_GIVEN": "from-config"}, cwd=str(tmp_path))
    await h.transport.start()
    facts = await h.message()
    env = facts["env"]
    assert "PLAYGROUND_SECRET_KEY" not in env and "DATABASE_URL" not in env
    assert env["PLAYGROUND_GIVEN"] == "from-config" and env["HOME"] == "/home/someone"
    assert (
        set(env) - {"PLAYGROUND_GIVEN", "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LC_CTYPE", "PWD"} == set()
    )  # (Python itself may add LC_CTYPE; a shell PWD)
    assert Path(facts["cwd"]).resolve() == tmp_path.resolve()
    assert facts["pid"] == h.transport.pid and facts["pgid"] == h.transport.pid  # its own group
    assert "PLAYGROUND_GIVEN" not in os.environ  # the parent's environment is untouched


async def test_inheriting_the_whole_environment_is_a_choice(make, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_INHERITED", "from-parent")
    cmd, args = script(ENV_PROBE)
    h = make(cmd, args, env={"PLAYGROUND_GIVEN": "from-config"}, inherit_env=True)
    await h.transport.start()
    env = (await h.message())["env"]
    assert env["PLAYGROUND_INHERITED"] == "from-parent" and env["PLAYGROUND_GIVEN"] == "from-config"


async def test_the_command_is_found_on_the_playgrounds_path_not_one_the_server_sets(make, tmp_path):
    """A server's PATH cannot swap the program: `sh` is the one this process would run."""
    fake = tmp_path / "sh"
    fake.write_text("#!/bin/cat\n" + '{"jsonrpc":"2.0","method":"impostor"}\n')
    fake.chmod(0o755)
    h = make("sh", ["-c", """echo '{"jsonrpc":"2.0","method":"real"}'; cat >/dev/null"""], env={"PATH": str(tmp_path)})
    await h.transport.start()
    assert (await h.message())["method"] == "real"


async def test_str_frames_are_sent_exactly(make):
    cmd, args = script(r"""
        import sys
        for line in sys.stdin:
            sys.stdout.write(line)
            sys.stdout.flush()
    """)
    h = make(cmd, args)
    await h.transport.start()
    await h.transport.send('{"jsonrpc": "2.0", "id": 7, "method": "ping"')  # malformed on purpose
    await h.transport.send('{"jsonrpc":"2.0","method":"x"}\n')  # has its newline already
    await h.transport.send({"jsonrpc": "2.0", "id": "é", "method": "ping"})
    await h.count(lambda e: e.dir == "recv", 3)
    sent = h.of("send")
    assert [e.raw for e in sent] == [
        '{"jsonrpc": "2.0", "id": 7, "method": "ping"',
        '{"jsonrpc":"2.0","method":"x"}\n',
        '{"jsonrpc":"2.0","id":"é","method":"ping"}',
    ]
    assert sent[0].parse_error and sent[2].parse_error is None
    # The echo shows what went over the wire: one line each, no doubled newline.
    assert [e.raw for e in h.of("recv")] == [
        '{"jsonrpc": "2.0", "id": 7, "method": "ping"',
        '{"jsonrpc":"2.0","method":"x"}',
        '{"jsonrpc":"2.0","id":"é","method":"ping"}',
    ]


async def test_stdout_closed_while_the_process_lives(make):
    cmd, args = script(r"""
        import os, sys
        print('{"jsonrpc":"2.0","method":"bye"}', flush=True)
        os.close(1)
        sys.stdin.read()
    """)
    h = make(cmd, args, shutdown_grace=0.2)
    await h.transport.start()
    pid = h.transport.pid
    await h.wait_closed()
    assert h.closed_reasons == [f"server closed its stdout (pid {pid} still running)"]
    assert h.notes("closed")[0].data == {"returncode": None}
    await h.transport.close()
    assert_reaped(pid)
    assert len(h.notes("closed")) == 1


async def test_a_failing_message_handler_does_not_stop_the_reader(make):
    cmd, args = script(r"""
        import sys
        print('{"jsonrpc":"2.0","method":"one"}', flush=True)
        print('{"jsonrpc":"2.0","method":"two"}', flush=True)
        sys.stdin.read()
    """)
    h = make(cmd, args)
    seen: list[str] = []

    def handler(message: Any) -> None:
        seen.append(message["method"])
        if message["method"] == "one":
            raise RuntimeError("client bug")
        h.messages.put_nowait(message)

    h.transport.bind(handler, lambda reason: None, lambda rid, exc: None)
    await h.transport.start()
    assert (await h.message())["method"] == "two"
    assert seen == ["one", "two"]
    assert "client bug" in h.notes("error")[0].text


async def test_a_failing_tap_listener_does_not_stop_the_reader(make):
    cmd, args = script(r"""
        import sys
        print('{"jsonrpc":"2.0","method":"one"}', flush=True)
        print('{"jsonrpc":"2.0","method":"two"}', flush=True)
        sys.stdin.read()
    """)
    h = make(cmd, args)

    def failing(event: TranscriptEvent) -> None:
        if event.method == "one":
            raise RuntimeError("listener bug")

    h.tap.subscribe(failing)
    await h.transport.start()
    assert (await h.message())["method"] == "two"
    assert "listener bug" in h.notes("error")[0].text


# Start and close edge cases ----------------------------------------------------------


async def test_command_not_found(make):
    h = make("/nonexistent/definitely-not-a-server", ["stdio"])
    with pytest.raises(TransportError, match="command not found"):
        await h.transport.start()
    assert [e.kind for e in h.events] == ["error"]
    assert h.transport.pid is None
    await h.transport.close()  # nothing to release, no error


async def test_command_not_executable(make, tmp_path):
    server = tmp_path / "server.sh"
    server.write_text("#!/bin/sh\necho hi\n")
    h = make(str(server))
    with pytest.raises(TransportError, match="not executable"):
        await h.transport.start()
    assert h.notes("error") and "not executable" in h.notes("error")[0].text


async def test_missing_cwd(make, tmp_path):
    cmd, args = script("print(1)")
    h = make(cmd, args, cwd=str(tmp_path / "nope"))
    with pytest.raises(TransportError, match="working directory"):
        await h.transport.start()


async def test_close_is_idempotent_and_send_after_close_fails(make):
    cmd, args = script("import sys; sys.stdin.read()")
    unused = make(cmd, args)
    await unused.transport.close()  # before start: nothing to release, and it stays closed
    assert unused.events == []
    with pytest.raises(TransportError, match="closed"):
        await unused.transport.start()

    h = make(cmd, args)
    await h.transport.start()
    pid = h.transport.pid
    await asyncio.gather(h.transport.close(), h.transport.close())
    await h.transport.close()
    assert_reaped(pid)
    closed = h.notes("closed")
    assert len(closed) == 1 and closed[0].data == {"returncode": 0, "how": "exited after stdin was closed"}
    with pytest.raises(TransportError, match="closed"):
        await h.transport.send(jsonrpc.request(1, "ping"))
    with pytest.raises(TransportError, match="closed"):
        await h.transport.start()
    assert h.closed_reasons == []


class _Chunks:
    """A pipe that hands out the given chunks, one per read, then EOF."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def read(self, _n: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


@pytest.mark.parametrize("cut", [1, 3, 7, 64, 1000])
async def test_lines_are_split_the_same_however_the_pipe_cuts_them(cut):
    """The reader splits each chunk in C and carries the unfinished line over: every cut of the
    same output gives the same lines; a line that outgrows max_line before its newline comes is
    handed over cut once and the rest of it skipped, whatever follows it in the same chunk kept;
    a failing handler loses only its own line (noted); a last line without a newline counts."""
    output = b'{"a":1}\n' + b"x" * 40 + b"\n\n" + b"y" * 300 + b'\n{"b":2}\r\n' + b"z" * 25 + b"\nboom\nlast"
    chunks = [output[i : i + cut] for i in range(0, len(output), cut)]
    tap = Tap()
    notes: list[TranscriptEvent] = []
    tap.subscribe(notes.append)
    transport = StdioTransport(tap, "unused", max_line=50 if cut < 1000 else 10_000)
    lines: list[bytes] = []
    overflows: list[bytes] = []

    def on_line(line: bytes) -> None:
        if line == b"boom":
            raise RuntimeError("handler failed")
        lines.append(line)

    transport._lines[1] = _Lines(on_line, overflows.append, transport.max_line, transport._handler_failed)
    await transport._read_lines(_Chunks(chunks), 1)
    if cut < 1000:  # 300 y's never fit in the 50 bytes held before their newline comes
        assert overflows == [b"y" * 50]
        assert lines == [b'{"a":1}', b"x" * 40, b"", b'{"b":2}\r', b"z" * 25, b"last"]
    else:  # one chunk: every line is whole, none outgrows what is held
        assert overflows == []
        assert lines == [b'{"a":1}', b"x" * 40, b"", b"y" * 300, b'{"b":2}\r', b"z" * 25, b"last"]
    assert [e.text for e in notes if e.kind == "error"] == [
        "handling a line from the server failed: RuntimeError('handler failed')"
    ]


async def test_an_answer_is_taken_in_the_pipes_callback_and_lines_keep_their_order():
    """What the pipe brings is handled in its protocol's callback (a server's answer then costs
    no turn of the reader task), unless some of the pipe waits in its stream for the reader:
    what came before the readers started, a line that comes while the tap is paused, and every
    line after either until the reader has read it, go to the stream; the order is the pipe's."""
    tap = Tap()
    transport = StdioTransport(tap, "unused")
    handled: list[bytes] = []
    transport._lines[1] = _Lines(handled.append, handled.append, transport.max_line, transport._handler_failed)
    stream = asyncio.StreamReader()

    def pipe(data: bytes) -> None:  # (what _Protocol.pipe_data_received does)
        if not transport._inline(1, data):
            stream.feed_data(data)

    pipe(b'{"id":0}\n')  # before start() has noted "started" and made the readers: the stream's
    transport._reading = True
    pipe(b'{"id":1}\n')  # the stream holds a line: after it
    assert handled == [] and transport._unread[1] == len(b'{"id":0}\n{"id":1}\n')
    reader = asyncio.create_task(transport._read_lines(stream, 1))
    async with asyncio.timeout(5):
        while transport._unread[1]:
            await asyncio.sleep(0)
    assert handled == [b'{"id":0}', b'{"id":1}']
    pipe(b'{"id":2}\n{"id":')
    assert handled[2:] == [b'{"id":2}']  # at once, in the callback
    tap.pause()
    pipe(b"3}\n")  # paused: to the stream
    tap.resume()
    pipe(b'{"id":4}\n')  # the stream still holds a line: after it, not before
    assert len(handled) == 3 and transport._unread[1] == len(b'3}\n{"id":4}\n')
    stream.feed_eof()
    await reader
    assert handled[3:] == [b'{"id":3}', b'{"id":4}'] and transport._unread[1] == 0
    assert not transport._inline(1, b"x" * 70_000)  # a flood's full read: the reader's, as before
    assert transport._unread[1] == 70_000 and len(handled) == 5
