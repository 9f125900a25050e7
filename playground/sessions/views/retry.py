"""Switch a failed session's server to the transport its evidence points to, and connect again.

A server registered as Streamable HTTP whose endpoint only speaks HTTP+SSE (or the other way
round) fails with a status that says so (connect.transport_hint); the failed session's state
strip offers this switch as a button, the owner's CSRF-checked POST.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from playground.registry.models import Server
from playground.registry.services import own_server
from playground.transcripts.access import own_session

from . import connect

URL_TRANSPORTS = (Server.Transport.AUTO, Server.Transport.HTTP, Server.Transport.SSE)


@require_POST
async def retry(request: HttpRequest, pk: int) -> HttpResponse:
    user = await request.auser()
    if not user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    session = await sync_to_async(own_session)(user, pk)
    transport = request.POST.get("transport", "")
    if session.server_id is None or transport not in URL_TRANSPORTS:
        return HttpResponseBadRequest("nothing to switch to")
    server = await sync_to_async(own_server)(user, session.server_id)
    if server.is_stdio:
        return HttpResponseBadRequest("a stdio server has no HTTP transport to switch")
    if server.transport != transport:
        server.transport = transport
        await sync_to_async(server.save)(update_fields=["transport", "updated"])
        await sync_to_async(messages.info)(
            request, f"{server.name} now uses the {server.get_transport_display()} transport."
        )
    started = await connect.connect(request, server.pk)  # (a redirect: to the new session's page)
    return go_to(request, started["Location"])


def go_to(request: HttpRequest, url: str) -> HttpResponse:
    """A whole-page navigation: htmx follows HX-Redirect; a plain form post a 303."""
    if request.headers.get("HX-Request"):
        return HttpResponse(status=204, headers={"HX-Redirect": url})
    return redirect(url)
