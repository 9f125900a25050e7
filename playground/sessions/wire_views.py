"""The session as other tools read it: the Model view's download, the HAR export and
"Copy as curl". Owner variants mask what the owner's exports mask (OAuth values); share
variants mask every secret (`Session.share_redactor`) and never offer the real values."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from playground.modelview.view import download, tools_of
from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from .views import _shared


def _model_view_file(session: Session, catalogue: object) -> HttpResponse:
    response = HttpResponse(download(tools_of(catalogue)), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="session-{session.pk}-model-view.json"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
def model_view_json(request: HttpRequest, pk: int) -> HttpResponse:
    session = own_session(request.user, pk)
    return _model_view_file(session, session.owner_redactor().obj(session.catalogue or {}))


def share_model_view_json(request: HttpRequest, token: str) -> HttpResponse:
    session, redact = _shared(token)
    return _model_view_file(session, redact.obj(session.catalogue or {}))
