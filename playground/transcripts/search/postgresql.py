"""Search on PostgreSQL: a table of the events' words (tsvector, GIN), filled off the flood path.

Migration 0008 made it: `transcripts_event_search` (event id, the searchable text, its words),
and a queue a statement trigger fills with what each INSERT saved (session, first and last
seq). `index_pending` takes the oldest queued ranges (FOR UPDATE SKIP LOCKED: indexers of
several processes share the work), indexes their events with text.py, and removes or
shortens them, in one transaction. A GIN index kept on insert (an expression on the event's
JSON) made the flood ~35% slower: the database thread is the flood's bottleneck.

Migration 0011 put the owner in it. Each word is kept behind its owner's id (query.owned), so
the GIN lookup of bob's words — a prefix's range among them — reaches his entries only, and the
GIN index has no pending list (`fastupdate = off`: every lookup scanned it whole, everyone's
recent entries). An `owner_id` column with a B-tree on (owner_id, event_id): the plan the
planner picks when it expects many matches (walk the newest rows, test each) walks his rows
only, where the primary key's walked everyone's newest first.

The words are those query.py cuts (runs of letters and digits, lower case), written as a
`tsvector` literal with their positions, not parsed by `to_tsvector` (PostgreSQL's parser would
keep `tools/call` or `example.com` as one token, and might split an owned word): no stemming, the
lexemes exactly the query's. The query is a `tsquery` literal of the same words (query.py).
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import connection, transaction

from . import matches
from .query import Query, index_words
from .text import stored_text

CHUNK = 500  # events indexed in one transaction
CHUNK_CHARS = 2_000_000  # ... and at most about this much stored JSON read and parsed, whatever the count
_ENTRIES = 20  # queued ranges taken at once
MAX_LEXEME_BYTES = 2046  # PostgreSQL's limit for a word in a tsvector (to_tsvector drops longer ones too)
MAX_POSITION = 16383  # ... and for a position (a TEXT_CAP text has ~2000 words at most)


def tsvector(owner_id: int | None, body: str) -> str:
    """The `tsvector` literal of an event's searchable text: its owned words at their positions.
    The words are letters and digits only, so need no quoting inside the quotes."""
    positions: dict[str, list[str]] = {}
    for position, word in enumerate(index_words(owner_id, body), start=1):
        if len(word.encode("utf-8")) <= MAX_LEXEME_BYTES:
            positions.setdefault(word, []).append(str(min(position, MAX_POSITION)))
    return " ".join(f"'{word}':{','.join(places)}" for word, places in positions.items())


def index_pending(limit: int = CHUNK, chars: int = CHUNK_CHARS) -> bool:
    """Index up to `limit` queued events and about `chars` characters of their JSON (at least
    one event); whether there was anything to do (call again until not). The events come one at
    a time from a server-side cursor, as text (what the driver would parse), so what is past the
    budget is never sent: a queue of 1 MB frames is indexed a couple at a time."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, session_id, first_seq, last_seq FROM transcripts_event_search_queue "
            "ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED",
            [_ENTRIES],
        )
        entries = cursor.fetchall()
        if not entries:
            return False
        values: list[Any] = []
        budget, read = limit, 0
        for entry_id, session_id, first, last in entries:
            if budget <= 0 or read >= chars:
                break
            cursor.execute("SELECT owner_id FROM transcripts_session WHERE id = %s", [session_id])
            owner = cursor.fetchone()
            taken, done = _take(session_id, first, last, budget, chars - read, first_of_chunk=not values)
            for event_id, _seq, text in taken:
                read += len(text)
                body = stored_text(text)
                values += (event_id, owner[0] if owner else None, body, tsvector(owner[0] if owner else None, body))
            budget -= len(taken)
            if done:
                cursor.execute("DELETE FROM transcripts_event_search_queue WHERE id = %s", [entry_id])
            elif taken:
                cursor.execute(
                    "UPDATE transcripts_event_search_queue SET first_seq = %s WHERE id = %s",
                    [taken[-1][1] + 1, entry_id],
                )
        for start in range(0, len(values), 4 * CHUNK):
            part = values[start : start + 4 * CHUNK]
            cursor.execute(_insert(len(part) // 4), part)
    return True


def _take(
    session_id: int, first: int, last: int, limit: int, chars: int, first_of_chunk: bool
) -> tuple[list[tuple[int, int, str]], bool]:
    """The events of one queued range that fit (id, seq, JSON text), and whether the range is done."""
    taken: list[tuple[int, int, str]] = []
    read = 0
    with connection.chunked_cursor() as rows:  # a named (server-side) cursor: fetched a row at a time
        rows.execute(
            "SELECT id, seq, data::text FROM transcripts_event WHERE session_id = %s "
            "AND seq BETWEEN %s AND %s ORDER BY seq LIMIT %s",
            [session_id, first, last, limit],
        )
        while len(taken) < limit and (read < chars or (first_of_chunk and not taken)):
            row = rows.fetchone()
            if row is None:
                return taken, True  # nothing left in the range
            taken.append(row)
            read += len(row[2])
    return taken, taken[-1][1] >= last


@functools.lru_cache(maxsize=8)
def _insert(count: int) -> str:
    return (
        "INSERT INTO transcripts_event_search (event_id, owner_id, body, words) VALUES "
        + ", ".join(["(%s, %s, %s, %s::tsvector)"] * count)
        + " ON CONFLICT (event_id) DO UPDATE SET owner_id = EXCLUDED.owner_id, body = EXCLUDED.body, "
        "words = EXCLUDED.words"
    )


def pending(owner_id: int | None = None) -> int:
    """Saved events not indexed yet (about: a queued range may hold fewer): the owner's (what
    their search page tells), or everyone's."""
    with connection.cursor() as cursor:
        if owner_id is None:
            cursor.execute("SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM transcripts_event_search_queue")
        else:
            cursor.execute(
                "SELECT coalesce(sum(q.last_seq - q.first_seq + 1), 0) "
                "FROM transcripts_event_search_queue q JOIN transcripts_session s ON s.id = q.session_id "
                "WHERE s.owner_id = %s",
                [owner_id],
            )
        return int(cursor.fetchone()[0])


def find(
    owner_id: int, query: Query, before: int | None, limit: int, session_id: int | None = None
) -> list[tuple[Any, ...]]:
    """(event id, session id, seq, t, dir, method, text) of the owner's newest matches, newest first:
    the owner's words (GIN) or the owner's rows newest first (B-tree), whichever the planner picks,
    never another user's. (The join still checks the session's owner: the index keeps the owner
    the session had when indexed.)"""
    return matches.newest(
        f"SELECT {matches.COLUMNS}, x.body FROM transcripts_event_search x "
        f"{matches.OWNED.format(key='x.event_id')} "
        "WHERE x.owner_id = %s AND x.words @@ %s::tsquery AND s.owner_id = %s",
        [owner_id, query.tsquery(owner_id), owner_id],
        "x.event_id",
        before,
        limit,
        session_id,
    )
