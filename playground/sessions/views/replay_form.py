"""Replaying a session: the form choosing the server it is replayed against, and the start of
the replay session (the replay feature, features/replay/, runs it and owns its other page)."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from playground.registry.models import Server
from playground.transcripts.access import own_session

from .connect import start_and_show, startable_server


async def replay(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the form (a select "Replay against", this session's server first); POST: start the
    replay session on the chosen server (one of the user's) and show it."""
    user = await request.auser()
    if isinstance(user, AnonymousUser):  # (not signed in)
        return redirect(f"{reverse('login')}?next={request.path}")
    source = await sync_to_async(own_session)(user, pk)
    if request.method != "POST":
        owned = Server.objects.filter(owner=user).order_by("name")
        servers = await sync_to_async(lambda: list(owned))()
        return await sync_to_async(render)(
            request, "sessions/replay_form.html", {"session": source, "servers": servers}
        )
    try:
        target_pk = int(request.POST.get("target") or "")
    except ValueError:
        raise Http404("choose a server to replay against") from None
    user, server, refused = await startable_server(
        request, target_pk, refused=reverse("sessions:detail", args=[source.pk])
    )
    return refused or await start_and_show(request, user, server, replay_of=source)
