"""Whether a view's server-sized computation runs off the database thread (the one every live
session's saves go through under daphne): the computation is made to wait until a query has
run meanwhile — in the database thread it would hold that query, and the wait runs out."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async

from playground.transcripts.models import Session

T = TypeVar("T")


async def computed_off_the_database_thread(owner: Any, name: str, request: Awaitable[T]) -> tuple[T, int]:
    """`request`'s answer, `owner.name` (the computation) held until a query (a count of the
    sessions, also returned) has run."""
    started, queried = threading.Event(), threading.Event()
    real = getattr(owner, name)

    def waiting(*args: Any) -> Any:
        started.set()
        assert queried.wait(20), f"{name} held the database thread"
        return real(*args)

    setattr(owner, name, waiting)
    try:
        task = asyncio.ensure_future(request)
        assert await asyncio.to_thread(started.wait, 20)  # the computation is under way
        count = await asyncio.wait_for(sync_to_async(Session.objects.count)(), 15)
        queried.set()
        return await asyncio.wait_for(task, 30), count
    finally:
        setattr(owner, name, real)
