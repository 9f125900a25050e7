"""Chunks in, numbered records out: the recorder's thread cuts each stream into lines and
writes each as one JSON record (the upload's format, docs/capture.md) into the outbox.

The forwarding threads hand their chunks over with one deque append just before forwarding them
(so a reply is never queued before what it replies to) and never wait here (nor wake this thread:
it takes what came every 20 ms). When the recorder falls behind by more than `backlog_limit`
bytes, a chunk is not kept: its lines are counted as dropped (and the line it cut into is dropped
whole), so memory stays bounded whatever the server writes.
A line is recorded when its newline comes, or at the stream's end. A frame line longer than an
upload can hold goes as `part` records of PART_BYTES each, then its `frame` (which says how many
parts come before it); beyond MAX_FRAME bytes it is recorded cut there, as a live session's is.
"""

from __future__ import annotations

import base64
import collections
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ..framing import MAX_FRAME  # bytes of one frame line kept (a live session's limit): the rest is cut
from .outbox import Outbox

HEARTBEAT = 5.0  # seconds between heartbeats while the server runs
PERIOD = 0.02  # seconds between the recorder's rounds (records reach the page within ~50 ms)
MAX_RECORD = 4_000_000 - 1  # an upload request holds at most 4 MB: a larger record cannot be sent
PART_BYTES = 1_000_000  # bytes of a long frame line a `part` record carries (1.33 MB in base64)
BACKLOG_LIMIT = 32 * 1024 * 1024  # bytes of chunks waiting for the recorder before chunks are dropped
# A flood (more than FLOOD_BYTES arriving in one round: 50 MB/s) is recorded once it pauses, or once
# DEFER_LIMIT bytes wait: meanwhile the recorder takes no CPU from the server, the host and the
# forwarding (on two cores, its per-line work cost the forwarded flood a quarter of its rate).
FLOOD_BYTES = 1 << 20
DEFER_LIMIT = 16 * 1024 * 1024

_text: Callable[[str], str] = json.encoder.encode_basestring
_STOP = object()


class Recorder:
    def __init__(
        self,
        capture: str,
        server: int,
        outbox: Outbox,
        heartbeat: float = HEARTBEAT,
        backlog_limit: int = BACKLOG_LIMIT,
        rejected: Callable[[], int] = lambda: 0,
    ) -> None:
        self.outbox = outbox
        self.heartbeat = heartbeat
        self.backlog_limit = backlog_limit
        self.rejected = rejected  # records the uploader had to give up on (a 413 for one record)
        self._prefix = f'{{"capture":"{capture}","server":{int(server)},"i":'
        self._queue: collections.deque[Any] = collections.deque()  # (append and popleft: thread-safe)
        self._wake = threading.Event()
        self.recording = True  # False once the playground refused: chunks are no longer queued
        self.i = 0  # the next record's number
        self.lost = 0  # records lost since the last `dropped` record
        self.lost_total = 0
        self._rejected_seen = 0
        # Bytes queued (written by the forwarding threads, one counter each) and taken (by ours).
        self._queued = {"send": 0, "recv": 0, "stderr": 0}
        self._taken = 0
        self._partial: dict[str, list[bytes]] = {"send": [], "recv": [], "stderr": []}
        self._partial_size = {"send": 0, "recv": 0, "stderr": 0}
        self._skipping = {"send": False, "recv": False, "stderr": False}
        self._cut = {"send": False, "recv": False}  # skipping the rest of a line recorded cut (not lost)
        self._parts = {"send": 0, "recv": 0}  # `part` records sent of the current line
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="capture-recorder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    # --- called from other threads ------------------------------------------------------------

    def chunk(self, stream: str, data: bytes) -> None:
        """A chunk the forwarder has just passed on (b"" at the stream's end). Never blocks."""
        if not self.recording:
            return
        t = time.time()
        if data and self._backlog() > self.backlog_limit:
            self._queue.append((t, stream, (data.count(b"\n"), data.endswith(b"\n"))))  # not kept: counted
            return
        self._queued[stream] += len(data)
        self._queue.append((t, stream, data))

    def _backlog(self) -> int:
        """Bytes of chunks waiting for the recorder, all streams together (each counter has one
        writer: a forwarding thread its own, this thread `_taken`)."""
        return sum(self._queued.values()) - self._taken

    def event(self, kind: str, **fields: Any) -> None:
        """A `start` or `end` record, in its place among the chunks."""
        self._queue.append((time.time(), kind, fields))

    def stop(self, timeout: float | None = None) -> None:
        """Record what is queued, then end the thread."""
        self._stopping = True
        self._queue.append(_STOP)
        self._wake.set()
        self._thread.join(timeout)

    # --- the recorder's thread ----------------------------------------------------------------

    def _run(self) -> None:
        next_beat = time.monotonic() + self.heartbeat
        take = self._queue.popleft
        seen = 0  # the backlog after the last round
        while True:
            # Woken by the clock, not by each chunk: a forwarding thread only appends (no wake-up
            # of this thread, no switch to it, on the path of a request and its response).
            self._wake.wait(PERIOD)
            if time.monotonic() >= next_beat:
                self._record(time.time(), '"kind":"heartbeat"}')
                next_beat = time.monotonic() + self.heartbeat
            backlog = self._backlog()
            if not self._stopping and backlog - seen > FLOOD_BYTES and backlog < DEFER_LIMIT:
                seen = backlog  # a flood is passing: its chunks wait for it to pause
                continue
            while self._queue:
                item = take()
                if item is _STOP:
                    self._note_lost(force=True)
                    return
                t, stream, data = item
                if isinstance(data, bytes):
                    self._taken += len(data)
                    self._lines(t, stream, data)
                elif isinstance(data, tuple):
                    self._dropped_chunk(stream, *data)
                else:
                    fields = json.dumps(data, ensure_ascii=False, separators=(",", ":"))[1:] if data else "}"
                    self._record(t, f'"kind":"{stream}"' + ("," if data else "") + fields, force=True)
            seen = self._backlog()

    def _lines(self, t: float, stream: str, data: bytes) -> None:
        if not data:  # the end of the stream: its partial line is a line
            if stream != "stderr" and self._parts[stream] and not self._skipping[stream]:
                self._line(t, stream, self._take_partial(stream))
            elif self._partial[stream]:
                self._frames(t, stream, self._take_partial(stream))
            elif self._skipping[stream] and not self._cut.get(stream):
                self._lose(1)  # the stream ended inside a line that was being skipped
            self._skipping[stream] = self._cut[stream] = False
            return
        if self._skipping[stream]:
            newline = data.find(b"\n")
            if newline < 0:
                return
            self._skipping[stream] = False
            if not self._cut.get(stream):
                self._lose(1)
            self._cut[stream] = False
            data = data[newline + 1 :]
        newline = data.rfind(b"\n")
        if newline >= 0:
            whole = data[:newline]
            if self._partial[stream]:
                whole = self._take_partial(stream) + whole
            more = b"\n"
            if stream != "stderr" and self._parts[stream]:  # the end of a line sent in parts
                first, more, whole = whole.partition(b"\n")
                self._line(t, stream, first)
            if more:
                self._frames(t, stream, whole)
            data = data[newline + 1 :]
        if data:
            self._partial[stream].append(data)
            self._partial_size[stream] += len(data)
            if stream != "stderr" and self._partial_size[stream] >= PART_BYTES:
                rest = self._send_parts(t, stream, self._take_partial(stream))
                if rest:
                    self._partial[stream].append(rest)
                    self._partial_size[stream] = len(rest)
            elif self._partial_size[stream] > MAX_RECORD:  # can never be sent: skip to its newline
                self._take_partial(stream)
                self._skipping[stream] = True

    def _frames(self, t: float, stream: str, whole: bytes) -> None:
        """Records for the lines of `whole` (joined by newlines): all at once when they are UTF-8
        and short enough to fit a request each (a flood's case), else one by one."""
        if stream != "stderr" and len(whole) <= MAX_RECORD // 6 - 200:  # (an escape is 6 bytes at most)
            try:
                text = whole.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None:
                self._note_lost()
                lines = text.split("\n")
                head = f',"t":{t:.6f},"kind":"frame","dir":"{stream}","text":'
                prefix = self._prefix
                blob = "".join([f"{prefix}{n}{head}{_text(line)}}}\n" for n, line in enumerate(lines, self.i)])
                encoded = blob.encode()
                if self.outbox.put(encoded):
                    self.i += len(lines)
                    return
        for line in whole.split(b"\n"):
            self._line(t, stream, line)

    def _dropped_chunk(self, stream: str, newlines: int, ends_line: bool) -> None:
        """A chunk the recorder could not keep up with: the lines it ended are lost (the one it
        continued included), and so is the line it began."""
        self._take_partial(stream)
        if stream in self._parts:  # parts already sent of that line: the playground drops them
            self._parts[stream] = 0
        if newlines == 0:
            self._skipping[stream] = True
            return
        self._lose(newlines)
        self._skipping[stream] = not ends_line

    def _take_partial(self, stream: str) -> bytes:
        joined = b"".join(self._partial[stream])
        self._partial[stream] = []
        self._partial_size[stream] = 0
        return joined

    def _line(self, t: float, stream: str, line: bytes) -> None:
        if stream == "stderr":
            self._record(t, '"kind":"stderr","text":' + _text(line.decode("utf-8", "replace")) + "}")
            return
        if len(line) > PART_BYTES:
            line = self._send_parts(t, stream, line)
            if self._skipping[stream]:  # lost (no room for a part), or cut and already recorded
                self._skipping[stream] = self._cut[stream] = False
                return
        parts, self._parts[stream] = self._parts[stream], 0
        self._frame(t, stream, line, parts, cut=False)

    def _frame(self, t: float, stream: str, line: bytes, parts: int, cut: bool) -> None:
        try:
            body = '","text":' + _text(line.decode("utf-8"))
        except UnicodeDecodeError:
            body = '","b64":"' + base64.b64encode(line).decode("ascii") + '"'
        more = (f',"parts":{parts}' if parts else "") + (',"cut":true' if cut else "")
        self._record(t, '"kind":"frame","dir":"' + stream + body + more + "}")

    def _send_parts(self, t: float, stream: str, data: bytes) -> bytes:
        """`part` records for the whole PART_BYTES pieces of a frame line's `data`; the rest,
        which its `frame` record (or the next part) carries. A line that reaches MAX_FRAME gets
        its frame here, marked cut, and the rest of it is skipped (`_skipping` and `_cut` set);
        a part with no room loses the line (counted; the playground drops its earlier parts)."""
        pieces = len(data) // PART_BYTES
        for n in range(pieces):
            piece = data[n * PART_BYTES : (n + 1) * PART_BYTES]
            if (self._parts[stream] + 1) * PART_BYTES >= MAX_FRAME:
                parts, self._parts[stream] = self._parts[stream], 0
                self._frame(t, stream, piece, parts, cut=True)
                self._skipping[stream] = self._cut[stream] = True
                return b""
            self._note_lost()
            line = f'{self._prefix}{self.i},"t":{t:.6f},"kind":"part","dir":"{stream}","b64":"'.encode()
            if not self.outbox.put(line + base64.b64encode(piece) + b'"}\n'):
                self._parts[stream] = 0
                self._lose(1)
                self._skipping[stream], self._cut[stream] = True, True  # (counted here, not again)
                return b""
            self.i += 1
            self._parts[stream] += 1
        return data[pieces * PART_BYTES :]

    def _record(self, t: float, body: str, force: bool = False) -> None:
        if not force:
            self._note_lost()
        line = f'{self._prefix}{self.i},"t":{t:.6f},{body}\n'.encode()
        if len(line) > MAX_RECORD or not self.outbox.put(line, force=force):
            self._lose(1)
            return
        self.i += 1

    def _lose(self, count: int) -> None:
        self.lost += count
        self.lost_total += count

    def _note_lost(self, force: bool = False) -> None:
        """A `dropped` record for what was lost since the last, when it can be kept."""
        rejected = self.rejected()
        if rejected != self._rejected_seen:
            self._lose(rejected - self._rejected_seen)
            self._rejected_seen = rejected
        if not self.lost or not (force or self.outbox.accepts(200)):
            return
        line = f'{self._prefix}{self.i},"t":{time.time():.6f},"kind":"dropped","count":{self.lost}}}\n'.encode()
        if self.outbox.put(line, force=force):
            self.i += 1
            self.lost = 0
