"""The session as other tools read it: the Model view's download, the HAR export and
"Copy as curl". Owner variants mask what the owner's exports mask (OAuth values); share
variants mask every secret (`Session.share_redactor`) and never offer the real values."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from asgiref.sync import sync_to_async

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import reverse

from playground.mcp.auth import AuthRecord
from playground.mcp.secrets import Redactor
from playground.mcp.transports.http_common import same_origin, shown_url
from playground.oauth.models import OAuthRecord
from playground.transcripts import curl, har
from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from ..features.model_view import body_html, download_json, last_tool_result, result_html
from ..fragments.lines import is_request
from .session_page import _shared, _stream, computed, owned


# The Model view is computed from the whole catalogue: seconds for thousands of tools. These
# views are async: they read their rows in short queries and compute in a worker thread
# (`computed`, which says why).

def _panel(session: Session, redact: Redactor, download_url: str) -> str:
    return body_html(redact.obj(session.catalogue or {}), download_url)


@login_required
async def model_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The Model view panel, fetched by the session page (again after each catalogue refresh)."""
    session = await owned(request, pk)
    download_url = reverse("sessions:model_view_json", args=[pk])
    return HttpResponse(await computed(_panel, session, session.owner_redactor(), download_url))


async def _result(session: Session, redact: Redactor, refresh_url: str) -> HttpResponse:
    result, tool = await last_tool_result(session, redact)
    return HttpResponse(await computed(result_html, result, tool, refresh_url))


@login_required
async def model_view_result(request: HttpRequest, pk: int) -> HttpResponse:
    session = await owned(request, pk)
    return await _result(session, session.owner_redactor(), reverse("sessions:model_view_result", args=[pk]))


async def _model_view_file(request: HttpRequest, session: Session, redact: Redactor) -> StreamingHttpResponse:
    text = await computed(lambda: download_json(redact.obj(session.catalogue or {})))
    return _stream(request, iter([text]), "application/json", f"session-{session.pk}-model-view.json")


@login_required
async def model_view_json(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = await owned(request, pk)
    return await _model_view_file(request, session, session.owner_redactor())


async def share_model_view(request: HttpRequest, token: str) -> HttpResponse:
    """The panel of a share page (read-only, every secret masked), fetched by that page."""
    session, redact = await sync_to_async(_shared)(token)
    download_url = reverse("sessions:share_model_view_json", args=[token])
    return HttpResponse(await computed(_panel, session, redact, download_url))


async def share_model_view_result(request: HttpRequest, token: str) -> HttpResponse:
    session, redact = await sync_to_async(_shared)(token)
    return await _result(session, redact, reverse("sessions:share_model_view_result", args=[token]))


async def share_model_view_json(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = await sync_to_async(_shared)(token)
    return await _model_view_file(request, session, redact)


# --- Copy as curl ------------------------------------------------------------------------------

def _text(text: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "no-store"
    return response


def _request_row(session: Session, seq: int) -> dict[str, Any]:
    row = session.events.filter(seq=seq).values_list("data", flat=True).first()
    if not isinstance(row, dict) or not is_request(row):
        raise Http404("this event records no HTTP request")
    return row


def _curl(row: dict[str, Any], **real: Any) -> HttpResponse:
    try:
        return _text(curl.command(row, **real))
    except curl.NotARequest as exc:
        raise Http404(str(exc)) from None


def _with_secrets(session: Session, row: dict[str, Any]) -> HttpResponse:
    """The command with the secrets the request carried put back, for its owner: the server's
    configured header values (as stored now), the OAuth access token stored for it, the URL as
    configured. Only for a request that went to the server's URL as it is now (an SSE stream's
    POST endpoint is on its origin): else the server's values now would go where they never
    went. The token only from an authorization issued for that URL. Otherwise the command is
    the masked one, and its first line says why."""
    server = session.server
    if server is None:
        return _curl(session.owner_redactor().obj(row), notes=["secrets not filled in: the session's server was deleted"])
    config = server.to_config()
    url = str(row["http"].get("url"))
    current = shown_url(config.url) if config.url else ""
    if not current or not (url == current or (session.transport == "sse" and same_origin(url, config.url))):
        return _curl(session.owner_redactor().obj(row), notes=[
            f"secrets not filled in: this request went to {url}, not to the server's URL now ({current or 'none'})"])
    records = [AuthRecord.from_dict(r.data) for r in OAuthRecord.objects.filter(server=server).order_by("-updated")]
    tokens = next((r.tokens for r in records if r.tokens is not None and r.issued_for(config.url)), None)
    notes = ([f"the OAuth token is not filled in: the stored ones were issued for another URL than {current}"]
             if tokens is None and any(r.tokens is not None for r in records) else [])
    configured = {k.lower(): v for k, v in config.headers.items()}

    def unmask(name: str, value: str) -> str:
        if name.lower() in configured:
            return configured[name.lower()]
        if name.lower() == "authorization" and tokens is not None and value.lower().startswith("bearer"):
            return f"Bearer {tokens.access_token}"
        return value
    return _curl(row, unmask=unmask, real_url=config.url if url == current else None, notes=notes)


@login_required
def curl_command(request: HttpRequest, pk: int, seq: int) -> HttpResponse:
    """Masked as the owner's exports are; `?secrets=1` puts the real values back (the owner only)."""
    session = own_session(request.user, pk)
    row = _request_row(session, seq)
    if request.GET.get("secrets") == "1":
        return _with_secrets(session, row)
    return _curl(session.owner_redactor().obj(row))


def share_curl_command(request: HttpRequest, token: str, seq: int) -> HttpResponse:
    """Masked as every share is; never with the real values."""
    session, redact = _shared(token)
    return _curl(redact.obj(_request_row(session, seq)))


# --- HAR -------------------------------------------------------------------------------------------

def _har(session: Session, redact: Redactor) -> Iterator[str]:
    rows = (redact.obj(data) for data in session.events.exclude(dir="stderr").order_by("seq")
            .values_list("data", flat=True).iterator(chunk_size=2000))
    comment = redact.text(f"{session.server_name}, session {session.pk} ({session.transport or 'HTTP'}), "
                          "recorded by MCP Playground")
    return har.document(rows, session.time_zero, comment)   # as the page's times


@login_required
def export_har(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = own_session(request.user, pk)
    return _stream(request, _har(session, session.owner_redactor()), "application/json", f"session-{session.pk}.har")


def share_har(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = _shared(token)
    return _stream(request, _har(session, redact), "application/json", f"session-{session.pk}.har")
