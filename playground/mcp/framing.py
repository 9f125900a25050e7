"""What reading frames off the wire needs, stdlib only (the stdio capture imports it, and it must
not pull in the client core's dependencies): the one frame size limit, and the SSE parser that keeps
ids and sees cut events.

The SSE parser is our own (not httpx-sse) because a debugger must notice a stream cut in
the middle of an event and show the partial text, which a conforming decoder discards.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# A frame (a stdio line, a JSON body or one SSE event) larger than this is not delivered: its head
# is recorded, cut, and the rest is not read. A runaway server must not eat memory. The one limit
# of the client's transports, the stdio capture and the playground's side of it.
MAX_FRAME = 64 * 1024 * 1024


@dataclass(slots=True)
class SseEvent:
    """One dispatched SSE event. `has_data` is False for events with no `data:` line (a
    priming event carries only an id and a retry), which are not frames. `invalid_utf8`: some
    of its bytes were not UTF-8 (shown as U+FFFD)."""

    event: str
    data: str
    id: str | None
    retry: int | None
    has_data: bool
    invalid_utf8: bool = False
    named: bool = False  # it had an `event:` line (kept: the stream's text as sent)


_EOL = re.compile(rb"\r\n|\r|\n")
_NOT_EOL = re.compile(rb"[^\r\n]")


class SseParser:
    """Incremental parser of `text/event-stream` (WHATWG rules: CR, LF or CRLF line ends,
    comments, `id` without NUL, numeric `retry`). Feed bytes; get whole events.

    Lines are split on bytes and decoded whole, so an event's invalid UTF-8 is known (not
    silently replaced), and a line arriving in thousands of chunks (a 50 MB event) is scanned
    once, not once per chunk."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._scan = 0  # bytes of _buf already searched for a line end
        self._reset_event()
        self.last_id: str | None = None  # the stream's last event id (persists across events)
        self.retry: int | None = None  # the last `retry:` value seen, in milliseconds
        self.pending_bytes = 0  # size of the event being assembled

    def _reset_event(self) -> None:
        self._data: list[str] = []
        self._event = ""
        self._named = False
        self._event_id: str | None = None
        self._event_retry: int | None = None
        self._started = False
        self._raw: list[str] = []
        self._raw_bytes = 0
        self._bad_utf8 = False

    @property
    def in_event(self) -> bool:
        """Whether part of an event has been read but not its terminating blank line."""
        return self._started or _NOT_EOL.search(self._buf) is not None

    def partial(self) -> str:
        """The text of the unfinished event (what a cut stream leaves behind)."""
        rest = self._buf.decode("utf-8", errors="replace")
        return "\n".join(self._raw) + ("\n" if self._raw and rest else "") + rest

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self._buf += chunk
        return list(self._drain())

    def _drain(self) -> Iterator[SseEvent]:
        buf, start = self._buf, 0
        while True:
            match = _EOL.search(buf, max(start, self._scan))
            if match is None or (match.group() == b"\r" and match.end() == len(buf)):
                break  # no whole line yet (a last CR may be the first half of CRLF)
            line = bytes(buf[start : match.start()])
            start = match.end()
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                text = line.decode("utf-8", errors="replace")
                self._bad_utf8 = True
            event = self._line(text, len(line))
            if event is not None:
                yield event
        del buf[:start]
        self._scan = len(buf) - 1 if buf.endswith(b"\r") else len(buf)
        self.pending_bytes = self._raw_bytes + len(buf)

    def _line(self, line: str, size: int) -> SseEvent | None:
        if line == "":
            if not self._started:
                return None
            event = SseEvent(
                self._event or "message",
                "\n".join(self._data),
                self._event_id,
                self._event_retry,
                bool(self._data),
                self._bad_utf8,
                self._named,
            )
            self._reset_event()
            self.pending_bytes = 0
            return event
        if line.startswith(":"):
            return None  # comment / keep-alive
        self._started = True
        self._raw.append(line)
        self._raw_bytes += size + 1
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
            self._named = True
        elif name == "id":
            if "\0" not in value:
                self._event_id = value
                self.last_id = value
        elif name == "retry" and value.isdigit():
            self._event_retry = int(value)
            self.retry = int(value)
        return None
