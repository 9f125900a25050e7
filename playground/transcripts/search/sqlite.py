"""Search on SQLite: an FTS5 table filled after the events are saved, off the flood path.

The table's rowid is the event's id, its one column the event's searchable text (text.py).
Indexing is a separate step (`index_pending`), run by indexer.py when no flood is being
saved and by a search before it looks: indexing in the save itself (a trigger, measured)
cost the flood ~25% of its rate, the database thread being its bottleneck (bench/README.md).

What is indexed is everything up to the highest rowid of the table: SQLite has one writer at
a time and ids that only grow (AUTOINCREMENT), so an event with a lower id than an indexed
one was committed before it. Every event gets a row, if empty, so that mark moves on; a
deleted event's row goes with it (the migration's trigger), and re-indexing is idempotent.
"""
from __future__ import annotations

import functools
from typing import Any

from django.db import connection, transaction

from . import matches
from .query import Query
from .text import stored_text

TABLE = "transcripts_event_search"
CHUNK = 500                 # events indexed in one transaction (~10 ms when small: a save waits that long)
CHUNK_CHARS = 2_000_000     # ... and at most about this much stored JSON read and parsed (one 1 MB frame
                            # is ~2 MB: its raw text and its parsed message), whatever the count

_LAST = f"SELECT rowid FROM {TABLE} ORDER BY rowid DESC LIMIT 1"
# Made by migration 0008; made again after every migrate: SQLite alters a table by copying it
# into a new one and dropping the old, and the old one's triggers go with it.
DELETE_TRIGGER = (f"CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON transcripts_event BEGIN "
                  f"DELETE FROM {TABLE} WHERE rowid = old.id; END")


def _last_indexed(cursor: Any) -> int:
    cursor.execute(_LAST)
    row = cursor.fetchone()
    return row[0] if row else 0


def index_pending(limit: int = CHUNK, chars: int = CHUNK_CHARS) -> bool:
    """Index the next events not yet indexed, at most `limit` of them and about `chars`
    characters of stored JSON (at least one event); whether there were any (call again until
    not). Rows are read one at a time (SQLite steps them as they are fetched: the rest of the
    LIMIT is never read). The text is made before taking the write lock; the insert re-reads the
    mark under it, so two indexers at once (two processes) never index an event twice."""
    texts: list[tuple[int, str]] = []
    read = 0
    with connection.cursor() as cursor:
        mark = _last_indexed(cursor)
        cursor.execute("SELECT id, data FROM transcripts_event WHERE id > %s ORDER BY id LIMIT %s", [mark, limit])
        for event_id, data in cursor.cursor:            # the driver's cursor: a row stepped each time
            read += len(data) if isinstance(data, (str, bytes)) else 0
            texts.append((event_id, stored_text(data)))
            if read >= chars:
                break
    if not texts:
        return False
    with transaction.atomic(), connection.cursor() as cursor:
        mark = _last_indexed(cursor)
        values: list[Any] = []
        for event_id, text in texts:
            if event_id > mark:
                values += (event_id, text)
        if values:
            cursor.execute(_insert(len(values) // 2), values)
    return True


@functools.lru_cache(maxsize=8)
def _insert(count: int) -> str:
    return f"INSERT OR REPLACE INTO {TABLE} (rowid, body) VALUES " + ", ".join(["(%s, %s)"] * count)


def ensure_delete_trigger(using: Any = connection) -> None:
    with using.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [TABLE])
        if cursor.fetchone():
            cursor.execute(DELETE_TRIGGER)


def pending() -> int:
    """Saved events not indexed yet."""
    with connection.cursor() as cursor:
        mark = _last_indexed(cursor)
        cursor.execute("SELECT count(*) FROM transcripts_event WHERE id > %s", [mark])
        return cursor.fetchone()[0]


def find(owner_id: int, query: Query, before: int | None, limit: int) -> list[tuple[Any, ...]]:
    """(event id, session id, seq, t, dir, method, text) of the owner's newest matches, newest first.
    FTS5 walks its matches by rowid, descending: the newest are found first and LIMIT stops it."""
    return matches.newest(f"SELECT {matches.COLUMNS}, f.body FROM {TABLE} f {matches.OWNED.format(key='f.rowid')} "
                          f"WHERE {TABLE} MATCH %s AND s.owner_id = %s",
                          [query.fts5(), owner_id], "f.rowid", before, limit)
