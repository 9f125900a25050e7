"""Starting a session: the server's Connect button, and what every page that starts one
(a retry on another transport, a replay, a check) goes through."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from playground import security
from playground.registry.models import Server
from playground.registry.services import own_server

from ..live.worker import start_session


async def startable_server(
    request: HttpRequest, server_pk: int, *, refused: str | None = None
) -> tuple[Any, Any, HttpResponse | None]:
    """(user, server, None) when this user may start a session of the server (404 if not theirs);
    else a response that says why: the login page, or `refused` (by default the server's page)
    with the stdio policy's message."""
    user = await request.auser()
    if not user.is_authenticated:
        return user, None, redirect(f"{reverse('login')}?next={request.path}")
    server = await sync_to_async(own_server)(user, server_pk)
    if server.is_stdio:
        try:
            security.check_stdio_user(user)
        except security.PolicyError as exc:
            await sync_to_async(messages.error)(request, str(exc))
            return user, server, redirect(refused or reverse("registry:detail", args=[server.pk]))
    return user, server, None


async def start_and_show(request: HttpRequest, user: Any, server: Server, **options: Any) -> HttpResponse:
    """Start a session on `server` (a replay, a check: `options` of `start_session`) and show it."""
    session = await start_session(
        server, user, oauth_redirect_uri=request.build_absolute_uri(reverse("oauth:callback")), **options
    )
    return redirect("sessions:detail", pk=session.pk)


@require_POST
async def connect(request: HttpRequest, server_pk: int) -> HttpResponse:
    """Start a session whose worker lives in this process, then show it."""
    user, server, refused = await startable_server(request, server_pk)
    return refused or await start_and_show(request, user, server)
