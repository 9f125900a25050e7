"""Pages around a live session: connect, the session page, forms, share links, exports."""
from __future__ import annotations

import json
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import uritemplate
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from playground.mcp.secrets import Redactor
from playground import security
from playground.registry.services import own_server
from playground.schemaforms import render_form
from playground.transcripts.access import own_session
from playground.transcripts.models import Session, ShareLink

from . import resend
from ..live.connecting import with_hint
from ..live.share_socket import close_share_viewers, shared_state
from ..live.durability import reap_dead_sessions
from ..features import FEATURES
from ..fragments.lines import line
from ..protocol import catalogue_item
from ..fragments.regions import catalogue_html, page
from ..transcript_window import seq_param, transcript_window
from ..live.worker import start_session

T = TypeVar("T")


def computed(function: Callable[..., T], *args: Any) -> Awaitable[T]:
    """`function(*args)` in a worker thread: CPU work that touches no database. Under daphne a
    sync view runs in the one thread-sensitive thread the recorder's database saves use too, so
    every live session would stop saving meanwhile: a view with server-sized work is async,
    reads its rows in that thread (short queries) and computes here."""
    return sync_to_async(function, thread_sensitive=False)(*args)


async def owned(request: HttpRequest, pk: int) -> Session:
    """The user's session `pk` (404 for anyone else's), from an async view."""
    return await sync_to_async(own_session)(await request.auser(), pk)


async def startable_server(request: HttpRequest, server_pk: int, *,
                           refused: str | None = None) -> tuple[Any, Any, HttpResponse | None]:
    """(user, server, None) when this user may start a session of the server (404 if not theirs);
    else a response that says why: the login page, or `refused` (by default the server's page)
    with the stdio policy's message."""
    user = await request.auser()
    if not user.is_authenticated:
        return user, None, redirect(f"{reverse('login')}?next={request.path}")
    server = await sync_to_async(own_server)(user, server_pk)
    if server.is_stdio:
        try:
            security.check_stdio_user(user)
        except security.PolicyError as exc:
            await sync_to_async(messages.error)(request, str(exc))
            return user, server, redirect(refused or reverse("registry:detail", args=[server.pk]))
    return user, server, None


async def start_and_show(request: HttpRequest, user: Any, server: Any, **options: Any) -> HttpResponse:
    """Start a session on `server` (a replay, a check: `options` of `start_session`) and show it."""
    session = await start_session(server, user, oauth_redirect_uri=request.build_absolute_uri(reverse("oauth:callback")),
                                  **options)
    return redirect("sessions:detail", pk=session.pk)


@require_POST
async def connect(request: HttpRequest, server_pk: int) -> HttpResponse:
    """Start a session whose worker lives in this process, then show it."""
    user, server, refused = await startable_server(request, server_pk)
    return refused or await start_and_show(request, user, server)


@login_required
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    reap_dead_sessions()
    session = own_session(request.user, pk)
    # ?at=SEQ (a line opened from a search): the events around it, marked; the websocket
    # replays the same window (?around=SEQ).
    at = seq_param(request.GET.get("at"))
    window = transcript_window(session.pk, at)
    rows = session.owner_redactor().obj(window.rows)
    context: dict[str, Any] = {}
    for feature in FEATURES:
        context.update(feature.page_context(session))
    return page(request, "sessions/session.html", {
        **context, "session": session, "state": with_hint(session.state(), rows),
        "catalogue_html": catalogue_html(session.pk, session.catalogue or {}),
        "lines": [line(r, owner=True) for r in rows], "window": window,
        "ws_url": f"/ws/sessions/{session.pk}/" + (f"?around={at}" if at else ""),
        "active_shares": session.shares.filter(revoked_at__isnull=True).order_by("created"),
        "keep_lines": settings.PLAYGROUND_PAGE_KEEP_LINES,
        "feature_heads": [f.head_template for f in FEATURES if f.head_template],
        "feature_regions": [f.region_template for f in FEATURES if f.region_template],
        **_feature_assets(),
        "feature_panels": [f.panel_template for f in FEATURES if f.panel_template],
    })


def _tool(session: Session, name: str) -> dict[str, Any]:
    tool = catalogue_item(session.catalogue, "tools", name)
    if tool is None:
        raise Http404("no such tool in this session's list")
    return tool


@login_required
def tool_form(request: HttpRequest, pk: int) -> HttpResponse:
    session = own_session(request.user, pk)
    return _tool_form(request, session, _tool(session, request.GET.get("name", "")))


def _tool_form(request: HttpRequest, session: Session, tool: dict[str, Any], *, arguments: dict[str, Any] | None = None,
               from_seq: int | None = None) -> HttpResponse:
    """A tool's form; `arguments` prefill it (Edit and resend of event `from_seq`)."""
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"}
    execution = tool.get("execution") if isinstance(tool.get("execution"), dict) else {}
    task_support = execution.get("taskSupport") if _server_tasks_tools(session) else None
    json_mode = arguments is not None and not resend.fits_form(schema, arguments)
    return render(request, "sessions/tool_form.html", {
        "tool": tool, "form_html": render_form(schema, prefix="args", values=arguments if not json_mode else None),
        "session_id": session.pk,
        "task_support": task_support if task_support in ("optional", "required") else None,
        "schema_json": json.dumps(schema), "input_schema_pretty": json.dumps(schema, indent=2, ensure_ascii=False),
        "output_schema_json": json.dumps(tool.get("outputSchema"), indent=2, ensure_ascii=False),
        "from_seq": from_seq, "json_mode": json_mode,
        "arguments_json": json.dumps(arguments, indent=2, ensure_ascii=False) if json_mode else "",
    })


@login_required
def prompt_form(request: HttpRequest, pk: int) -> HttpResponse:
    session = own_session(request.user, pk)
    name = request.GET.get("name", "")
    prompt = catalogue_item(session.catalogue, "prompts", name)
    if prompt is None:
        raise Http404("no such prompt in this session's list")
    arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
    return render(request, "sessions/prompt_form.html", {"prompt": prompt, "arguments": arguments,
                                                         "can_complete": _can_complete(session)})


@login_required
def template_form(request: HttpRequest, pk: int) -> HttpResponse:
    """A field per variable of a resource template (RFC 6570); the consumer expands and reads it."""
    session = own_session(request.user, pk)
    uri_template = request.GET.get("uri", "")
    template = catalogue_item(session.catalogue, "templates", uri_template)
    if template is None:
        raise Http404("no such resource template in this session's list")
    try:
        variables = list(uritemplate.URITemplate(uri_template).variable_names)
    except Exception:   # a malformed template from the server: show it, with no fields
        variables = []
    return render(request, "sessions/template_form.html", {"template": template, "variables": variables,
                                                           "can_complete": _can_complete(session)})


RAW_METHODS = ("tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list",
               "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
               "logging/setLevel", "ping", "tasks/list", "tasks/get", "tasks/result", "tasks/cancel",
               "server/discover", "subscriptions/listen", "notifications/cancelled",
               "notifications/roots/list_changed", "notifications/initialized")


@login_required
def raw_form(request: HttpRequest, pk: int) -> HttpResponse:
    """The raw request composer, shown in the workspace like a tool's form; `?from_seq=N`: Edit
    and resend of the request sent as event N (the tool's form for a call of a listed tool)."""
    session = own_session(request.user, pk)
    prefill: dict[str, Any] = {}
    if "from_seq" in request.GET:
        seq, message = resend.sent_request(session, request.GET["from_seq"])
        if (call := resend.listed_tool_call(session, message)) is not None:
            return _tool_form(request, session, call[0], arguments=call[1], from_seq=seq)
        prefill = {**resend.composer_values(message), "from_seq": seq}
    return render(request, "sessions/_raw_form.html", {"session": session, "methods": RAW_METHODS, **prefill})


def _can_complete(session: Session) -> bool:
    return isinstance(session.capabilities, dict) and "completions" in session.capabilities


def _server_tasks_tools(session: Session) -> bool:
    """The server declared task-augmented tools/call (2025-11-25 `tasks.requests.tools.call`)."""
    caps = session.capabilities if isinstance(session.capabilities, dict) else {}
    tasks = caps.get("tasks") if isinstance(caps.get("tasks"), dict) else {}
    requests = tasks.get("requests") if isinstance(tasks.get("requests"), dict) else {}
    tools = requests.get("tools") if isinstance(requests.get("tools"), dict) else {}
    return "call" in tools


@login_required
@require_POST
def share(request: HttpRequest, pk: int) -> HttpResponse:
    session = own_session(request.user, pk)
    link = ShareLink.objects.create(session=session, created_by=request.user)
    url = request.build_absolute_uri(reverse("sessions:share_page", args=[link.token]))
    return render(request, "sessions/share_link.html", {"url": url, "link": link})


@login_required
@require_POST
def revoke(request: HttpRequest, token: str) -> HttpResponse:
    link = get_object_or_404(ShareLink, token=token)
    own_session(request.user, link.session_id)
    link.revoked_at = timezone.now()
    link.save(update_fields=["revoked_at"])
    close_share_viewers(link)
    return redirect("sessions:detail", pk=link.session_id)


def _shared(token: str) -> tuple[Session, Redactor]:
    link = ShareLink.objects.select_related("session").filter(token=token, revoked_at__isnull=True).first()
    if link is None:
        raise Http404("this share link does not exist or was revoked")
    return link.session, link.session.share_redactor()


def share_page(request: HttpRequest, token: str) -> HttpResponse:
    """Read-only, no login: the transcript with every secret value masked. A live session's
    page follows it (share_live.ShareConsumer); an ended one's is a snapshot."""
    session, redact = _shared(token)
    window = transcript_window(session.pk)
    total, rows = window.total, window.rows
    live = session.is_live
    return page(request, "sessions/share.html", {
        "session": session, "token": token, "total": total, "state": shared_state(session),
        "lines": [line(redact.obj(r)) for r in rows], "live": live, "snapshot": not live,
        "mode": "live" if live else "snapshot", "ws_url": f"/ws/share/{token}/",
        "feature_parts": _share_parts(session, redact, token),
        **_feature_assets(),
    })


def _feature_assets() -> dict[str, list[str]]:
    """The stylesheets and scripts the features add to the session and share pages."""
    return {"feature_stylesheets": [css for f in FEATURES for css in f.stylesheets],
            "feature_scripts": [js for f in FEATURES for js in f.scripts]}


def _share_parts(session: Session, redact: Redactor, token: str) -> list[str]:
    """What each feature shows on a share page (features/base.py: `share_template`)."""
    parts = []
    for feature in FEATURES:
        if feature.share_template and (context := feature.share_context(session, redact, token)) is not None:
            parts.append(render_to_string(feature.share_template, context))
    return parts


def _jsonl(session: Session, redact: Redactor) -> Iterator[str]:
    for data in session.events.order_by("seq").values_list("data", flat=True).iterator(chunk_size=2000):
        yield json.dumps(redact.obj(data), ensure_ascii=False) + "\n"


def _json_document(session: Session, redact: Redactor) -> Iterator[str]:
    state = session.state()
    header = {"session": {**redact.obj(state), "server_name": session.server_name,
                          "started_at": session.started_at.isoformat(),
                          # when the events' `t` was 0: an event happened at clock_origin + t
                          "clock_origin": session.clock_origin.isoformat() if session.clock_origin else None,
                          "ended_at": session.ended_at.isoformat() if session.ended_at else None}}
    yield json.dumps(header, ensure_ascii=False)[:-1] + ', "events": ['
    first = True
    for text in _jsonl(session, redact):
        yield ("" if first else ",") + text.rstrip("\n")
        first = False
    yield "]}\n"


async def _in_batches(chunks: Iterator[str], lines: int = 1000) -> AsyncIterator[str]:
    """A sync iterator served under ASGI a batch at a time. Django's ASGI handler turns a sync
    iterator into a list before sending a byte (`sync_to_async(list)`): a 50,000-event export
    took 1.4 s to its first byte and ~100 MB. The database cursor is advanced in Channels' one
    database thread (thread-sensitive), batch by batch."""
    take = sync_to_async(lambda: "".join(itertools.islice(chunks, lines)), thread_sensitive=True)
    while batch := await take():
        yield batch


def _stream(request: HttpRequest, chunks: Iterator[str], content_type: str, filename: str) -> StreamingHttpResponse:
    """Streamed: in batches under ASGI (daphne), as is under WSGI (the test client)."""
    content = _in_batches(chunks) if isinstance(request, ASGIRequest) else chunks
    response = StreamingHttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
def export_jsonl(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = own_session(request.user, pk)
    return _stream(request, _jsonl(session, session.owner_redactor()), "application/x-ndjson",
                   f"session-{session.pk}.jsonl")


@login_required
def export_json(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    session = own_session(request.user, pk)
    return _stream(request, _json_document(session, session.owner_redactor()), "application/json",
                   f"session-{session.pk}.json")


def share_jsonl(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = _shared(token)
    return _stream(request, _jsonl(session, redact), "application/x-ndjson", f"session-{session.pk}.jsonl")


def share_json(request: HttpRequest, token: str) -> StreamingHttpResponse:
    session, redact = _shared(token)
    return _stream(request, _json_document(session, redact), "application/json", f"session-{session.pk}.json")
