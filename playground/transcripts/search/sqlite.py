"""Search on SQLite: an FTS5 table filled after the events are saved, off the flood path.

The table's rowid is the event's id; `body`, not indexed, is the event's searchable text
(text.py: the excerpt is cut from it), and `words` its words as query.py cuts them, each behind
its owner's id (query.owned), separated by spaces: FTS5's `ascii` tokenizer splits them there
and nowhere else, so a MATCH of bob's words reaches only bob's entries (migration 0011).
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
from .query import Query, index_words
from .text import stored_text

TABLE = "transcripts_event_search"
CHUNK = 500  # events indexed in one transaction (~10 ms when small: a save waits that long)
CHUNK_CHARS = 2_000_000  # ... and at most about this much stored JSON read and parsed (one 1 MB frame
# is ~2 MB: its raw text and its parsed message), whatever the count

_LAST = f"SELECT rowid FROM {TABLE} ORDER BY rowid DESC LIMIT 1"
# Made by migration 0008; made again after every migrate: SQLite alters a table by copying it
# into a new one and dropping the old, and the old one's triggers go with it.
DELETE_TRIGGER = (
    f"CREATE TRIGGER IF NOT EXISTS {TABLE}_delete AFTER DELETE ON transcripts_event BEGIN "
    f"DELETE FROM {TABLE} WHERE rowid = old.id; END"
)


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
    texts: list[tuple[int, str, str]] = []
    read = 0
    with connection.cursor() as cursor:
        mark = _last_indexed(cursor)
        cursor.execute(
            "SELECT e.id, e.data, s.owner_id FROM transcripts_event e "
            "LEFT JOIN transcripts_session s ON s.id = e.session_id "
            "WHERE e.id > %s ORDER BY e.id LIMIT %s",
            [mark, limit],
        )
        for event_id, data, owner_id in cursor.cursor:  # the driver's cursor: a row stepped each time
            read += len(data) if isinstance(data, (str, bytes)) else 0
            body = stored_text(data)
            texts.append((event_id, body, " ".join(index_words(owner_id, body))))
            if read >= chars:
                break
    if not texts:
        return False
    with transaction.atomic(), connection.cursor() as cursor:
        mark = _last_indexed(cursor)
        values: list[Any] = []
        for event_id, body, words in texts:
            if event_id > mark:
                values += (event_id, body, words)
        if values:
            cursor.execute(_insert(len(values) // 3), values)
    return True


@functools.lru_cache(maxsize=8)
def _insert(count: int) -> str:
    return f"INSERT OR REPLACE INTO {TABLE} (rowid, body, words) VALUES " + ", ".join(["(%s, %s, %s)"] * count)


def ensure_delete_trigger(using: Any = connection) -> None:
    with using.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [TABLE])
        if cursor.fetchone():
            cursor.execute(DELETE_TRIGGER)


def pending(owner_id: int | None = None) -> int:
    """Saved events not indexed yet: the owner's (what their search page tells), or everyone's."""
    with connection.cursor() as cursor:
        mark = _last_indexed(cursor)
        if owner_id is None:
            cursor.execute("SELECT count(*) FROM transcripts_event WHERE id > %s", [mark])
        else:  # the backlog's rows, each's session looked up (CROSS JOIN keeps that order):
            cursor.execute(  # not every event of the owner's sessions, which is unbounded
                "SELECT count(*) FROM transcripts_event e CROSS JOIN transcripts_session s "
                "ON s.id = e.session_id WHERE e.id > %s AND s.owner_id = %s",
                [mark, owner_id],
            )
        return cursor.fetchone()[0]


def find(
    owner_id: int, query: Query, before: int | None, limit: int, session_id: int | None = None
) -> list[tuple[Any, ...]]:
    """(event id, session id, seq, t, dir, method, text) of the owner's newest matches, newest first.
    The MATCH is of the owner's words only (query.owned): FTS5 never reads another user's entries.
    It walks its matches by rowid, descending: the newest are found first and LIMIT stops it. (The
    join still checks the session's owner: the index keeps the owner the session had when indexed.)"""
    return matches.newest(
        f"SELECT {matches.COLUMNS}, f.body FROM {TABLE} f {matches.OWNED.format(key='f.rowid')} "
        f"WHERE {TABLE} MATCH %s AND s.owner_id = %s",
        [query.fts5(owner_id), owner_id],
        "f.rowid",
        before,
        limit,
        session_id,
    )
