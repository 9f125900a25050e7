"""Make every saved event searchable now: after upgrading a database that holds many sessions
(the app indexes in the background after saves, and a search catches up for a second at most)."""

from __future__ import annotations

import math
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from playground.transcripts.search import catch_up, engine


class Command(BaseCommand):
    help = "Index every saved transcript event that is not searchable yet."

    def handle(self, *args: Any, **options: Any) -> None:
        backend = engine()
        if backend is None:
            raise CommandError("Search needs SQLite (with FTS5) or PostgreSQL; this database is neither.")
        pending, started = backend.pending(), time.monotonic()
        catch_up(budget=math.inf)
        self.stdout.write(
            f"Indexed {pending} event{'s' if pending != 1 else ''} in {time.monotonic() - started:.1f} s."
        )
