"""The save pipeline of a live session's transcript: buffer, batches, back-pressure.

The database is the truth for a transcript: the worker's tap hands every event here; events
are saved in batches first, and only the saved rows go on (`on_saved`: the pages' lines), so a
viewer that missed a group message replays them by sequence number.

- Batches: up to `Limits.batch_events` events or `batch_chars` characters of recorded text,
  gathered for `window` seconds after the first event of a burst (one insert and one group
  message instead of hundreds). While a trickle goes on (a stream of calls: more arrived while a
  batch gathered and saved, fewer than a flood brings), each batch gathers twice as long as the
  one before, up to `stream_window`: a save, its hops to the database thread and back and the
  lines it shows took ~2 ms of the process every 20 ms, and a call whose answer came meanwhile
  waited for them (one call in five of a stream, 1.3-1.8 ms longer each). A lone event, the
  first after a pause and a flood's last ones are shown within `window` as before.
- Back-pressure: past `backlog_high` unsaved events (or `backlog_chars` characters), the tap
  is paused (the transport stops reading, the server blocks on its pipe); reading resumes as
  soon as one batch is saved, so reading and saving overlap. A flood costs bounded memory
  instead of queuing every event (20,000 of them grew the process by ~30 MB).
- Two saves in flight: the next full batch waits in the database thread's queue while the one
  before it is written (with one, the thread idled between batches until the event loop, busy
  reading a flood, got round to handing it the next: ~40% of a flood). Batches are applied
  (removed from the buffer, shown) in order; a failed save leaves its batch and the ones after
  it buffered, to be saved again (saving is idempotent).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.db import connection, transaction

from playground.mcp import jsontext
from playground.mcp.events import ON_PURPOSE, EventRow, TranscriptEvent

from .models import Event, Session
from .search import indexer as search_indexer
from .storable import storable_row

log = logging.getLogger(__name__)

Rows = list[EventRow]
SaveFn = Callable[[int, Rows], Awaitable[None]]
# Runs on each batch's events before their rows are made and saved (the schema lint puts its
# findings on them): what a check adds is in the database, the export and the page's lines alike.
CheckFn = Callable[[list[TranscriptEvent]], Awaitable[None]]


@dataclass(frozen=True)
class Limits:
    batch_events: int = 500  # one database batch at most
    window: float = 0.02  # seconds to gather more events once one arrived
    stream_window: float = 0.1  # ...growing up to this while they keep coming (see above)
    backlog_high: int = 4 * 500  # unsaved events that pause reading...
    backlog_low: int = 3 * 500  # ...and below which it resumes
    # The same in characters of recorded text (a frame is recorded up to PLAYGROUND_MAX_FRAME_BYTES):
    # 2,000 unsaved events of a megabyte each would be gigabytes; one insert never carries
    # hundreds of megabytes.
    batch_chars: int = 8 * 1024 * 1024
    backlog_chars: int = 4 * 8 * 1024 * 1024


def chars(event: TranscriptEvent) -> int:
    """What an unsaved event weighs: its recorded text (the parsed message is of the same order)."""
    return len(event.raw or event.text or "")


class Recorder:
    def __init__(
        self,
        session_id: int,
        *,
        on_saved: Callable[[Rows], Awaitable[None]],
        pause: Callable[[], None],
        resume: Callable[[], None],
        save: SaveFn | None = None,
        limits: Limits = Limits(),
    ) -> None:
        self.session_id = session_id
        self.on_saved = on_saved
        self.pause, self.resume = pause, resume
        self.save: SaveFn = save or functools.partial(save_and_index, limits=limits)
        self.limits = limits
        self._high, self._high_chars = limits.backlog_high, limits.backlog_chars
        self.checks: list[CheckFn] = []
        self.buffer: list[TranscriptEvent] = []
        self.buffer_chars = 0  # recorded text held in `buffer`
        self._buffered = asyncio.Event()
        self.gathering = limits.window  # how long the next batch gathers (`run`)

    def add(self, event: TranscriptEvent) -> None:
        """The tap's listener: keep the event; pause reading while too much waits."""
        buffer = self.buffer
        buffer.append(event)
        self.buffer_chars += len(event.raw or event.text or "")  # chars(event), inline: once a frame
        self._buffered.set()
        if len(buffer) >= self._high or self.buffer_chars >= self._high_chars:
            self.pause()

    def _full_batch_waits(self, start: int = 0, start_chars: int = 0) -> bool:
        """Whether a full batch is buffered beyond the first `start` events (`start_chars` of text)."""
        return (
            len(self.buffer) - start >= self.limits.batch_events
            or self.buffer_chars - start_chars >= self.limits.batch_chars
        )

    def _next_batch(self, start: int = 0) -> list[TranscriptEvent]:
        """The oldest buffered events from `start` on, up to a batch's events and characters (one at least)."""
        size, weight = 0, 0
        for event in self.buffer[start : start + self.limits.batch_events]:
            weight += chars(event)
            size += 1
            if weight >= self.limits.batch_chars:
                break
        return self.buffer[start : start + size]

    async def run(self, stopping: asyncio.Event) -> None:
        """Save as events come, until cancelled. Once `stopping` is set, nothing waits for a burst."""
        while True:
            await self._buffered.wait()
            # Gather a burst into one batch: one insert and one group message instead of hundreds.
            gathered = 0  # (a full batch waiting: a flood, saved at once)
            if not self._full_batch_waits():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stopping.wait(), self.gathering)
                gathered = len(self.buffer)
            try:
                await self.flush(drain=False)
            except Exception:
                # The batch went back into the buffer; wait a little and try again rather than lose it.
                log.exception("saving transcript events failed; retrying")
                await asyncio.sleep(0.5)
            # A trickle that goes on (more came while it gathered and saved, fewer than a flood
            # brings: a stream of calls) gathers longer next time; a flood, or a pause, starts again
            # at `window` (a flood's last events are shown as promptly as before).
            trickle = 0 < gathered < self.limits.batch_events // 5 and self._buffered.is_set()
            self.gathering = min(self.gathering * 2, self.limits.stream_window) if trickle else self.limits.window

    async def flush(self, drain: bool = True) -> None:
        """Save buffered events, then hand them on. A failed save keeps them buffered.

        Without `drain`, it stops once less than a full batch is left: what arrived during a save
        waits for the next window with the events after it (saving it at once made a batch of a
        row or two per save, back to back: the database thread never idled during a stream of calls)."""
        # (events of the batch, their recorded text, the save, giving the rows saved): a batch is
        # the first len(events) events of the buffer
        in_flight: collections.deque[tuple[list[TranscriptEvent], int, asyncio.Future[Rows]]] = collections.deque()
        queued = queued_chars = 0  # buffered events (and their text) handed to a save
        limits = self.limits
        try:
            while True:
                while (
                    len(in_flight) < 2
                    and queued < len(self.buffer)
                    and (not in_flight or drain or self._full_batch_waits(queued, queued_chars))
                ):
                    batch = self._next_batch(queued)
                    weight = sum(chars(event) for event in batch)
                    saving: asyncio.Future[Rows] = asyncio.ensure_future(self._save_batch(batch))
                    in_flight.append((batch, weight, saving))
                    queued, queued_chars = queued + len(batch), queued_chars + weight
                if not in_flight:
                    break
                batch, weight, saving = in_flight[0]
                rows = await saving
                in_flight.popleft()
                queued, queued_chars = queued - len(batch), queued_chars - weight
                del self.buffer[: len(batch)]
                self.buffer_chars -= weight
                if (
                    len(self.buffer) <= limits.backlog_low
                    and self.buffer_chars <= limits.backlog_chars - limits.batch_chars
                ):
                    self.resume()
                # Saved first, shown after (the database is the truth a reloading tab replays).
                await self.on_saved(rows)
                if not in_flight and not drain and not self._full_batch_waits():
                    break
        finally:
            for _batch, _weight, saving in in_flight:  # left behind by a failure: finish unobserved
                saving.add_done_callback(_ignore_outcome)
        if not self.buffer:
            self._buffered.clear()

    async def _save_batch(self, batch: list[TranscriptEvent]) -> Rows:
        """Check the events (a check that fails is logged, never stops the save), then save their rows."""
        for check in self.checks:
            try:
                await check(batch)
            except Exception:
                log.exception("checking transcript events failed; saving them unchecked")
        rows = [event.to_dict() for event in batch]
        await self.save(self.session_id, rows)
        return rows

    async def final_flush(self, attempts: int = 5) -> None:
        """The session is ending: save what is left, trying a few times."""
        for attempt in range(attempts):
            try:
                await self.flush()
                return
            except Exception:
                log.exception("final transcript flush failed (attempt %d)", attempt + 1)
                await asyncio.sleep(0.2 * (attempt + 1))


async def save_and_index(session_id: int, rows: Rows, limits: Limits = Limits()) -> None:
    """The save, then the search index told: it indexes the rows once no flood is being saved.
    A full batch (as `Recorder._next_batch` cuts them: its events or its characters) is a flood."""
    await database_sync_to_async(save_events)(session_id, rows)
    full = (
        len(rows) >= limits.batch_events
        or sum(len(row.get("raw") or row.get("text") or "") for row in rows) >= limits.batch_chars
    )
    search_indexer.saved(full)


def _ignore_outcome(future: asyncio.Future[Any]) -> None:
    """A save left running when its batch's turn failed: it is done again later (idempotent)."""
    if not future.cancelled():
        future.exception()


def _method(row: Mapping[str, Any]) -> str:
    message = row.get("message")
    method = message.get("method") if isinstance(message, dict) else None
    return method[:200] if isinstance(method, str) else ""


def save_events(session_id: int, rows: Rows) -> None:
    """One transaction: the rows, then the session's event count (and its schema problems:
    those of the rows this save inserted, so a batch saved again counts nothing twice).
    Idempotent: a batch whose save was interrupted may be saved again. `data` is the row's JSON
    text, as the JSONField would store it (jsonb on PostgreSQL). A row that cannot be encoded
    is saved as `encodable` makes it: one frame never stops a batch. The ORM's bulk_create
    built a model instance and compiled every field of every row; see `_insert_values` (SQLite)
    and `_insert_copied` (PostgreSQL) for what runs instead."""
    encoded = [_encoded(row) for row in rows]
    postgresql = connection.vendor == "postgresql"
    if postgresql:
        encoded = [storable_row(row, text) for row, text in encoded]
    stored, texts = [row for row, _ in encoded], [text for _, text in encoded]
    with transaction.atomic(), connection.cursor() as cursor:
        insert = _insert_copied if postgresql else _insert_values
        problems = insert(cursor, session_id, stored, texts)
        if problems:
            cursor.execute(_COUNT_EVENTS_AND_PROBLEMS, [stored[-1]["seq"], problems, session_id])
        else:
            cursor.execute(_COUNT_EVENTS, [stored[-1]["seq"], session_id])  # (the ORM compiled it every batch)


def _insert_values(cursor: Any, session_id: int, stored: list[Mapping[str, Any]], texts: list[str]) -> int:
    """Multi-row INSERT ... VALUES (...), (...) ON CONFLICT DO NOTHING statements; the schema
    problems of the rows it inserted. Not executemany: SQLite's driver releases the GIL around
    each statement's step and takes it back after, so executemany waited for the event loop's
    thread once a row (up to its 5 ms switch interval when the loop is busy, as in a flood: ~780
    us a row against a busy thread, ~37 us a row with one statement per 500). One statement also
    steps once, ~40% less time a row without contention."""
    values: list[Any] = []
    flagged: list[Any] = []  # rows with schema problems (few): inserted apart, to count them once
    for row, data in zip(stored, texts):
        values_of = flagged if "schema_problems" in row else values
        values_of += (session_id, row["seq"], row["t"], row["dir"], _method(row), data)
    step = INSERT_ROWS * _EVENT_COLUMNS
    execute = _executor(cursor)
    for start in range(0, len(values), step):
        part = values[start : start + step]
        execute(_insert_events(len(part) // _EVENT_COLUMNS), part)
    problems = 0
    if flagged:
        counts = {row["seq"]: _problem_count(row) for row in stored if "schema_problems" in row}
        for start in range(0, len(flagged), step):
            part = flagged[start : start + step]
            execute(_insert_events(len(part) // _EVENT_COLUMNS, " RETURNING seq"), part)
            problems += sum(counts.get(seq, 0) for (seq,) in cursor.fetchall())  # new rows only
    return problems


# PostgreSQL: the rows are copied into a temporary table of the connection, then inserted from it.
_STAGE = "transcripts_event_in"
_CREATE_STAGE = (
    f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGE} "
    "(session_id integer, seq integer, t double precision, dir varchar(8), method varchar(200), data jsonb) "
    "ON COMMIT DELETE ROWS"
)
_COPY_TO_STAGE = f"COPY {_STAGE} (session_id, seq, t, dir, method, data) FROM STDIN"
_INSERT_FROM_STAGE = (
    f"INSERT INTO {Event._meta.db_table} (session_id, seq, t, dir, method, data) "
    f"SELECT session_id, seq, t, dir, method, data FROM {_STAGE} ON CONFLICT (session_id, seq) DO NOTHING"
)


def _insert_copied(cursor: Any, session_id: int, stored: list[Mapping[str, Any]], texts: list[str]) -> int:
    """PostgreSQL: the rows COPYed into a temporary table, then one INSERT ... SELECT ... ON
    CONFLICT DO NOTHING from it (COPY has no ON CONFLICT); the schema problems of the rows it
    inserted. A 500-row INSERT ... VALUES took ~25 us of this process's CPU a row (psycopg split
    the 3,000-placeholder statement with a regular expression and quoted every value, in Python,
    holding the interpreter lock the event loop needs in a flood); COPY takes ~4 (psycopg's C
    row formatting). The table lives as long as its connection and is emptied as each transaction
    commits (truncated in place: a DELETE left dead rows that no autovacuum of a temporary table
    clears, and each save scanned more of them). Inside a longer transaction (a test's) rows
    staged before are there again: already inserted, they conflict and count for nothing."""
    flagged = {row["seq"]: _problem_count(row) for row in stored if "schema_problems" in row}
    raw = cursor.cursor  # (psycopg's: Django's wrapper has no copy)
    with connection.wrap_database_errors:
        raw.execute(_CREATE_STAGE)
        with raw.copy(_COPY_TO_STAGE) as copy:
            for row, text in zip(stored, texts):
                copy.write_row((session_id, row["seq"], row["t"], row["dir"], _method(row), text))
        raw.execute(_INSERT_FROM_STAGE + (" RETURNING seq" if flagged else ""))
        problems = sum(flagged.get(seq, 0) for (seq,) in raw.fetchall()) if flagged else 0  # new rows only
    return problems


def _problem_count(row: Mapping[str, Any]) -> int:
    """The schema problems a row counts for: none when its frame was sent invalid on purpose."""
    problems, lint = row.get("schema_problems"), row.get("schema_lint")
    if isinstance(lint, dict) and lint.get(ON_PURPOSE):
        return 0
    return len(problems) if isinstance(problems, list) else 0


def _encoded(row: EventRow) -> tuple[Mapping[str, Any], str]:
    try:
        return row, jsontext.dumps(row)
    except (RecursionError, ValueError, TypeError) as exc:
        kept = encodable(row, exc)
        return kept, jsontext.dumps(kept)


def encodable(row: Mapping[str, Any], exc: BaseException) -> dict[str, Any]:
    """`row` without the parts that cannot be encoded (a parsed message nested deeper than any
    encoder goes: 1,800 levels), a problem saying so: the raw text, recorded as it came, stays."""
    reason = "nested too deep" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"[:200]
    kept: dict[str, Any] = {}
    for key, value in row.items():
        try:
            jsontext.dumps(value)
        except (RecursionError, ValueError, TypeError):
            continue
        kept[key] = value
    if "message" in row:
        kept["message"] = None
    problems = kept.get("problems")
    problems = problems if isinstance(problems, list) else []
    kept["problems"] = [*problems, f"stored from its raw text: the parsed frame could not be encoded again ({reason})"]
    return kept


# Rows per INSERT statement: 3,000 parameters, under SQLite's and PostgreSQL's limits.
INSERT_ROWS = 500
_EVENT_COLUMNS = 6


@functools.lru_cache(maxsize=64)
def _insert_events(count: int, returning: str = "") -> str:
    """The INSERT of `count` rows (cached: a flood's batches are mostly of one size)."""
    return (
        f"INSERT INTO {Event._meta.db_table} (session_id, seq, t, dir, method, data) VALUES "
        + ", ".join(["(%s, %s, %s, %s, %s, %s)"] * count)
        + " ON CONFLICT (session_id, seq) DO NOTHING"
        + returning
    )


@functools.lru_cache(maxsize=64)
def _qmark(sql: str) -> str:
    """`sql` (%s placeholders, no literal %) in SQLite's own placeholders."""
    return sql.replace("%s", "?")


def _executor(cursor: Any) -> Callable[[str, list[Any]], None]:
    """How save_events runs its INSERTs on `cursor`. On SQLite, with the statement already in
    SQLite's placeholders: Django's cursor rewrites %s to ? with a regular expression on every
    execute, ~1 us a row of a 500-row INSERT (3,000 placeholders), in the database thread but
    holding the interpreter lock the event loop needs in a flood. Errors are Django's as before."""
    if connection.vendor != "sqlite":
        return cursor.execute
    raw = cursor.cursor  # (Django's SQLiteCursorWrapper: a sqlite3.Cursor)

    def execute(sql: str, params: list[Any]) -> None:
        with connection.wrap_database_errors:
            sqlite3.Cursor.execute(raw, _qmark(sql), params)

    return execute


_COUNT_EVENTS = f"UPDATE {Session._meta.db_table} SET event_count = %s WHERE id = %s"
_COUNT_EVENTS_AND_PROBLEMS = (
    f"UPDATE {Session._meta.db_table} SET event_count = %s, schema_problems = schema_problems + %s WHERE id = %s"
)
