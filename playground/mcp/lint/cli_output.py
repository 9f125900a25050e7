"""The CLI's output while its frames are schema-linted: each frame checked in a thread, never
on the event loop (the linter's pick / check_all / apply, as the live path does), and every
line — frames and the text written between them — written in the order it came.

Checked on the loop, a megabyte frame (up to a second of checking) held up the transport, the
timeouts and the progress of everything else. Here the tap hands frames over as they come; a
task takes what piled up, checks it in a thread, and writes it. A flood that outruns the
checking pauses the tap (the transport stops reading) until the backlog is small again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import IO

from ..events import Tap, TranscriptEvent
from .linter import FrameLinter, apply, check_all

HIGH = 10_000  # frames waiting: pause the tap
LOW = 1_000  # ... and let it go on below this


class LintedOutput:
    """Frames (`event`) and text (`out`) written in order, the frames once checked."""

    def __init__(
        self, linter: FrameLinter, tap: Tap, write_event: Callable[[TranscriptEvent], None], stream: IO[str]
    ) -> None:
        self.linter, self.tap, self.write_event, self.stream = linter, tap, write_event, stream
        self.out = _Queued(self)
        self._items: list[TranscriptEvent | str] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._paused = False
        self._task = asyncio.get_running_loop().create_task(self._run(), name="linted output")

    def event(self, event: TranscriptEvent) -> None:
        """A tap listener: the frame is checked and written in its turn."""
        if self._task.done():
            return  # (the writer failed: `close` says why)
        self._items.append(event)
        self._wake.set()
        if len(self._items) >= HIGH and not self._paused:
            self._paused = True
            self.tap.pause()

    def text(self, text: str) -> None:
        self._items.append(text)
        self._wake.set()

    async def close(self) -> None:
        """Write what is left; raises what the writer raised."""
        self._closing = True
        self._wake.set()
        await self._task

    async def _run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._items:
                    items, self._items = self._items, []
                    await self._write(items)
                    if self._paused and len(self._items) < LOW:
                        self._paused = False
                        self.tap.resume()
                if self._closing:
                    return
        finally:
            if self._paused:
                self.tap.resume()

    async def _write(self, items: list[TranscriptEvent | str]) -> None:
        picks = self.linter.pick([i for i in items if not isinstance(i, str)])
        if picks:
            reports, _ = await asyncio.to_thread(check_all, picks)
            for pick, report in zip(picks, reports):
                apply(pick, report)
        for item in items:
            if isinstance(item, str):
                self.stream.write(item)
            else:
                self.write_event(item)
        self.stream.flush()


class _Queued:
    """`out` for what else writes there (the check's rows, a replay's summary): in line behind
    the frames before it."""

    def __init__(self, output: LintedOutput) -> None:
        self.output = output

    def write(self, text: str) -> int:
        self.output.text(text)
        return len(text)

    def flush(self) -> None:
        pass
