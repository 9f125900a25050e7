"""Durability: a reload in the middle of a call still shows its result; a worker whose process
died leaves its session ended (not 'connected' forever) with the transcript intact."""
from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone

from playground.sessions import durability
from playground.sessions.worker import WORKERS, SessionWorker, start_session
from playground.transcripts.models import Event, Session

from .test_live import communicator, make_user_and_server, receive_until, stop_all


async def reload_mid_call(call: dict, under_way: str) -> tuple[WebsocketCommunicator, str]:
    """A tab starts `call` and goes (a reload) once it sees `under_way`; the next tab, connected,
    is returned with what the first one saw."""
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    first = communicator(session.pk, user)
    await first.connect()
    await receive_until(first, 'id="catalogue"')
    await first.send_to(text_data=json.dumps(call))
    seen = await receive_until(first, under_way)
    await first.disconnect()
    second = communicator(session.pk, user)
    await second.connect()
    return second, seen


@pytest.mark.django_db(transaction=True)
async def test_a_reload_mid_call_shows_the_pending_request_and_then_the_result():
    try:
        second, seen = await reload_mid_call({"action": "call_tool", "name": "ask_name"}, "server-request-q")
        key = re.search(r'id="server-request-(q\d+)"', seen).group(1)
        replay = await receive_until(second, f"server-request-{key}")   # the worker's sync snapshot
        assert "What is your name?" in replay
        await second.send_to(text_data=json.dumps({"action": "answer", "key": key, "result": json.dumps(
            {"action": "accept", "content": {"name": "Ada"}})}))
        assert "Hello, Ada!" in await receive_until(second, 'aria-label="Result"', "Hello, Ada!")
        await second.disconnect()
    finally:
        await stop_all()


@pytest.mark.django_db(transaction=True)
async def test_a_reload_during_a_long_call_shows_it_in_flight_and_then_its_result():
    try:
        second, _ = await reload_mid_call({"action": "call_tool", "name": "slow", "args.steps": "50",
                                           "args.delay": "0.1"}, "step 1")
        seen = await receive_until(second, 'aria-label="Result"', "done after 50 steps")
        assert 'class="inflight"' in seen.split('aria-label="Result"')[0]     # shown in flight first
        await second.disconnect()
    finally:
        await stop_all()


@pytest.mark.django_db(transaction=True)
async def test_a_worker_that_fails_ends_its_session_with_every_event_saved(monkeypatch):
    """An exception inside the worker (here: listing the catalogue) fails the session cleanly:
    the server is stopped, the reason is noted, and everything recorded is saved."""
    async def broken(self) -> None:
        raise RuntimeError("boom")
    monkeypatch.setattr(SessionWorker, "refresh_catalogue", broken)
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    worker = WORKERS[session.pk]
    await worker._task
    saved = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    rows = await database_sync_to_async(lambda: list(
        Event.objects.filter(session=saved).order_by("seq").values_list("data", flat=True)))()
    assert (saved.status, saved.end_reason, saved.worker_channel) == ("failed", "worker error: RuntimeError('boom')", "")
    assert [r["seq"] for r in rows] == list(range(1, worker.tap.seq + 1)) == list(range(1, saved.event_count + 1))
    assert any(r.get("kind") == "error" and "worker error" in r["text"] for r in rows)
    assert rows[-1]["kind"] == "closed" and session.pk not in WORKERS      # the server was stopped after


def live_session(**kw) -> Session:
    session = Session.objects.create(server_name="gone", status=Session.Status.CONNECTED,
                                     worker_channel="specific.worker!abc", **kw)
    for seq in (1, 2):
        Event.objects.create(session=session, seq=seq, t=seq / 10, dir="recv",
                             data={"seq": seq, "t": seq / 10, "dir": "recv", "raw": "{}", "message": {}})
    Session.objects.filter(pk=session.pk).update(event_count=2)
    return session


@pytest.mark.django_db(transaction=True)
async def test_an_open_tab_sees_the_session_end_when_its_worker_stops_beating(settings):
    """The worker lives in a process that died (here: none at all); the tab was opened while
    the heartbeat was fresh, and learns of the end without reloading."""
    settings.PLAYGROUND_HEARTBEAT_SECONDS = 0.2
    user, _ = await make_user_and_server()
    session = await database_sync_to_async(live_session)(heartbeat_at=timezone.now(), owner=user)
    comm = communicator(session.pk, user)
    try:
        assert (await comm.connect())[0]
        seen = await receive_until(comm, "status-ended", "worker process ended", 'id="ev-3"')
    finally:
        await comm.disconnect()
    assert "status-connected" in seen.split("status-ended")[0]      # it was shown live first
    assert await database_sync_to_async(lambda: Session.objects.get(pk=session.pk).status)() == "ended"


@pytest.mark.django_db
def test_a_stale_heartbeat_ends_the_session_with_its_transcript_and_a_note(settings):
    settings.PLAYGROUND_HEARTBEAT_SECONDS = 10
    now = timezone.now()
    dead = live_session(heartbeat_at=now - timedelta(seconds=31))
    fresh = live_session(heartbeat_at=now - timedelta(seconds=5))
    assert durability.reap_dead_sessions() == [dead.pk]
    dead.refresh_from_db()
    fresh.refresh_from_db()
    assert (dead.status, dead.end_reason, dead.worker_channel) == ("ended", durability.WORKER_ENDED, "")
    assert fresh.status == "connected"
    rows = list(dead.events.order_by("seq").values_list("data", flat=True))
    assert [r["seq"] for r in rows] == [1, 2, 3] and dead.event_count == 3
    assert rows[-1]["kind"] == "error" and "worker process ended" in rows[-1]["text"]
    assert durability.reap_dead_sessions() == []                 # once


@pytest.mark.django_db
def test_with_the_in_memory_layer_sessions_older_than_the_process_are_dead_at_start(settings):
    older = live_session(heartbeat_at=timezone.now(), started_at=durability.PROCESS_STARTED - timedelta(seconds=1))
    assert durability.reap_dead_sessions() == []                 # heartbeat is fresh: not by that rule
    assert durability.reap_dead_sessions(at_start=True) == [older.pk]
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer"}}
    other = live_session(heartbeat_at=timezone.now(), started_at=durability.PROCESS_STARTED - timedelta(seconds=1))
    assert durability.reap_dead_sessions(at_start=True) == []   # Redis: another process may own it
    assert Session.objects.get(pk=other.pk).status == "connected"


@pytest.mark.django_db
def test_the_session_page_and_the_first_request_sweep(settings, django_user_model):
    user = django_user_model.objects.create_user("dora", password="pw")
    stale = timezone.now() - timedelta(seconds=3 * settings.PLAYGROUND_HEARTBEAT_SECONDS + 1)
    session = live_session(heartbeat_at=stale, owner=user)
    browser = Client()
    browser.force_login(user)
    page = browser.get(f"/sessions/{session.pk}/").content.decode()
    assert "status-ended" in page and "worker process ended" in page


@pytest.mark.django_db(transaction=True)
async def test_one_heartbeat_task_keeps_every_live_worker_of_the_process_fresh(settings):
    """Two live sessions are kept fresh by one task of the process; it stops with the last worker."""
    import asyncio

    from playground.sessions import worker as worker_module

    settings.PLAYGROUND_HEARTBEAT_SECONDS = 0.05
    user, server = await make_user_and_server()
    sessions = [await start_session(server, user) for _ in range(2)]
    beat = worker_module._heartbeat
    assert beat is not None and not beat.done()
    started = {s.pk: s.heartbeat_at for s in sessions}
    get = database_sync_to_async(lambda: dict(Session.objects.filter(pk__in=list(started))
                                              .values_list("pk", "heartbeat_at")))
    try:
        async with asyncio.timeout(20):
            while not all(at > started[pk] for pk, at in (await get()).items()):
                await asyncio.sleep(0.05)                    # polling the database for the condition
        assert worker_module._heartbeat is beat              # the same one task for both
    finally:
        await stop_all()
    await asyncio.wait({beat}, timeout=5)
    assert beat.cancelled()                                  # no worker left: stopped, not left to run out
