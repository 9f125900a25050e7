"""The upload side against a receiver that implements the contract: refusals (one stderr line,
forwarding unaffected), the playground down (kept, then delivered when it is back, or imported
later), a batch resent after an error (deduped), records dropped when nothing can keep them
(counted in `dropped` records)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.mcp.capture.conftest import (
    MANAGE,
    OTHER_SERVER,
    PEER,
    TOKEN,
    contiguous,
    frames,
    host_env,
    start,
)
from tests.mcp.capture.receiver import Receiver

LINES = [b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}\n' % (i, b"x" * 40) for i in range(300)]


def echo_through(proc: subprocess.Popen[bytes], lines: list[bytes]) -> tuple[bytes, bytes]:
    """The host writes the lines and closes stdin; the echo peer sends them back, then "eof"."""
    out, err = proc.communicate(b"".join(lines), timeout=60)
    assert out == b"".join(lines) + b"eof\n"  # forwarding unaffected, whatever the recording did
    assert proc.returncode == 0
    return out, err


@pytest.mark.parametrize(
    ("token", "server", "status", "says"),
    [
        ("revoked-or-wrong", 7, 401, "the capture token was refused (401: unknown token)"),
        (TOKEN, OTHER_SERVER, 403, "not your server (403: not your server)"),
        (TOKEN, 7, 400, "the upload was malformed (400: told to)"),
    ],
)
def test_a_refusal_is_said_once_and_the_host_is_unaffected(
    fresh: Receiver, tmp_path: Path, python_exe: str, token: str, server: int, status: int, says: str
) -> None:
    if status == 400:
        fresh.answer_status = 400
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], host_env(tmp_path, token=token), server)
    _, err = echo_through(proc, LINES)
    assert err.decode().splitlines() == [
        f"[playground capture] {says}: not recording; the server keeps running for the host."
    ]
    assert fresh.statuses == [status]  # it stopped trying
    assert not fresh.captures  # nothing recorded
    assert not list((tmp_path / "spill").glob("*"))  # nor kept for later


def test_down_then_back_every_record_arrives_in_order(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    """The playground is down while the host talks: records wait (memory, then the spill file: a
    1 KB memory queue here), and all arrive once it is back, a batch resent after a 500 deduped."""
    fresh.down()
    env = host_env(tmp_path, PLAYGROUND_CAPTURE_MEMORY_LIMIT="1000")
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(LINES))
    proc.stdin.flush()
    echoed = b""
    while len(echoed) < len(b"".join(LINES)):  # forwarded while nothing can be delivered
        echoed += proc.stdout.read1(65536)
    fresh.fail_after_store = 1
    fresh.up()
    fresh.wait(lambda: fresh.captures and len(fresh.only().records) > len(LINES), timeout=30)
    _, err = echo_through(proc, [])
    assert err == b""
    fresh.wait(fresh.ended)
    capture = fresh.only()
    records = capture.ordered()
    assert contiguous(records) and capture.duplicates > 0  # resent after the 500, kept once
    assert frames(records, "send") == [line[:-1] for line in LINES]
    assert frames(records, "recv") == [line[:-1] for line in LINES] + [b"eof"]
    assert not [r for r in records if r["kind"] == "dropped"]
    assert not list((tmp_path / "spill").glob("*"))  # delivered: no file left


def test_down_until_the_end_kept_in_a_file_then_imported(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    fresh.down()
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], host_env(tmp_path))
    _, err = echo_through(proc, LINES)
    (kept,) = (tmp_path / "spill").glob("*.jsonl")
    line = err.decode()
    assert line.count("\n") == 1 and line.startswith(f"[playground capture] the playground at {fresh.base} did not")
    assert f"manage.py mcp --capture-import {kept} --capture {fresh.base}" in line

    fresh.up()
    imported = subprocess.run(
        [sys.executable, MANAGE, "mcp", "--capture-import", str(kept), "--capture", fresh.base],
        env=host_env(tmp_path),
        capture_output=True,
        timeout=60,
    )
    assert imported.returncode == 0, imported.stderr
    assert not kept.exists()
    records = fresh.only().ordered()
    assert contiguous(records) and [records[0]["kind"], records[-1]["kind"]] == ["start", "end"]
    assert frames(records, "send") == [line[:-1] for line in LINES]
    assert str(len(records)) in imported.stderr.decode()


def test_nothing_lost_silently_when_nothing_can_keep_it(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    """Memory and spill file both tiny while the playground is down: what they cannot hold is
    counted, and the count arrives as `dropped` records, in its place."""
    fresh.down()
    env = host_env(tmp_path, PLAYGROUND_CAPTURE_MEMORY_LIMIT="2000", PLAYGROUND_CAPTURE_SPILL_LIMIT="6000")
    proc = start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(LINES))
    proc.stdin.flush()
    echoed = b""
    while len(echoed) < len(b"".join(LINES)):
        echoed += proc.stdout.read1(65536)
    fresh.up()
    echo_through(proc, [])
    fresh.wait(fresh.ended)
    records = fresh.only().ordered()
    assert contiguous(records)
    dropped = sum(r["count"] for r in records if r["kind"] == "dropped")
    recorded = len(frames(records, "send")) + len(frames(records, "recv"))
    assert dropped > 0 and recorded + dropped == 2 * len(LINES) + 1  # every line recorded or counted


def test_a_later_capture_delivers_what_an_earlier_one_kept(fresh: Receiver, tmp_path: Path, python_exe: str) -> None:
    """No one has to remember --capture-import: the next capture (the host restarted) delivers an
    earlier capture's file once its own upload reached the playground, and says so on stderr."""
    fresh.down()
    echo_through(start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], host_env(tmp_path)), LINES)
    (kept,) = (tmp_path / "spill").glob("*.jsonl")
    # An older file this playground refuses (kept for another server: 403) stops nothing after it.
    refused = tmp_path / "spill" / f"{'b' * 32}.jsonl"
    record = {"capture": "b" * 32, "server": OTHER_SERVER, "i": 0, "t": 1.0, "kind": "heartbeat"}
    refused.write_text(json.dumps(record) + "\n")
    os.utime(refused, (1, 1))
    fresh.up()
    _, err = echo_through(start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], host_env(tmp_path)), LINES[:2])
    # Delivered and removed; the refused one set aside, so that no later capture posts it again.
    aside = refused.with_name(refused.name + ".refused")
    assert list((tmp_path / "spill").glob("*")) == [aside]
    assert aside.read_text() == json.dumps(record) + "\n"
    assert len(fresh.captures) == 2
    earlier = next(c for c in fresh.captures.values() if len(c.records) > 10).ordered()
    assert contiguous(earlier) and [earlier[0]["kind"], earlier[-1]["kind"]] == ["start", "end"]
    assert frames(earlier, "send") == [line[:-1] for line in LINES]
    said = err.decode().splitlines()
    assert said == [
        f"[playground capture] not your server (403: not your server): an earlier capture's {refused.name} was not "
        f"delivered (0 records taken), set aside as {aside.name}; no capture will send it again "
        f"(by hand: manage.py mcp --capture-import {aside} --capture BASE_URL)",
        f"[playground capture] delivered {len(earlier)} records an earlier capture kept in {kept.name} (session {next(c.session for c in fresh.captures.values() if len(c.records) > 10)})",
    ]
    assert fresh.statuses.count(403) == 1

    # The next capture does not post it again, nor says anything of it.
    _, err = echo_through(start(fresh.base, [python_exe, PEER, str(tmp_path), "echo"], host_env(tmp_path)), LINES[:2])
    assert err == b"" and fresh.statuses.count(403) == 1
    assert list((tmp_path / "spill").glob("*")) == [aside]


def test_a_leftover_the_playground_could_not_take_is_tried_again(
    fresh: Receiver, tmp_path: Path, python_exe: str
) -> None:
    """A 5xx (the playground is there but failing) is not a refusal: the file is given back as it
    was, for a later capture."""
    from playground.mcp.capture.leftovers import deliver_in_background

    folder = tmp_path / "spill"
    folder.mkdir()
    left = folder / f"{'c' * 32}.jsonl"
    left.write_text(json.dumps({"capture": "c" * 32, "server": 7, "i": 0, "t": 1.0, "kind": "heartbeat"}) + "\n")
    fresh.answer_status = 503
    reached = threading.Event()
    reached.set()
    deliver_in_background(folder, fresh.base, TOKEN, reached).join(30)
    assert fresh.statuses == [503]
    assert list(folder.glob("*")) == [left]


def test_a_file_claimed_by_a_capture_that_died_is_taken_over(tmp_path: Path) -> None:
    """Two captures starting at once never deliver the same file; a claim whose process is gone
    is taken over (its records are sent again: the playground dedupes)."""
    from playground.mcp.capture.leftovers import CLAIM, claim, release

    folder = tmp_path / "spill"
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (folder / "a.jsonl").write_bytes(b"{}\n")
    (folder / f"b.jsonl{CLAIM}{int(dead.stdout)}").write_bytes(b"{}\n")  # its process has exited
    (folder / f"c.jsonl{CLAIM}{os.getppid()}").write_bytes(b"{}\n")  # a live process's claim
    (folder / "d.jsonl.tmp").write_bytes(b"{}\n")  # being written: not a left file
    claimed = list(claim(folder))
    assert sorted(p.name for p in claimed) == [f"a.jsonl{CLAIM}{os.getpid()}", f"b.jsonl{CLAIM}{os.getpid()}"]
    assert list(claim(folder)) == []  # claimed already
    release(claimed[0])
    assert (folder / claimed[0].name.rpartition(CLAIM)[0]).exists()
