"""The session page's workspace: a resource opened (from the
catalogue or a `resource_link` in a result), and a tool's fields rendered for given values
(the JSON editor switching back to the form, and a form's remembered values coming back), and
the forms it shows: a tool's, a prompt's, a resource template's, the raw request composer (with
Edit and resend, resend.py). The page's behaviour around them is static/workspace.js.
"""

from __future__ import annotations

import json
from typing import Any

import uritemplate
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from playground.mcp import jsontext
from playground.schemaforms import render_form
from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from ..protocol import catalogue_item
from . import resend

MAX_URI = 8 * 1024  # characters of a resource URI the view accepts
MAX_VALUES = 512 * 1024  # characters of the values a tool's fields are rendered for


@login_required
@require_GET
def resource_view(request: HttpRequest, pk: int) -> HttpResponse:
    """A resource in the workspace: what the server's list says of it (if it lists it: a link in
    a result may name any URI), and the form that reads it, which the page sends on opening."""
    session = own_session(request.user, pk)
    uri = request.GET.get("uri", "")
    if not uri or len(uri) > MAX_URI:
        return HttpResponseBadRequest("give the URI of a resource")
    listed = catalogue_item(session.catalogue, "resources", uri)
    return render(
        request, "sessions/resource_view.html", {"uri": uri, "resource": listed or {}, "listed": bool(listed)}
    )


@login_required
@require_POST
def tool_fields(request: HttpRequest, pk: int) -> HttpResponse:
    """A tool's generated fields holding `arguments` (JSON): the same renderer as the form's
    first render, so what the form can show of them is exactly what it would send back."""
    session = own_session(request.user, pk)
    tool = catalogue_item(session.catalogue, "tools", request.POST.get("name", ""))
    if tool is None:
        return HttpResponseBadRequest("no such tool in this session's list")
    text = request.POST.get("arguments", "")
    if len(text) > MAX_VALUES:
        return HttpResponse(
            f"the arguments hold {len(text)} characters; the form takes at most {MAX_VALUES}",
            status=413,
            content_type="text/plain",
        )
    try:
        values: Any = jsontext.loads(text)
    except (ValueError, RecursionError) as exc:
        return HttpResponseBadRequest(f"not valid JSON: {exc}", content_type="text/plain")
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"}
    return HttpResponse(render_form(schema, prefix="args", values=values))


def _tool(session: Session, name: str) -> dict[str, Any]:
    tool = catalogue_item(session.catalogue, "tools", name)
    if tool is None:
        raise Http404("no such tool in this session's list")
    return tool


@login_required
def tool_form(request: HttpRequest, pk: int) -> HttpResponse:
    session = own_session(request.user, pk)
    return _tool_form(request, session, _tool(session, request.GET.get("name", "")))


def _tool_form(
    request: HttpRequest,
    session: Session,
    tool: dict[str, Any],
    *,
    arguments: dict[str, Any] | None = None,
    from_seq: int | None = None,
) -> HttpResponse:
    """A tool's form; `arguments` prefill it (Edit and resend of event `from_seq`)."""
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"}
    execution = tool.get("execution")
    execution = execution if isinstance(execution, dict) else {}
    task_support = execution.get("taskSupport") if _server_tasks_tools(session) else None
    json_mode = arguments is not None and not resend.fits_form(schema, arguments)
    return render(
        request,
        "sessions/tool_form.html",
        {
            "tool": tool,
            "form_html": render_form(schema, prefix="args", values=arguments if not json_mode else None),
            "session_id": session.pk,
            "task_support": task_support if task_support in ("optional", "required") else None,
            "schema_json": json.dumps(schema),
            "input_schema_pretty": json.dumps(schema, indent=2, ensure_ascii=False),
            "output_schema_json": json.dumps(tool.get("outputSchema"), indent=2, ensure_ascii=False),
            "from_seq": from_seq,
            "json_mode": json_mode,
            "arguments_json": json.dumps(arguments, indent=2, ensure_ascii=False) if json_mode else "",
        },
    )


@login_required
def prompt_form(request: HttpRequest, pk: int) -> HttpResponse:
    session = own_session(request.user, pk)
    name = request.GET.get("name", "")
    prompt = catalogue_item(session.catalogue, "prompts", name)
    if prompt is None:
        raise Http404("no such prompt in this session's list")
    arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
    return render(
        request,
        "sessions/prompt_form.html",
        {"prompt": prompt, "arguments": arguments, "can_complete": _can_complete(session)},
    )


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
    except Exception:  # a malformed template from the server: show it, with no fields
        variables = []
    return render(
        request,
        "sessions/template_form.html",
        {"template": template, "variables": variables, "can_complete": _can_complete(session)},
    )


RAW_METHODS = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "ping",
    "tasks/list",
    "tasks/get",
    "tasks/result",
    "tasks/cancel",
    "server/discover",
    "subscriptions/listen",
    "notifications/cancelled",
    "notifications/roots/list_changed",
    "notifications/initialized",
)


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
    tasks = caps.get("tasks")
    tasks = tasks if isinstance(tasks, dict) else {}
    requests = tasks.get("requests")
    requests = requests if isinstance(requests, dict) else {}
    tools = requests.get("tools")
    tools = tools if isinstance(tools, dict) else {}
    return "call" in tools
