"""A live session nobody watches ends after PLAYGROUND_IDLE_MINUTES (its server with it), unless
it is at work on its own; the home page lists the live sessions with Stop (issue 31: at shutdown
11 sessions were live and 8 server processes running)."""

from __future__ import annotations

import datetime

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse
from django.utils import timezone

from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS, end_idle, idle_reason

from ..helpers import communicator, logged_in, make_user_and_server, receive_until, stop_all

pytestmark = pytest.mark.django_db(transaction=True)


async def _viewed(session_id: int, minutes_ago: float) -> None:
    from playground.transcripts.models import Session

    when = timezone.now() - datetime.timedelta(minutes=minutes_ago)
    await database_sync_to_async(Session.objects.filter(pk=session_id).update)(viewed_at=when)


async def _status(session_id: int) -> tuple[str, str]:
    from playground.transcripts.models import Session

    session = await database_sync_to_async(Session.objects.get)(pk=session_id)
    return session.status, session.end_reason


async def test_a_session_nobody_showed_for_the_idle_time_ends_and_one_shown_does_not(settings):
    settings.PLAYGROUND_IDLE_MINUTES = 30
    user, srv = await make_user_and_server()
    idle, watched = await start_session(srv, user), await start_session(srv, user)
    try:
        await _viewed(idle.pk, 31)
        await _viewed(watched.pk, 29)
        beats = {s.pk: WORKERS[s.pk].channel for s in (idle, watched)}
        assert await end_idle(beats) == [idle.pk]
        assert await _status(idle.pk) == ("ended", idle_reason(30)) and idle.pk not in WORKERS
        assert (await _status(watched.pk))[0] in ("connecting", "connected") and watched.pk in WORKERS
        settings.PLAYGROUND_IDLE_MINUTES = 0  # 0: never
        await _viewed(watched.pk, 10_000)
        assert await end_idle({watched.pk: WORKERS[watched.pk].channel}) == []
    finally:
        await stop_all()


async def test_a_session_busy_on_its_own_is_not_idle(settings, monkeypatch):
    settings.PLAYGROUND_IDLE_MINUTES = 30
    user, srv = await make_user_and_server()
    session = await start_session(srv, user)
    try:
        await _viewed(session.pk, 60)
        monkeypatch.setattr(WORKERS[session.pk].features, "busy", lambda: True)  # (a replay, a check running)
        assert await end_idle({session.pk: WORKERS[session.pk].channel}) == []
    finally:
        await stop_all()


async def test_a_tab_showing_the_session_notes_that_it_is_watched():
    user, srv = await make_user_and_server()
    session = await start_session(srv, user)
    await _viewed(session.pk, 60)
    comm = communicator(session.pk, user)
    try:
        assert (await comm.connect())[0]
        await receive_until(comm, 'id="catalogue"')
        from playground.transcripts.models import Session

        viewed = (await database_sync_to_async(Session.objects.get)(pk=session.pk)).viewed_at
        assert timezone.now() - viewed < datetime.timedelta(minutes=1)
    finally:
        await comm.disconnect()
        await stop_all()


async def test_the_home_page_lists_live_sessions_with_stop_and_stop_ends_one():
    user, srv = await make_user_and_server()
    session = await start_session(srv, user)
    try:
        client = await logged_in(user)
        listed = (await client.get(reverse("sessions:live"))).content.decode()
        assert f'id="live-{session.pk}"' in listed and reverse("sessions:stop", args=[session.pk]) in listed
        home = (await client.get(reverse("registry:home"))).content.decode()
        assert reverse("sessions:live") in home
        stranger = await logged_in(await database_sync_to_async(_stranger)(user))
        assert (await stranger.post(reverse("sessions:stop", args=[session.pk]))).status_code == 404
        response = await client.post(reverse("sessions:stop", args=[session.pk]))
        assert response.status_code == 302
        worker = WORKERS.get(session.pk)
        if worker is not None and worker._task is not None:
            await worker._task  # the worker ends the session it was sent
        assert (await _status(session.pk))[0] == "ended"
        assert f'id="live-{session.pk}"' not in (await client.get(reverse("sessions:live"))).content.decode()
    finally:
        await stop_all()


def _stranger(user):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("mallory", password="pw")
