"""Where `manage.py inspect`'s one-time link lands: a live session of the server it names.

The link's token is redeemed by the login view, which remembers the server in the login's own
session (`LoginToken.ARRIVING`); this view takes it from there, once. Another page sending the
browser here starts nothing: it cannot put a server into that session.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from playground.registry.models import LoginToken

from .connect import start_and_show, startable_server


@login_required
async def arrive(request: HttpRequest) -> HttpResponse:
    server_pk = await request.session.apop(LoginToken.ARRIVING, None)
    if not isinstance(server_pk, int):
        return redirect("registry:home")
    user, server, refused = await startable_server(request, server_pk)
    return refused or await start_and_show(request, user, server)
