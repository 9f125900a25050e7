"""The transcript's save pipeline (transcripts.recorder): a flood costs bounded memory (the tap
is paused while too many events wait to be saved, and resumes once they are), batches stay
bounded, two saves are in flight, and a failed save loses nothing."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from channels.db import database_sync_to_async
from django.db import IntegrityError

from playground.mcp.config import ServerConfig
from playground.mcp.events import Tap
from playground.sessions.live.worker import SessionWorker
from playground.transcripts import recorder as recorder_module
from playground.transcripts.models import Event, Session
from playground.transcripts.recorder import Limits, Recorder, save_events

pytestmark = pytest.mark.django_db(transaction=True)


def _recorder(
    session_id: int, limits: Limits = Limits(), save=None, pushed: list[int] | None = None
) -> tuple[Tap, Recorder]:
    """A tap feeding a recorder, as the worker wires them; `pushed` collects the shown seqs."""
    tap = Tap()

    async def on_saved(rows: list[dict]) -> None:
        if pushed is not None:
            pushed.extend(row["seq"] for row in rows)

    recorder = Recorder(session_id, on_saved=on_saved, pause=tap.pause, resume=tap.resume, save=save, limits=limits)
    tap.subscribe(recorder.add)
    return tap, recorder


def _saved(session: Session) -> list[int]:
    return list(Event.objects.filter(session=session).order_by("seq").values_list("seq", flat=True))


async def test_the_worker_pauses_its_tap_while_the_backlog_is_high_and_saves_everything():
    session = await database_sync_to_async(Session.objects.create)(server_name="flood")
    worker = SessionWorker(session.pk, ServerConfig(transport="stdio", command="unused"))
    high = worker.recorder.limits.backlog_high
    for i in range(high - 1):
        worker.tap.note("info", f"event {i}")
    assert not worker.tap.paused
    worker.tap.note("info", "one too many")
    assert worker.tap.paused and worker.recorder.limits.backlog_low < high
    await worker.recorder.flush()
    assert not worker.tap.paused
    assert await database_sync_to_async(_saved)(session) == list(range(1, high + 1))


async def test_unsaved_megabytes_pause_reading_and_batches_stay_bounded():
    """Big frames pause reading long before 2,000 of them are held; each insert carries at most
    `batch_chars` of them (here scaled down), and everything is saved in order."""
    session = await database_sync_to_async(Session.objects.create)(server_name="big frames")
    batches: list[int] = []
    save = database_sync_to_async(save_events)

    async def counting(sid: int, rows: list[dict]) -> None:
        batches.append(len(rows))
        await save(sid, rows)

    tap, recorder = _recorder(
        session.pk, dataclasses.replace(Limits(), batch_chars=100_000, backlog_chars=400_000), save=counting
    )
    sent = 0
    while not tap.paused:
        tap.note("info", "x" * 30_000)  # 30,000 characters each
        sent += 1
    assert sent == 14 and len(recorder.buffer) < recorder.limits.backlog_high  # 400,000 characters, not 2,000 events
    await recorder.flush()
    assert not tap.paused and recorder.buffer_chars == 0
    assert batches == [4, 4, 4, 2]  # 100,000 characters reached by the 4th
    assert await database_sync_to_async(_saved)(session) == list(range(1, sent + 1))


def test_save_events_spans_several_statements_and_saving_again_changes_nothing():
    """A batch is inserted INSERT_ROWS rows a statement: more rows than that are all saved, in
    order, with their JSON text intact; a batch saved again (its save interrupted after the
    commit) adds nothing and keeps the first text."""
    count = recorder_module.INSERT_ROWS * 2 + 7
    session = Session.objects.create(server_name="many rows")
    rows = [
        {"seq": i, "t": i / 1000, "dir": "recv", "raw": f'{{"n":{i},"é":"\\u00e9"}}', "message": {"n": i, "é": "é"}}
        for i in range(1, count + 1)
    ]
    save_events(session.pk, rows)
    again = [dict(row, raw="changed") for row in rows[-10:]]
    save_events(session.pk, again)
    saved = list(Event.objects.filter(session=session).order_by("seq").values_list("seq", "method", "data"))
    assert [seq for seq, _, _ in saved] == list(range(1, count + 1))
    assert [data for _, _, data in saved] == rows
    session.refresh_from_db()
    assert session.event_count == count


def test_a_save_that_fails_saves_nothing_and_the_next_one_saves():
    """A row of a session that is not there fails the save as a whole (the foreign key, at the
    commit). On PostgreSQL (tests/search/test_postgresql.py runs this too) the rows go through a
    temporary table of the connection, made in the save's transaction: the next save, on the
    same connection, makes it again."""
    session = Session.objects.create(server_name="after a failure")
    missing = session.pk + 1000
    rows = [{"seq": 1, "t": 0.0, "dir": "recv", "raw": "{}", "message": {}}]
    with pytest.raises(IntegrityError):
        save_events(missing, rows)
    assert not Event.objects.filter(session_id=missing).exists()
    save_events(session.pk, rows)
    save_events(session.pk, [*rows, {"seq": 2, "t": 0.1, "dir": "send", "raw": "[]", "message": []}])
    assert list(Event.objects.filter(session=session).order_by("seq").values_list("seq", "data")) == [
        (1, rows[0]),
        (2, {"seq": 2, "t": 0.1, "dir": "send", "raw": "[]", "message": []}),
    ]


async def test_the_next_batch_is_handed_to_the_database_before_the_one_before_it_is_saved():
    """Two saves in flight: while batch 1 is being written, batch 2 already waits in the
    database thread's queue (the thread no longer idles between batches of a flood). Batches are
    applied in order: removed from the buffer and shown to the pages only once saved."""
    session = await database_sync_to_async(Session.objects.create)(server_name="two in flight")
    first_may_finish = asyncio.Event()
    handed: list[int] = []
    pushed: list[int] = []
    save = database_sync_to_async(save_events)

    async def save_in_thread(session_id: int, rows: list[dict]) -> None:
        handed.append(rows[0]["seq"])
        if len(handed) == 1:
            await first_may_finish.wait()
        await save(session_id, rows)

    tap, recorder = _recorder(session.pk, save=save_in_thread, pushed=pushed)
    batch = recorder.limits.batch_events
    for i in range(batch * 3):
        tap.note("info", f"event {i}")
    flushing = asyncio.create_task(recorder.flush(drain=False))
    async with asyncio.timeout(10):
        while len(handed) < 2:
            await asyncio.sleep(0)
    assert handed == [1, batch + 1]  # the second handed over, the first not saved yet
    assert pushed == [] and len(recorder.buffer) == batch * 3
    first_may_finish.set()
    await flushing
    assert handed == [1, batch + 1, 2 * batch + 1] and pushed == list(range(1, 3 * batch + 1))
    assert recorder.buffer == [] and recorder.buffer_chars == 0


async def test_a_failed_save_keeps_its_batch_and_the_next_for_a_retry():
    """The first of two saves in flight fails, the second succeeds: both batches stay buffered
    and unshown; the retry saves them again (the second's rows are already there: nothing is
    doubled) and shows every event once, in order."""
    session = await database_sync_to_async(Session.objects.create)(server_name="failed save")
    calls: list[int] = []

    def failing_once(session_id: int, rows: list[dict]) -> None:
        calls.append(rows[0]["seq"])
        if len(calls) == 1:
            raise RuntimeError("database is locked")
        save_events(session_id, rows)

    pushed: list[int] = []
    tap, recorder = _recorder(session.pk, save=database_sync_to_async(failing_once), pushed=pushed)
    batch = recorder.limits.batch_events
    for i in range(batch * 2):
        tap.note("info", f"event {i}")
    with pytest.raises(RuntimeError):
        await recorder.flush()
    assert len(recorder.buffer) == 2 * batch and pushed == []
    await recorder.flush()
    assert calls[:2] == [1, batch + 1] and pushed == list(range(1, 2 * batch + 1))
    assert await database_sync_to_async(_saved)(session) == list(range(1, 2 * batch + 1))


async def test_a_stream_of_calls_is_gathered_longer_and_a_flood_or_a_pause_as_before():
    """Events that keep coming a few at a time (a stream of calls: some arrive during each save)
    double the gathering window up to `stream_window`; a pause brings it back to `window`, and so
    does a flood (its last events are shown as promptly as before)."""
    limits = Limits(window=0.001, stream_window=0.004, batch_events=50)
    windows: list[float] = []
    during = [0]  # events of the stream still to arrive, one during each save

    async def save(session_id: int, rows: list[dict]) -> None:
        windows.append(recorder.gathering)
        if during[0]:
            during[0] -= 1
            tap.note("info", "during a save")

    tap, recorder = _recorder(0, limits=limits, save=save)
    running = asyncio.create_task(recorder.run(asyncio.Event()))

    async def round_of(count: int, arriving: int, saves: int) -> list[float]:
        windows.clear()
        during[0] = arriving
        for i in range(count):
            tap.note("info", f"event {i}")
        async with asyncio.timeout(10):  # (the recorder's own timers: a few milliseconds)
            while len(windows) < saves or recorder.buffer or recorder.gathering != limits.window:
                await asyncio.sleep(0)
        return list(windows)

    try:
        assert await round_of(1, arriving=4, saves=5) == [0.001, 0.002, 0.004, 0.004, 0.004]  # longer
        assert await round_of(1, arriving=1, saves=2) == [0.001, 0.002]  # (it had stopped: from `window`)
        flood = await round_of(limits.batch_events * 2 + 3, arriving=2, saves=3)
        assert flood == [0.001, 0.001, 0.001]  # full batches at once, the rest within `window`
    finally:
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
