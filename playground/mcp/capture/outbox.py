"""Records waiting for the playground: a bounded queue in memory, then a spill file on disk.

One writer (the recorder's thread) and one reader (the uploader's). Records leave in the order
they came: the memory queue holds the oldest, the spill file the newer ones, and while the file
has any record left every new one goes after it. When the uploader has delivered the whole file
it is emptied and the memory queue takes over again. What is still here when the capture ends is
written to `<folder>/<capture>.jsonl` (the records as uploaded, one a line) for
`manage.py mcp --capture-import` to deliver.
"""

from __future__ import annotations

import collections
import os
import threading
from pathlib import Path
from typing import IO

SPILL_DIR_VAR = "PLAYGROUND_CAPTURE_SPILL_DIR"
MEMORY_LIMIT = 8 * 1024 * 1024  # bytes of records kept in memory before the file takes them
SPILL_LIMIT = 512 * 1024 * 1024  # bytes of one capture's spill file; beyond it records are dropped


def limits() -> tuple[int, int]:
    """(memory, spill file) in bytes: PLAYGROUND_CAPTURE_MEMORY_LIMIT, PLAYGROUND_CAPTURE_SPILL_LIMIT."""
    found = []
    for name, default in (("MEMORY_LIMIT", MEMORY_LIMIT), ("SPILL_LIMIT", SPILL_LIMIT)):
        try:
            found.append(int(os.environ.get(f"PLAYGROUND_CAPTURE_{name}", default)))
        except ValueError:
            found.append(default)
    return found[0], found[1]


def spill_dir() -> Path:
    """$PLAYGROUND_CAPTURE_SPILL_DIR, else $XDG_CACHE_HOME/mcp-playground/capture, else
    ~/.cache/mcp-playground/capture."""
    if os.environ.get(SPILL_DIR_VAR):
        return Path(os.environ[SPILL_DIR_VAR])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mcp-playground" / "capture"


class Outbox:
    def __init__(
        self, name: str, folder: Path | None = None, memory_limit: int = MEMORY_LIMIT, spill_limit: int = SPILL_LIMIT
    ) -> None:
        self.folder = folder or spill_dir()
        self.name = name
        self.memory_limit = memory_limit
        self.spill_limit = spill_limit
        self._memory: collections.deque[bytes] = collections.deque()
        self._memory_bytes = 0
        self._lock = threading.Lock()
        self.ready = threading.Condition(self._lock)  # notified when a record arrives
        self._file: IO[bytes] | None = None  # the working spill file, opened on first need
        self._written = 0  # bytes appended to the working file
        self._read = 0  # bytes of it delivered
        self._flushed = True
        self.spill_error: str | None = None
        self.closed = False  # persisted or discarded: a late uploader finds nothing

    # --- the recorder's side -----------------------------------------------------------------

    def accepts(self, size: int) -> bool:
        """Room for a record of about `size` bytes (memory, or the spill file)."""
        if self._written == self._read and self._memory_bytes + size <= self.memory_limit:
            return True
        return self.spill_error is None and self._written + size <= self.spill_limit

    def put(self, line: bytes, force: bool = False) -> bool:
        """Keep a record (or several, each ending in a newline). False when there is no
        room (the caller counts them lost, or tries them one by one), unless `force` (a small
        record that must not be lost: `end`, `dropped`)."""
        with self._lock:
            if self.closed:  # refused or ended: nothing more is kept
                return True
            if self._written == self._read and (force or self._memory_bytes + len(line) <= self.memory_limit):
                self._memory.append(line)
                self._memory_bytes += len(line)
            elif not self._spill(line, force):
                return False
            self.ready.notify()
        return True

    def _spill(self, line: bytes, force: bool) -> bool:
        if self.spill_error is not None or (not force and self._written + len(line) > self.spill_limit):
            return False
        try:
            if self._file is None:
                self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(self.working_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
                self._file = os.fdopen(fd, "r+b")
            file = self._file
            file.seek(self._written)
            file.write(line)
        except OSError as exc:
            self.spill_error = f"{self.working_path}: {exc.strerror or exc}"
            return False
        self._written += len(line)
        self._flushed = False
        return True

    @property
    def working_path(self) -> Path:
        return self.folder / f"{self.name}.part"

    @property
    def final_path(self) -> Path:
        return self.folder / f"{self.name}.jsonl"

    # --- the uploader's side -----------------------------------------------------------------

    def pending(self) -> bool:
        return not self.closed and (bool(self._memory) or self._written > self._read)

    def peek(self, max_bytes: int, max_records: int = 20_000) -> tuple[list[bytes], int, int]:
        """The oldest records, up to `max_bytes` (at least one): (lines, from memory, file bytes).
        They stay until `commit` with the two counts."""
        with self._lock:
            if self.closed:
                return [], 0, 0
            if self._memory:
                lines: list[bytes] = []
                size = 0
                for line in self._memory:
                    if lines and (size + len(line) > max_bytes or len(lines) >= max_records):
                        break
                    lines.append(line)
                    size += len(line)
                return lines, len(lines), 0
            if self._written == self._read:
                return [], 0, 0
            file = self._file
            assert file is not None
            if not self._flushed:
                file.flush()
                self._flushed = True
            file.seek(self._read)
            chunk = file.read(min(max_bytes, self._written - self._read))
        end = chunk.rfind(b"\n") + 1
        if end == 0:  # one record longer than max_bytes (cannot happen: records are capped)
            end = len(chunk)
        lines = chunk[:end].splitlines(keepends=True)
        return lines[:max_records], 0, sum(map(len, lines[:max_records]))

    def commit(self, from_memory: int, file_bytes: int) -> None:
        """Delivered: forget them. An emptied spill file is truncated and memory takes over."""
        with self._lock:
            if self.closed:
                return
            for _ in range(from_memory):
                self._memory_bytes -= len(self._memory.popleft())
            self._read += file_bytes
            if self._file is not None and self._read == self._written and not self._memory:
                self._file.truncate(0)
                self._read = self._written = 0

    # --- the end ------------------------------------------------------------------------------

    def discard(self) -> None:
        """Nothing will be recorded (the playground refused the token): forget it all."""
        with self._lock:
            self._memory.clear()
            self._memory_bytes = 0
            self._close(remove=True)
            self._read = self._written = 0

    def persist(self) -> tuple[Path | None, int]:
        """What is left, written in order to `final_path`: (the path, records), or (None, 0)."""
        with self._lock:
            left = list(self._memory)
            records = sum(item.count(b"\n") for item in left)
            tail_from = self._read
            has_tail = self._written > self._read
            if not left and not has_tail:
                self._close(remove=True)
                return None, 0
            try:
                self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                temporary = self.folder / f"{self.name}.jsonl.tmp"
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as out:
                    out.writelines(left)
                    if has_tail:
                        file = self._file
                        assert file is not None
                        file.flush()
                        file.seek(tail_from)
                        while block := file.read(1 << 20):
                            records += block.count(b"\n")
                            out.write(block)
                os.replace(temporary, self.final_path)
            except OSError as exc:
                self.spill_error = f"{self.final_path}: {exc.strerror or exc}"
                return None, records
            self._close(remove=True)
            return self.final_path, records

    def _close(self, remove: bool) -> None:
        self.closed = True
        if self._file is not None:
            self._file.close()
            self._file = None
            if remove:
                try:
                    self.working_path.unlink()
                except OSError:
                    pass
