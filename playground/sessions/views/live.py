"""The person's live sessions, listed on the home page with **Stop**: a session keeps its server
process running until it ends, and one nobody watches ends by itself only after
PLAYGROUND_IDLE_MINUTES (live/workers.end_idle)."""

from __future__ import annotations

import asyncio

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from playground.channel_layer import channel_layer
from playground.transcripts.models import Session

from ..http import owned
from ..live.durability import reap_dead_sessions

LIVE = (Session.Status.CONNECTING, Session.Status.CONNECTED)


def _live(user) -> list[Session]:
    reap_dead_sessions()
    return list(Session.objects.filter(owner=user, status__in=LIVE).order_by("-started_at")[:100])


@login_required
@require_GET
def live_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "sessions/live_list.html",
        {"live": _live(request.user), "idle_minutes": settings.PLAYGROUND_IDLE_MINUTES},
    )


STOP_WAIT = 10.0  # seconds the Stop button waits for the session to have ended


async def _ended(pk: int) -> None:
    """Until the worker (in whichever process) has ended the session, at most STOP_WAIT: the page
    the person goes back to then lists it no more (a server slow to exit is listed until it has)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + STOP_WAIT
    while loop.time() < until:
        if not await sync_to_async(Session.objects.filter(pk=pk, status__in=LIVE).exists)():
            return
        await asyncio.sleep(0.1)


@login_required
@require_POST
async def stop(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask the session's worker (in whichever process it lives) to end it."""
    session = await owned(request, pk)
    if session.worker_channel and session.status in LIVE:
        await channel_layer().send(session.worker_channel, {"command": "disconnect"})
        await _ended(pk)
    if request.headers.get("HX-Request"):
        return HttpResponse(status=204, headers={"HX-Redirect": "/"})
    return redirect("registry:home")
