"""OAuth pages: a server's settings, the callback, and a session's Authorization view."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from playground.channel_layer import channel_layer
from playground.registry.services import own_server
from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from . import render as rows
from .forms import ServerAuthForm
from .models import OAuthRecord, ServerAuth
from .page import session_of_state

CALLBACK_PARAMS = ("code", "state", "iss", "error", "error_description", "error_uri")


@login_required
def server_settings(request: HttpRequest, pk: int) -> HttpResponse:
    server = own_server(request.user, pk)
    auth = ServerAuth.objects.filter(server=server).first()
    form = ServerAuthForm(request.POST or None, initial=ServerAuthForm.initial_for(auth))
    if request.method == "POST" and form.is_valid():
        auth = auth or ServerAuth(server=server)
        form.apply(auth)
        auth.save()
        messages.success(request, "Authorization settings saved.")
        return redirect("registry:detail", pk=server.pk)
    return render(
        request,
        "oauth/settings.html",
        {
            "server": server,
            "form": form,
            "has_secret": bool(auth and auth.auth_settings().client_secret),
            "records": [rows.token_view(r.data, server.url) for r in server.oauth_records.all()],
        },
    )


@login_required
@require_POST
def forget(request: HttpRequest, pk: int) -> HttpResponse:
    """Forget every stored registration and token of a server."""
    server = own_server(request.user, pk)
    server.oauth_records.all().delete()
    messages.success(request, "Stored OAuth clients and tokens forgotten.")
    return redirect("oauth:settings", pk=server.pk)


@login_required
def callback(request: HttpRequest) -> HttpResponse:
    """The authorization server sends the browser here: hand the response to the session's worker."""
    session_id = session_of_state(request.GET.get("state", ""))
    session = Session.objects.filter(pk=session_id).first() if session_id is not None else None
    if session is None or not session.visible_to(request.user):
        raise Http404("no authorization request of yours waits for this response")
    if not session.worker_channel:
        return render(request, "oauth/callback_late.html", {"session": session}, status=410)
    params = {k: request.GET[k] for k in CALLBACK_PARAMS if k in request.GET}
    async_to_sync(channel_layer().send)(session.worker_channel, {"command": "oauth_callback", "params": params})
    return redirect("sessions:detail", pk=session.pk)


def _steps(session: Session) -> list[dict]:
    data = session.events.filter(dir="note").order_by("seq").values_list("data", flat=True)
    redact = session.owner_redactor()
    return rows.step_rows(
        [redact.obj(d) for d in data if d.get("kind") == "auth" or (d.get("data") or {}).get("auth_step")]
    )


def _records(session: Session) -> list[dict]:
    if session.server_id is None:
        return []
    url = session.server.url if session.server else ""
    return [rows.token_view(r.data, url) for r in OAuthRecord.objects.filter(server_id=session.server_id)]


def _view(session: Session) -> dict:
    steps = _steps(session)
    return {"session": session, "steps": steps, "failure": rows.failure(steps), "records": _records(session)}


@login_required
def authorization(request: HttpRequest, pk: int) -> HttpResponse:
    return render(request, "oauth/authorization.html", _view(own_session(request.user, pk)))


@login_required
def authorization_steps(request: HttpRequest, pk: int) -> HttpResponse:
    """The live part of the Authorization view (polled while the session runs)."""
    return render(request, "oauth/_steps.html", _view(own_session(request.user, pk)))


@login_required
@require_POST
def token_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    """Refresh or revoke the session's token (the worker holds the client and its credentials)."""
    session = own_session(request.user, pk)
    if action not in ("refresh", "revoke"):
        raise Http404
    if session.worker_channel:
        async_to_sync(channel_layer().send)(session.worker_channel, {"command": f"oauth_{action}"})
        messages.info(request, f"Token {action} requested; its steps appear below.")
    elif action == "revoke" and session.server_id:
        OAuthRecord.objects.filter(server_id=session.server_id).delete()
        messages.info(
            request,
            "The session has ended: the stored tokens were forgotten here (connect to revoke "
            "them at the authorization server).",
        )
    else:
        messages.error(request, "The session has ended: connect again to refresh its token.")
    return redirect("oauth:authorization", pk=session.pk)
