"""Copy as curl: a request the client sent over HTTP, as a curl command. The owner's is masked
as the owner's exports are (OAuth values), and may have the real values put back
(`?secrets=1`); a share's masks every secret and never offers them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse

from playground.mcp.auth import AuthRecord
from playground.mcp.transports.http_common import same_origin, shown_url
from playground.oauth.models import OAuthRecord
from playground.transcripts import curl
from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from ..fragments.lines import is_request
from ..http import shared


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


def _curl(row: dict[str, Any], session: Session | None = None, **real: Any) -> HttpResponse:
    notes = [*real.pop("notes", []), *_ended_notes(session, row)]
    try:
        return _text(curl.command(row, notes=notes, **real))
    except curl.NotARequest as exc:
        raise Http404(str(exc)) from None


def _ended_notes(session: Session | None, row: dict[str, Any]) -> list[str]:
    """A request of a session that has ended carries an MCP session id the server has let go
    (the client ended it with a DELETE, or the server stopped): pasted later, it gets HTTP 404
    "Session not found" and nothing says why."""
    if session is None or session.status not in (Session.Status.ENDED, Session.Status.FAILED):
        return []
    http = row.get("http")
    if not isinstance(http, dict):
        return []
    headers = http.get("headers") if row.get("dir") == "send" else http.get("request_headers")
    if not isinstance(headers, dict) or not any(str(k).lower() == "mcp-session-id" for k in headers):
        return []
    return [
        "this request belongs to an MCP session that has ended: the server will likely answer 404 "
        '"Session not found" for its Mcp-Session-Id; send an initialize request first (without that '
        "header) and use the Mcp-Session-Id the server answers with"
    ]


def _with_secrets(session: Session, row: dict[str, Any]) -> HttpResponse:
    """The command with the secrets the request carried put back, for its owner: the server's
    configured header values (as stored now), the OAuth access token stored for it, the URL as
    configured. Only for a request that went to the server's URL as it is now (an SSE stream's
    POST endpoint is on its origin): else the server's values now would go where they never
    went. The token only from an authorization issued for that URL. Otherwise the command is
    the masked one, and its first line says why."""
    server = session.server
    if server is None:
        return _curl(
            session.owner_redactor().obj(row),
            session,
            notes=["secrets not filled in: the session's server was deleted"],
        )
    config = server.to_config()
    url = str(row["http"].get("url"))
    current = shown_url(config.url) if config.url else ""
    if not current or not (url == current or (session.transport == "sse" and same_origin(url, config.url))):
        return _curl(
            session.owner_redactor().obj(row),
            session,
            notes=[
                f"secrets not filled in: this request went to {url}, not to the server's URL now ({current or 'none'})"
            ],
        )
    records = [AuthRecord.from_dict(r.data) for r in OAuthRecord.objects.filter(server=server).order_by("-updated")]
    tokens = next((r.tokens for r in records if r.tokens is not None and r.issued_for(config.url)), None)
    notes = (
        [f"the OAuth token is not filled in: the stored ones were issued for another URL than {current}"]
        if tokens is None and any(r.tokens is not None for r in records)
        else []
    )
    configured = {k.lower(): v for k, v in config.headers.items()}

    def unmask(name: str, value: str) -> str:
        if name.lower() in configured:
            return configured[name.lower()]
        if name.lower() == "authorization" and tokens is not None and value.lower().startswith("bearer"):
            return f"Bearer {tokens.access_token}"
        return value

    return _curl(row, session, unmask=unmask, real_url=config.url if url == current else None, notes=notes)


@login_required
def curl_command(request: HttpRequest, pk: int, seq: int) -> HttpResponse:
    """Masked as the owner's exports are; `?secrets=1` puts the real values back (the owner only)."""
    session = own_session(request.user, pk)
    row = _request_row(session, seq)
    if request.GET.get("secrets") == "1":
        return _with_secrets(session, row)
    return _curl(session.owner_redactor().obj(row), session)


def share_curl_command(request: HttpRequest, token: str, seq: int) -> HttpResponse:
    """Masked as every share is; never with the real values."""
    session, redact = shared(token)
    return _curl(redact.obj(_request_row(session, seq)), session)
