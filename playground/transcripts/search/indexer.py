"""Indexing saved events for search, in this process, once saving pauses.

The recorder tells `saved(full)` after each batch it saved. Indexing waits until no batch was
saved for a moment (SETTLE seconds; QUIET after a full batch, a flood: the database thread is the
flood's bottleneck, bench/README.md), and at most MAX_DEFER: a session that never pauses is still
indexed, a chunk at a time. A session's ordinary traffic is indexed a moment after it happens,
not beside it: indexing after every small batch took the loop's interpreter lock from the call
being relayed (a chunk is Python work in the database thread), ~0.1-0.2 ms of every relayed call
(bench/README.md). One task per process, which ends when nothing is left; a chunk (500 events,
about 2 MB of stored JSON at most) runs in Channels' database thread like a save, so a save
waits for one chunk at most.

A search indexes what is still pending itself before it looks (search.acatch_up: a chunk per
call in the same thread, for half a second at most), so nothing is
missed when this task is behind or has not run (another process saved the events).
"""

from __future__ import annotations

import asyncio
import logging

from channels.db import database_sync_to_async
from django.db import connection

from . import postgresql, sqlite

ENGINES = {"sqlite": sqlite, "postgresql": postgresql}

log = logging.getLogger(__name__)

SETTLE = 0.2  # seconds without a saved batch before indexing
QUIET = 0.5  # seconds without a full batch before indexing
MAX_DEFER = 10.0  # seconds saving may hold indexing back


class Indexer:
    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._dirty = False
        self._busy_until = 0.0  # loop time before which saving goes on (a flood's: longer)

    def saved(self, full: bool) -> None:
        """Events were saved (`full`: a full batch, by the recorder's limits): index them once
        saving pauses."""
        if connection.vendor not in ENGINES:
            return
        loop = asyncio.get_running_loop()
        self._busy_until = max(self._busy_until, loop.time() + (QUIET if full else SETTLE))
        self._dirty = True
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._run(), name="search-indexer")

    def task(self) -> asyncio.Task[None] | None:
        """The running task, if any (for tests and the bench)."""
        return self._task

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        deferred_since: float | None = None
        while self._dirty:
            wait = self._busy_until - loop.time()
            if wait > 0:
                deferred_since = deferred_since if deferred_since is not None else loop.time()
                if loop.time() - deferred_since < MAX_DEFER:
                    await asyncio.sleep(min(wait, MAX_DEFER))
                    continue
            deferred_since = None
            self._dirty = False
            try:
                more = await database_sync_to_async(ENGINES[connection.vendor].index_pending)()
            except Exception:
                log.exception("indexing transcript events for search failed; a search will retry")
                return
            self._dirty = self._dirty or more


INDEXER = Indexer()
saved = INDEXER.saved
