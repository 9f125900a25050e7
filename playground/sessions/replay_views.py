"""The pages of a replay: choosing the server a session is replayed against and starting it,
and the Differences' ignore rules (saved on the server, the comparison made again)."""
from __future__ import annotations

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from playground.mcp import diff
from playground.registry.models import Server
from playground.transcripts import replays
from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from .features.replay import region_html
from .views import start_and_show, startable_server


async def replay(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the form (a select "Replay against", this session's server first); POST: start the
    replay session on the chosen server (one of the user's) and show it."""
    user = await request.auser()
    if not user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    source = await sync_to_async(own_session)(user, pk)
    if request.method != "POST":
        servers = await sync_to_async(lambda: list(Server.objects.filter(owner=user).order_by("name")))()
        return await sync_to_async(render)(request, "sessions/replay_form.html",
                                           {"session": source, "servers": servers})
    try:
        target_pk = int(request.POST.get("target") or "")
    except ValueError:
        raise Http404("choose a server to replay against") from None
    user, server, refused = await startable_server(request, target_pk,
                                                   refused=reverse("sessions:detail", args=[source.pk]))
    return refused or await start_and_show(request, user, server, replay_of=source)


@login_required
@require_POST
def differences_ignore(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the ignore rules on the replayed server and compare the rows again: the region."""
    session = own_session(request.user, pk)
    if session.kind != Session.Kind.REPLAY:
        raise Http404("not a replay")
    text = str(request.POST.get("ignore") or "")
    error = ""
    try:
        rules = diff.clean_rules(text.splitlines())
    except diff.RuleError as exc:
        error, rules = str(exc), None
    report = session.report or {}
    if rules is not None:
        if session.server is not None:
            session.server.replay_ignore = rules
            session.server.save(update_fields=["replay_ignore", "updated"])
        report = replays.compare_again(session, rules)
        if session.worker_channel:      # a live replay: its tabs show the new comparison too
            async_to_sync(get_channel_layer().send)(session.worker_channel,
                                                    {"command": "replay_compared", "report": report})
    html = region_html(session.owner_redactor().obj(report), session_id=session.pk, owner=True, live=False,
                       error=error, rules_text=text if error else None)
    return HttpResponse(html)
