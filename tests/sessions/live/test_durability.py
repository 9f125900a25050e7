"""Durability: a worker whose process
died leaves its session ended (not 'connected' forever) with the transcript intact; a process
stopped by a signal ends its sessions itself, transcript saved and servers stopped."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import time
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.utils import timezone

from playground.mcp.transports.stdio import group_alive
from playground.sessions.live import durability
from playground.sessions.live.shutdown import PROCESS_STOPPED
from playground.sessions.live.worker import start_session
from playground.transcripts.models import Event, Session
from tests.conftest import PEERS
from tests.daphne_process import (
    app_env,
    children,
    connect,
    ignored_signals,
    log_in,
    set_up,
    start_daphne,
    stop_daphne,
    tab,
    until,
)
from tests.http_peers import free_port
from tests.sessions.helpers import closed_with, communicator, make_user_and_server, receive_until, stop_all, viewer


def live_session(**kw) -> Session:
    session = Session.objects.create(
        server_name="gone", status=Session.Status.CONNECTED, worker_channel="specific.worker!abc", **kw
    )
    for seq in (1, 2):
        Event.objects.create(
            session=session,
            seq=seq,
            t=seq / 10,
            dir="recv",
            data={"seq": seq, "t": seq / 10, "dir": "recv", "raw": "{}", "message": {}},
        )
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
    assert "status-connected" in seen.split("status-ended")[0]  # it was shown live first
    assert await database_sync_to_async(lambda: Session.objects.get(pk=session.pk).status)() == "ended"


@pytest.mark.django_db(transaction=True)
async def test_a_share_viewer_sees_the_session_end_when_its_worker_stops_beating_with_no_owner_tab(
    settings, monkeypatch
):
    """No owner's tab is open to notice: the viewer's own watch ends the session, and the viewer
    gets the note (masked for a share) and the end, then turns into a snapshot."""
    from playground.sessions.live import share_socket as share_live
    from playground.transcripts.models import ShareLink

    settings.PLAYGROUND_HEARTBEAT_SECONDS = 0.2
    monkeypatch.setattr(share_live, "FOLLOW_WAIT", 0.05)  # no worker answers share_join: replay soon
    user, _ = await make_user_and_server()
    session = await database_sync_to_async(live_session)(
        heartbeat_at=timezone.now() + timedelta(hours=1), owner=user, secret_values=["s3cr3t"]
    )
    link = await database_sync_to_async(ShareLink.objects.create)(session=session, created_by=user)
    comm = viewer(link.token)
    try:
        assert (await comm.connect())[0]
        await receive_until(comm, "status-connected", 'id="ev-2"')  # shown live first
        await database_sync_to_async(Session.objects.filter(pk=session.pk).update)(
            heartbeat_at=timezone.now() - timedelta(hours=1)
        )  # the worker's process has died
        seen = await receive_until(comm, "status-ended", "worker process ended", 'id="ev-3"', "Snapshot")
        assert await closed_with(comm) == share_live.CLOSE_ENDED
    finally:
        await comm.disconnect()
    assert seen.count('id="ev-3"') == 1
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
    assert durability.reap_dead_sessions() == []  # once


@pytest.mark.django_db
def test_with_the_in_memory_layer_sessions_older_than_the_process_are_dead_at_start(settings):
    older = live_session(heartbeat_at=timezone.now(), started_at=durability.PROCESS_STARTED - timedelta(seconds=1))
    assert durability.reap_dead_sessions() == []  # heartbeat is fresh: not by that rule
    assert durability.reap_dead_sessions(at_start=True) == [older.pk]
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer"}}
    other = live_session(heartbeat_at=timezone.now(), started_at=durability.PROCESS_STARTED - timedelta(seconds=1))
    assert durability.reap_dead_sessions(at_start=True) == []  # Redis: another process may own it
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

    from playground.sessions.live import workers as live

    settings.PLAYGROUND_HEARTBEAT_SECONDS = 0.05
    user, server = await make_user_and_server()
    sessions = [await start_session(server, user) for _ in range(2)]
    beat = live.heartbeat()
    assert beat is not None and not beat.done()
    started = {s.pk: s.heartbeat_at for s in sessions}
    get = database_sync_to_async(
        lambda: dict(Session.objects.filter(pk__in=list(started)).values_list("pk", "heartbeat_at"))
    )
    try:
        async with asyncio.timeout(20):
            while not all(at > started[pk] for pk, at in (await get()).items()):
                await asyncio.sleep(0.05)  # polling the database for the condition
        assert live.heartbeat() is beat  # the same one task for both
    finally:
        await stop_all()
    await asyncio.wait({beat}, timeout=5)
    assert beat.cancelled()  # no worker left: stopped, not left to run out


def poll(condition, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.02)


STEPS = 1000  # progress notifications: fewer than the backlog (2,000) at which the worker stops reading


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_process_stopped_by_a_signal_ends_its_sessions_saved_whole_and_stops_their_servers(tmp_path, signum):
    """SIGTERM (a deploy) or SIGINT (Ctrl-C on `make run`) to daphne. Every event of a call — the
    request, 1,000 progress notifications, the result — is still unsaved when the signal comes
    (the test holds SQLite's write lock from before the call until the stdio server is gone), so
    only the worker's final flush can save them. The process waits for it, then exits."""
    db_path = tmp_path / "db.sqlite3"
    env = app_env(PLAYGROUND_SQLITE_PATH=str(db_path))
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    port = free_port()
    link = set_up(env, port)
    proc = start_daphne(env, port, tmp_path / "daphne.log")
    assert signum not in ignored_signals(proc.pid)  # (inherited from a background job, it would be)
    db = sqlite3.connect(db_path, isolation_level=None, timeout=20)
    browser = None

    def saved(session_id: int) -> int:
        return db.execute("SELECT count(*) FROM transcripts_event WHERE session_id = ?", (session_id,)).fetchone()[0]

    try:
        browser = log_in(link)
        session_id = connect(browser, port, "peer", [str(PEERS / "sdk_server.py"), "stdio"])

        async def call_then_signal() -> int:
            ws = await tab(browser, port, session_id)
            try:
                await until(ws, 'id="catalogue"', ">slow<")
                peer = next(pid for pid, cmd in children(proc.pid).items() if "sdk_server.py" in cmd)
                db.execute("BEGIN IMMEDIATE")  # the worker's writes wait from here on
                before = saved(session_id)
                await ws.send(
                    json.dumps({"action": "call_tool", "name": "slow", "args.steps": str(STEPS), "args.delay": "0"})
                )
                await until(ws, 'aria-label="Result"', f"done after {STEPS} steps")
                assert saved(session_id) == before  # the worker has the whole call, unsaved
                os.kill(proc.pid, signum)
                return peer
            finally:
                await ws.close()

        peer = asyncio.run(call_then_signal())
        poll(lambda: not group_alive(peer), "the stdio server to stop")
        assert proc.poll() is None  # still there: its last flush waits on our lock
        db.execute("ROLLBACK")
        assert proc.wait(30) == 0
        status, reason, channel, count = db.execute(
            "SELECT status, end_reason, worker_channel, event_count FROM transcripts_session WHERE id = ?",
            (session_id,),
        ).fetchone()
        rows = [
            json.loads(data)
            for (data,) in db.execute(
                "SELECT data FROM transcripts_event WHERE session_id = ? ORDER BY seq", (session_id,)
            )
        ]
    finally:
        db.close()  # (rolls back, if the test failed holding the lock)
        if browser is not None:
            browser.close()
        stop_daphne(proc)
    assert (status, reason, channel) == ("ended", PROCESS_STOPPED, "")
    assert [r["seq"] for r in rows] == list(range(1, count + 1))
    messages = [r.get("message") or {} for r in rows]
    call = next(m for m in messages if m.get("method") == "tools/call")
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    assert progress == list(range(1, STEPS + 1))
    answer = next(m for m in messages if m.get("id") == call["id"] and "result" in m)
    assert answer["result"]["content"][0]["text"] == f"done after {STEPS} steps"
    notes = [(r["kind"], r["text"]) for r in rows if r["dir"] == "note"]
    assert ("info", f"ending the session: {PROCESS_STOPPED}") in notes
    assert notes[-1][0] == "closed" and "stopped server" in notes[-1][1]  # the stdio server, last
    assert not group_alive(peer)
