"""The Model view's own pages (its routes: `ModelView.get_urls`): the panel, the last tool result
and the download, the owner's and a share page's (every secret masked)."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import reverse

from playground.mcp.secrets import Redactor
from playground.transcripts.models import Session

from ...http import computed, owned, shared, stream
from .panel import body_html, download_json, last_tool_result, result_html

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
    return stream(request, iter([text]), "application/json", f"session-{session.pk}-model-view.json")


@login_required
async def model_view_json(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = await owned(request, pk)
    return await _model_view_file(request, session, session.owner_redactor())


async def share_model_view(request: HttpRequest, token: str) -> HttpResponse:
    """The panel of a share page (read-only, every secret masked), fetched by that page."""
    session, redact = await sync_to_async(shared)(token)
    download_url = reverse("sessions:share_model_view_json", args=[token])
    return HttpResponse(await computed(_panel, session, redact, download_url))


async def share_model_view_result(request: HttpRequest, token: str) -> HttpResponse:
    session, redact = await sync_to_async(shared)(token)
    return await _result(session, redact, reverse("sessions:share_model_view_result", args=[token]))


async def share_model_view_json(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = await sync_to_async(shared)(token)
    return await _model_view_file(request, session, redact)
