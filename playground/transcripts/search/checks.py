"""The default database needs full-text search: SQLite built with FTS5 (Python's sqlite3 usually is)."""

from __future__ import annotations

import sqlite3
from typing import Any

from django.core.checks import Error, register
from django.db import connections


@register()
def check_fts5(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    if connections["default"].vendor != "sqlite" or has_fts5():
        return []
    return [
        Error(
            "This Python's SQLite has no FTS5: searching sessions needs it.",
            hint="Use a Python whose sqlite3 module has FTS5 (most builds do), or PostgreSQL (DATABASE_URL).",
            id="playground.E010",
        )
    ]


def has_fts5() -> bool:
    try:
        sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE probe USING fts5(body)")
    except sqlite3.OperationalError:
        return False
    return True
