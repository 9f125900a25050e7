"""The recorder in one process: a frame line longer than an upload goes in parts and comes back
whole (cut beyond MAX_FRAME); when the recorder falls behind the forwarding (more than its backlog
of chunks waiting) or a part finds no room, the lines are counted, never lost silently, and the
lines around them are recorded whole."""

from __future__ import annotations

import json
from pathlib import Path

from playground.mcp.capture import recorder as recorder_module
from playground.mcp.capture.outbox import Outbox
from playground.mcp.capture.recorder import MAX_RECORD, PART_BYTES, Recorder
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


def test_the_backlog_counts_every_stream_whatever_was_taken_of_another(tmp_path: Path) -> None:
    """Bytes taken of one stream (stderr recorded earlier) do not make room for another's chunks:
    the backlog bound is on all that waits."""
    outbox = Outbox("g" * 32, folder=tmp_path)
    recorder = Recorder("g" * 32, 1, outbox, backlog_limit=1000)
    recorder.chunk("stderr", b"log line\n" * 500)  # 4,500 bytes, taken below
    recorder.start()
    recorder.stop(10)
    assert len([r for r in drained(outbox) if r["kind"] == "stderr"]) == 500
    later = Recorder("g" * 32, 1, outbox, backlog_limit=1000)
    later._queued["stderr"], later._taken = recorder._queued["stderr"], recorder._taken  # the same history
    for n in range(100):  # 1,600 bytes of recv waiting, none taken yet
        later.chunk("recv", b"line %010d\n" % n)
    later.start()
    later.stop(10)
    records = drained(outbox)
    dropped = sum(r["count"] for r in records if r["kind"] == "dropped")
    assert dropped > 0 and len(frames(records, "recv")) + dropped == 100


def test_lines_longer_than_an_upload_go_in_parts_and_come_back_whole(tmp_path: Path) -> None:
    outbox = Outbox("d" * 32, folder=tmp_path)
    recorder = Recorder("d" * 32, 1, outbox)
    recorder.start()
    long_text = b'{"jsonrpc":"2.0","id":1,"result":{"blob":"' + b"x" * (MAX_RECORD + 10) + b'"}}'
    cut_in = len(long_text) // 3
    recorder.chunk("recv", b"before\n" + long_text[:cut_in])  # a line that comes in several chunks
    recorder.chunk("recv", long_text[cut_in:] + b"\nafter\n")
    binary = bytes(b for b in range(256) if b != 10) * (MAX_RECORD * 4 // 5 // 255)  # over 4 MB in base64
    accented = b"a" + "é".encode() * (PART_BYTES // 2 + 3)  # a part ends inside a 2-byte character
    recorder.chunk("send", binary + b"\n" + accented)
    recorder.chunk("send", b"")  # the stream's end ends its last line
    recorder.chunk("recv", b"x" * (2 * PART_BYTES) + b"\n")  # exactly two parts and an empty frame
    recorder.chunk("recv", b"")
    recorder.stop(10)
    records = drained(outbox)
    assert contiguous(records)
    assert not [r for r in records if r["kind"] == "dropped"]
    assert frames(records, "recv") == [b"before", long_text, b"after", b"x" * (2 * PART_BYTES)]
    assert frames(records, "send") == [binary, accented]
    encoded = [len(json.dumps(r)) for r in records]
    assert max(encoded) < MAX_RECORD  # each record fits an upload
    assert sum(r["kind"] == "part" for r in records) == 4 + 3 + 1 + 2


def test_a_line_beyond_max_line_is_recorded_cut_and_the_next_one_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(recorder_module, "MAX_FRAME", 5 * PART_BYTES)
    outbox = Outbox("e" * 32, folder=tmp_path)
    recorder = Recorder("e" * 32, 1, outbox)
    recorder.start()
    for _ in range(8):  # 8 MB of one line, in 1 MB chunks
        recorder.chunk("recv", b"y" * PART_BYTES)
    recorder.chunk("recv", b"yyy\nnext\n")
    recorder.chunk("recv", b"")
    recorder.stop(10)
    records = drained(outbox)
    assert contiguous(records)
    cut = [r for r in records if r["kind"] == "frame" and r.get("cut")]
    assert len(cut) == 1 and cut[0]["parts"] == 4
    assert frames(records, "recv") == [b"y" * (5 * PART_BYTES), b"next"]
    assert not [r for r in records if r["kind"] == "dropped"]  # recorded cut, not lost


def test_a_part_with_no_room_loses_its_line_counted_and_the_next_line_claims_none(tmp_path: Path) -> None:
    outbox = Outbox("f" * 32, folder=tmp_path, memory_limit=3 * PART_BYTES, spill_limit=0)
    recorder = Recorder("f" * 32, 1, outbox)
    # The long line's third part finds no room; the short line after it does (the same recorder).
    recorder.chunk("recv", b"z" * (5 * PART_BYTES) + b"\nsmall\n")
    recorder.start()
    recorder.stop(10)
    records = drained(outbox)
    parts = [r for r in records if r["kind"] == "part"]
    assert 1 <= len(parts) < 5
    assert sum(r["count"] for r in records if r["kind"] == "dropped") == 1
    (small,) = [r for r in records if r["kind"] == "frame"]
    assert small["text"] == "small" and "parts" not in small  # it claims none of the lost line's parts
    assert frames(records, "recv") == [b"small"]
