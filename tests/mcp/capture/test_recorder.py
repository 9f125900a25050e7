"""The recorder in one process: when it falls behind the forwarding (more than its backlog of
chunks waiting) or a line can never fit an upload, the lines are counted, never lost silently;
the lines around them are recorded whole."""

from __future__ import annotations

import json
from pathlib import Path

from playground.mcp.capture.outbox import Outbox
from playground.mcp.capture.recorder import MAX_RECORD, Recorder
from tests.mcp.capture.conftest import contiguous, frames


def drained(outbox: Outbox) -> list[dict]:
    records = []
    while True:
        lines, memory, file_bytes = outbox.peek(1 << 22)
        if not lines:
            return records
        records += [json.loads(x) for blob in lines for x in blob.splitlines()]
        outbox.commit(memory, file_bytes)


def test_chunks_beyond_the_backlog_are_counted(tmp_path: Path) -> None:
    outbox = Outbox("c" * 32, folder=tmp_path)
    recorder = Recorder("c" * 32, 1, outbox, backlog_limit=1000)
    lines = [b"line %03d\n" % i for i in range(400)]
    stream = b"".join(lines)
    # The forwarder hands chunks over faster than the (not yet started) recorder takes them,
    # cutting lines in the middle: once 1,000 bytes wait, chunks are only counted.
    for start in range(0, len(stream), 7):
        recorder.chunk("recv", stream[start : start + 7])
    recorder.chunk("recv", b"")
    recorder.start()
    recorder.stop(10)
    records = drained(outbox)
    assert contiguous(records)
    kept = frames(records, "recv")
    dropped = sum(r["count"] for r in records if r["kind"] == "dropped")
    assert dropped > 0 and len(kept) + dropped == len(lines)
    assert kept == [line[:-1] for line in lines[: len(kept)]]  # the kept ones are whole and in order
    assert records[-1]["kind"] == "dropped"  # the count sent at the end


def test_a_line_too_long_for_any_upload_is_counted_and_its_neighbours_kept(tmp_path: Path) -> None:
    outbox = Outbox("d" * 32, folder=tmp_path)
    recorder = Recorder("d" * 32, 1, outbox)
    recorder.start()
    recorder.chunk("recv", b"before\n" + b"x" * (MAX_RECORD // 2))
    recorder.chunk("recv", b"x" * (MAX_RECORD // 2 + 10) + b"\nafter\n")
    recorder.chunk("recv", b"\xff" * (MAX_RECORD * 4 // 5) + b"\n")  # under 4 MB, but not once in base64
    recorder.chunk("recv", b"\xff" * (MAX_RECORD // 2) + b"\n")  # 2 MB: its base64 fits
    recorder.chunk("recv", b"")
    recorder.stop(10)
    records = drained(outbox)
    assert contiguous(records)
    assert frames(records, "recv") == [b"before", b"after", b"\xff" * (MAX_RECORD // 2)]
    assert sum(r["count"] for r in records if r["kind"] == "dropped") == 2
