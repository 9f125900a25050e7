"""The page of matches both databases return: the newest first, older than an event id."""

from __future__ import annotations

from typing import Any

from django.db import connection

# What a backend's `find` selects, in this order: (event id, session id, seq, t, dir, method, text).
COLUMNS = "e.id, e.session_id, e.seq, e.t, e.dir, e.method"
OWNED = "JOIN transcripts_event e ON e.id = {key} JOIN transcripts_session s ON s.id = e.session_id"


def newest(
    sql: str, params: list[Any], key: str, before: int | None, limit: int, session_id: int | None = None
) -> list[tuple[Any, ...]]:
    """`sql` (matches, already kept to one owner) a page at a time by `key`, the event id; only
    session `session_id`'s if given (a session page's filter, a share page's)."""
    if session_id is not None:
        sql += " AND e.session_id = %s"
        params = [*params, session_id]
    if before is not None:
        sql += f" AND {key} < %s"
        params = [*params, before]
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY {key} DESC LIMIT %s", [*params, limit])
        return cursor.fetchall()
