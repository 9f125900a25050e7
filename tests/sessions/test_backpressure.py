"""A flood must cost bounded memory: the worker pauses its tap (the transport stops reading)
while too many events wait to be saved, and resumes once they are saved."""
from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from playground.mcp.config import ServerConfig
from playground.sessions.worker import BACKLOG_HIGH, BACKLOG_LOW, SessionWorker
from playground.transcripts.models import Event, Session

pytestmark = pytest.mark.django_db(transaction=True)


async def test_worker_pauses_its_tap_while_the_backlog_is_high_and_saves_everything():
    session = await database_sync_to_async(Session.objects.create)(server_name="flood")
    worker = SessionWorker(session.pk, ServerConfig(transport="stdio", command="unused"))
    for i in range(BACKLOG_HIGH - 1):
        worker.tap.note("info", f"event {i}")
    assert not worker.tap.paused
    worker.tap.note("info", "one too many")
    assert worker.tap.paused and BACKLOG_LOW < BACKLOG_HIGH
    await worker._flush()
    assert not worker.tap.paused
    saved = await database_sync_to_async(
        lambda: list(Event.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)))()
    assert saved == list(range(1, BACKLOG_HIGH + 1))
