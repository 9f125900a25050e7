"""Share links: made and revoked by the owner; the read-only share page (no login), every secret
masked, live while the session is (live/share_socket.py). Its exports are exports.py's."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from playground.mcp.secrets import Redactor
from playground.signed_in import SignedInRequest
from playground.transcripts.access import own_session
from playground.transcripts.models import Session, ShareLink

from ..features import FEATURES
from ..fragments.lines import line
from ..http import page, shared
from ..live.share_socket import close_share_viewers, shared_state
from ..transcript_window import transcript_window
from .session_page import feature_assets


@login_required
@require_POST
def share(request: SignedInRequest, pk: int) -> HttpResponse:
    session = own_session(request.user, pk)
    link = ShareLink.objects.create(session=session, created_by=request.user)
    url = request.build_absolute_uri(reverse("sessions:share_page", args=[link.token]))
    return render(request, "sessions/share_link.html", {"url": url, "link": link})


@login_required
@require_POST
def revoke(request: SignedInRequest, token: str) -> HttpResponse:
    link = get_object_or_404(ShareLink, token=token)
    own_session(request.user, link.session_id)
    link.revoked_at = timezone.now()
    link.save(update_fields=["revoked_at"])
    close_share_viewers(link)
    return redirect("sessions:detail", pk=link.session_id)


def share_page(request: HttpRequest, token: str) -> HttpResponse:
    """Read-only, no login: the transcript with every secret value masked. A live session's
    page follows it (live/share_socket.py); an ended one's is a snapshot."""
    session, redact = shared(token)
    window = transcript_window(session.pk)
    total, rows = window.total, window.rows
    live = session.is_live
    return page(
        request,
        "sessions/share.html",
        {
            "session": session,
            "token": token,
            "total": total,
            "state": shared_state(session),
            "lines": [line(redact.obj(r)) for r in rows],
            "live": live,
            "snapshot": not live,
            "mode": "live" if live else "snapshot",
            "window": window,
            # (a socket opening while its lines are still that window sends the state alone)
            "ws_url": f"/ws/share/{token}/{window.socket_query}",
            "feature_parts": _share_parts(session, redact, token),
            **feature_assets(),
        },
    )


def _share_parts(session: Session, redact: Redactor, token: str) -> list[str]:
    """What each feature shows on a share page (features/base.py: `share_template`)."""
    parts: list[str] = []
    for feature in FEATURES:
        if feature.share_template and (context := feature.share_context(session, redact, token)) is not None:
            parts.append(render_to_string(feature.share_template, context))
    return parts
