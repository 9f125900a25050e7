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


async def test_worker_pauses_its_tap_on_unsaved_megabytes_and_batches_stay_bounded(monkeypatch):
    """Big frames pause reading long before 2,000 of them are held; each insert carries at most
    BATCH_CHARS of them (here scaled down), and everything is saved in order."""
    from playground.sessions import worker as worker_module

    monkeypatch.setattr(worker_module, "BATCH_CHARS", 100_000)
    monkeypatch.setattr(worker_module, "BACKLOG_CHARS", 400_000)
    session = await database_sync_to_async(Session.objects.create)(server_name="big frames")
    worker = SessionWorker(session.pk, ServerConfig(transport="stdio", command="unused"))
    batches: list[int] = []
    save = worker_module.save_events
    monkeypatch.setattr(worker_module, "save_events", lambda sid, rows: batches.append(len(rows)) or save(sid, rows))
    sent = 0
    while not worker.tap.paused:
        worker.tap.note("info", "x" * 30_000)            # 30,000 characters each
        sent += 1
    assert sent == 14 and len(worker._buffer) < BACKLOG_HIGH   # 400,000 characters, not 2,000 events
    await worker._flush()
    assert not worker.tap.paused and worker._buffer_chars == 0
    assert batches == [4, 4, 4, 2]                             # 100,000 characters reached by the 4th
    saved = await database_sync_to_async(
        lambda: list(Event.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)))()
    assert saved == list(range(1, sent + 1))


def test_save_events_spans_several_statements_and_saving_again_changes_nothing():
    """A batch is inserted INSERT_ROWS rows a statement: more rows than that are all saved, in
    order, with their JSON text intact; a batch saved again (its save interrupted after the
    commit) adds nothing and keeps the first text."""
    from playground.sessions import worker as worker_module

    count = worker_module.INSERT_ROWS * 2 + 7
    session = Session.objects.create(server_name="many rows")
    rows = [{"seq": i, "t": i / 1000, "dir": "recv", "raw": f'{{"n":{i},"é":"\\u00e9"}}',
             "message": {"n": i, "é": "é"}} for i in range(1, count + 1)]
    worker_module.save_events(session.pk, rows)
    again = [dict(row, raw="changed") for row in rows[-10:]]
    worker_module.save_events(session.pk, again)
    saved = list(Event.objects.filter(session=session).order_by("seq").values_list("seq", "method", "data"))
    assert [seq for seq, _, _ in saved] == list(range(1, count + 1))
    assert [data for _, _, data in saved] == rows
    session.refresh_from_db()
    assert session.event_count == count
