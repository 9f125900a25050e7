"""The session as files: the JSONL and JSON exports and the HAR, streamed. Every secret is
masked by default, the owner's too (people attach exports to bug reports, and a server may echo
a configured header or environment value): the owner's `?secrets=1` ("exports: include secrets")
keeps the configured values as the owner's pages show them. OAuth values are masked always."""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, StreamingHttpResponse

from playground.mcp.secrets import Redactor
from playground.transcripts import har
from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from ..http import shared, stream


def _jsonl(session: Session, redact: Redactor) -> Iterator[str]:
    for data in session.events.order_by("seq").values_list("data", flat=True).iterator(chunk_size=2000):
        yield json.dumps(redact.obj(data), ensure_ascii=False) + "\n"


def _json_document(session: Session, redact: Redactor) -> Iterator[str]:
    state = session.state()
    header = {
        "session": {
            **redact.obj(state),
            "server_name": session.server_name,
            "started_at": session.started_at.isoformat(),
            # when the events' `t` was 0: an event happened at clock_origin + t
            "clock_origin": session.clock_origin.isoformat() if session.clock_origin else None,
            "ended_at": session.ended_at.isoformat() if session.ended_at else None,
        }
    }
    yield json.dumps(header, ensure_ascii=False)[:-1] + ', "events": ['
    first = True
    for text in _jsonl(session, redact):
        yield ("" if first else ",") + text.rstrip("\n")
        first = False
    yield "]}\n"


def owner_export(request: HttpRequest, session: Session) -> Redactor:
    """The owner's export: every secret masked, unless asked for them (`?secrets=1`)."""
    return session.owner_redactor() if request.GET.get("secrets") == "1" else session.share_redactor()


@login_required
def export_jsonl(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = own_session(request.user, pk)
    return stream(
        request, _jsonl(session, owner_export(request, session)), "application/x-ndjson", f"session-{session.pk}.jsonl"
    )


@login_required
def export_json(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = own_session(request.user, pk)
    return stream(
        request,
        _json_document(session, owner_export(request, session)),
        "application/json",
        f"session-{session.pk}.json",
    )


def share_jsonl(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = shared(token)
    return stream(request, _jsonl(session, redact), "application/x-ndjson", f"session-{session.pk}.jsonl")


def share_json(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = shared(token)
    return stream(request, _json_document(session, redact), "application/json", f"session-{session.pk}.json")


def _har(session: Session, redact: Redactor) -> Iterator[str]:
    rows = (
        redact.obj(data)
        for data in session.events.exclude(dir="stderr")
        .order_by("seq")
        .values_list("data", flat=True)
        .iterator(chunk_size=2000)
    )
    comment = redact.text(
        f"{session.server_name}, session {session.pk} ({session.transport or 'HTTP'}), recorded by MCP Playground"
    )
    return har.document(rows, session.time_zero, comment)  # as the page's times


@login_required
def export_har(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = own_session(request.user, pk)
    return stream(
        request, _har(session, owner_export(request, session)), "application/json", f"session-{session.pk}.har"
    )


def share_har(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = shared(token)
    return stream(request, _har(session, redact), "application/json", f"session-{session.pk}.har")
