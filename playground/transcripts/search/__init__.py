"""Search across a person's own saved sessions: methods, names, message text, stderr.

SQLite uses an FTS5 table (sqlite.py), PostgreSQL a tsvector table with a GIN index
(postgresql.py), both filled after the events are saved, off the flood path (indexer.py). Both
take the same words of an event (text.py) and the same query (query.py: words, quoted
phrases, prefixes; never database syntax). Results are the newest matches first, a page at a
time, only ever from sessions the person owns, each with an excerpt escaped before its
matches are marked and masked of the session's OAuth values as the owner's pages are. The owner
is in both indexes (query.owned): a query reads the person's own entries only, and the backlog
a page reports ("not searchable yet") is the person's own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import ModuleType
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connection
from django.utils.safestring import SafeString

from playground.mcp.secrets import Redactor

from ..models import Session
from .indexer import ENGINES
from .query import MAX_QUERY, Query, parse_query

__all__ = [
    "MAX_QUERY",
    "PAGE",
    "SHARE_CATCH_UPS",
    "Every",
    "Hit",
    "Results",
    "SessionHits",
    "acatch_up",
    "asearch",
    "asearch_session",
    "catch_up",
    "engine",
    "search",
]

PAGE = 50
CATCH_UP_SECONDS = 0.5  # indexing a search may do first (what the background indexer has not done yet)
SHARE_CATCH_UP_EVERY = 5.0  # seconds: how often a share's filter may index the owner's backlog first
_LABELS = {"stderr": "stderr", "note": "note"}


class Every:
    """Whether a key's turn has come: at most once per `interval` seconds for each key. A share's
    viewer does not own the backlog a catch-up indexes (the owner's, everyone's on SQLite): typing
    in its filter must not make the server index it again on every keystroke."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._last: dict[Any, float] = {}

    def due(self, key: Any) -> bool:
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            return False
        if len(self._last) > 1000:  # (keys whose turn has come again are forgotten)
            self._last = {k: t for k, t in self._last.items() if now - t < self.interval}
        self._last[key] = now  # taken before the catch-up: a request meanwhile does not start another
        return True


SHARE_CATCH_UPS = Every(SHARE_CATCH_UP_EVERY)  # per share link, in this process


@dataclass(frozen=True)
class Hit:
    event_id: int
    seq: int
    dir: str
    label: str  # the method, or what the line is (response, stderr, note)
    at: datetime
    excerpt: SafeString


@dataclass
class SessionHits:
    """Consecutive hits in one session (the newest first)."""

    session: Session
    hits: list[Hit] = field(default_factory=list)


@dataclass
class Results:
    query: Query
    groups: list[SessionHits] = field(default_factory=list)
    more_before: int | None = None  # the next page: hits older than this event id
    pending: int = 0  # the person's saved events not searchable yet (a flood was just saved)
    available: bool = True  # False on a database without full-text search here


def engine() -> ModuleType | None:
    return ENGINES.get(connection.vendor)


def catch_up(budget: float | None = None, owner_id: int | None = None) -> int:
    """Index what is pending, for `budget` seconds at most (CATCH_UP_SECONDS); how many events are
    left: `owner_id`'s (what a search tells that person), or everyone's. For sync callers that own
    their thread (the management command, tests)."""
    backend = engine()
    if backend is None:
        return 0
    deadline = time.monotonic() + (CATCH_UP_SECONDS if budget is None else budget)
    while backend.index_pending():
        if time.monotonic() > deadline:
            return int(backend.pending(owner_id))
    return 0


async def acatch_up(budget: float | None = None, owner_id: int | None = None) -> int:
    """`catch_up` for async code (the search page): each chunk is its own short call in the
    database thread — the one every live session's saves use — so saves go in between."""
    backend = engine()
    if backend is None:
        return 0
    deadline = time.monotonic() + (CATCH_UP_SECONDS if budget is None else budget)
    while await sync_to_async(backend.index_pending)():
        if time.monotonic() > deadline:
            return int(await sync_to_async(backend.pending)(owner_id))
    return 0


def search(user: Any, text: str, before: int | None = None, page: int = PAGE) -> Results:
    """The page of `user`'s own events matching `text`, older than event `before` if given."""
    query = parse_query(text)
    if engine() is None:
        return Results(query, available=False)
    if not query or not getattr(user, "is_authenticated", False):
        return Results(query)
    return _page(user.pk, query, before, page, catch_up(owner_id=user.pk))


async def asearch(user: Any, text: str, before: int | None = None, page: int = PAGE) -> Results:
    """`search` for async code: indexing what is pending in short calls (acatch_up) first."""
    query = parse_query(text)
    if engine() is None:
        return Results(query, available=False)
    if not query or not getattr(user, "is_authenticated", False):
        return Results(query)
    return await sync_to_async(_page)(user.pk, query, before, page, await acatch_up(owner_id=user.pk))


async def asearch_session(
    session: Session,
    text: str,
    before: int | None = None,
    redactor: Redactor | None = None,
    page: int = PAGE,
    *,
    catch_up: bool = True,
) -> Results:
    """One session's events matching `text` (the transcript's filter, on the owner's session page
    and on a share page): the owner's index entries, kept to that session; excerpts masked by
    `redactor` (a share's), by the owner's otherwise. The caller has checked who may read it.
    Without `catch_up` (a share's filter between its turns, SHARE_CATCH_UPS) it reads what is
    indexed and reports what is not yet."""
    query = parse_query(text)
    backend = engine()
    if backend is None:
        return Results(query, available=False)
    if not query or session.owner_id is None:
        return Results(query)
    if catch_up:
        pending = await acatch_up(owner_id=session.owner_id)
    else:
        pending = int(await sync_to_async(backend.pending)(session.owner_id))
    return await sync_to_async(_page)(session.owner_id, query, before, page, pending, session, redactor)


def _page(
    owner_id: int,
    query: Query,
    before: int | None,
    page: int,
    pending: int,
    only: Session | None = None,
    redactor: Redactor | None = None,
) -> Results:
    backend = engine()
    assert backend is not None
    rows = backend.find(owner_id, query, before, page + 1, only.pk if only is not None else None)
    results = Results(query, pending=pending)
    if len(rows) > page:
        rows = rows[:page]
        results.more_before = rows[-1][0]
    if only is not None:
        sessions = {only.pk: only}
    else:
        sessions = Session.objects.filter(owner_id=owner_id).in_bulk({row[1] for row in rows})
    redactors = {pk: redactor or session.owner_redactor() for pk, session in sessions.items()}
    for event_id, session_id, seq, t, dir_, method, body in rows:
        session = sessions.get(session_id)
        if session is None:  # (find already keeps to the owner's sessions)
            continue
        hit = Hit(
            event_id=event_id,
            seq=seq,
            dir=dir_,
            label=method or _LABELS.get(dir_, "response"),
            at=session.time_zero + timedelta(seconds=t or 0),
            excerpt=query.excerpt(redactors[session_id].text(body or "")),
        )
        if not results.groups or results.groups[-1].session.pk != session_id:
            results.groups.append(SessionHits(session))
        results.groups[-1].hits.append(hit)
    return results
