"""A flood must cost bounded memory: the worker pauses its tap (the transport stops reading)
while too many events wait to be saved, and resumes once they are saved."""
from __future__ import annotations

import asyncio

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


async def test_the_next_batch_is_handed_to_the_database_before_the_one_before_it_is_saved(monkeypatch):
    """Two saves in flight: while batch 1 is being written, batch 2 already waits in the
    database thread's queue (the thread no longer idles between batches of a flood). Batches are
    applied in order: removed from the buffer and shown to the pages only once saved."""
    from playground.sessions import worker as worker_module

    session = await database_sync_to_async(Session.objects.create)(server_name="two in flight")
    worker = SessionWorker(session.pk, ServerConfig(transport="stdio", command="unused"))
    for i in range(worker_module.FLUSH_MAX_EVENTS * 3):
        worker.tap.note("info", f"event {i}")
    first_may_finish = asyncio.Event()
    handed: list[int] = []
    pushed: list[int] = []
    save = database_sync_to_async(worker_module.save_events)

    async def save_in_thread(session_id: int, rows: list[dict]) -> None:
        handed.append(rows[0]["seq"])
        if len(handed) == 1:
            await first_may_finish.wait()
        await save(session_id, rows)

    async def push(rows: list[dict]) -> None:
        pushed.extend(row["seq"] for row in rows)

    monkeypatch.setattr(worker_module, "database_sync_to_async", lambda _fn: save_in_thread)
    monkeypatch.setattr(worker.window, "push", push)
    flushing = asyncio.create_task(worker._flush(drain=False))
    async with asyncio.timeout(10):
        while len(handed) < 2:
            await asyncio.sleep(0)
    batch = worker_module.FLUSH_MAX_EVENTS
    assert handed == [1, batch + 1]                  # the second handed over, the first not saved yet
    assert pushed == [] and len(worker._buffer) == batch * 3
    first_may_finish.set()
    await flushing
    assert handed == [1, batch + 1, 2 * batch + 1] and pushed == list(range(1, 3 * batch + 1))
    assert worker._buffer == [] and worker._buffer_chars == 0


async def test_a_failed_save_keeps_its_batch_and_the_next_for_a_retry(monkeypatch):
    """The first of two saves in flight fails, the second succeeds: both batches stay buffered
    and unshown; the retry saves them again (the second's rows are already there: nothing is
    doubled) and shows every event once, in order."""
    from playground.sessions import worker as worker_module

    session = await database_sync_to_async(Session.objects.create)(server_name="failed save")
    worker = SessionWorker(session.pk, ServerConfig(transport="stdio", command="unused"))
    batch = worker_module.FLUSH_MAX_EVENTS
    for i in range(batch * 2):
        worker.tap.note("info", f"event {i}")
    real = worker_module.save_events
    calls: list[int] = []

    def failing_once(session_id: int, rows: list[dict]) -> None:
        calls.append(rows[0]["seq"])
        if len(calls) == 1:
            raise RuntimeError("database is locked")
        real(session_id, rows)

    pushed: list[int] = []

    async def push(rows: list[dict]) -> None:
        pushed.extend(row["seq"] for row in rows)

    monkeypatch.setattr(worker_module, "save_events", failing_once)
    monkeypatch.setattr(worker.window, "push", push)
    with pytest.raises(RuntimeError):
        await worker._flush()
    assert len(worker._buffer) == 2 * batch and pushed == []
    await worker._flush()
    assert calls[:2] == [1, batch + 1] and pushed == list(range(1, 2 * batch + 1))
    saved = await database_sync_to_async(
        lambda: list(Event.objects.filter(session=session).order_by("seq").values_list("seq", flat=True)))()
    assert saved == list(range(1, 2 * batch + 1))
