"""The session page's workspace beyond the catalogue's forms: a resource opened (from the
catalogue or a `resource_link` in a result), and a tool's fields rendered for given values
(the JSON editor switching back to the form, and a form's remembered values coming back).

The forms themselves are views.py's; the page's behaviour around them is static/workspace.js.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from playground.mcp import jsontext
from playground.schemaforms import render_form
from playground.transcripts.access import own_session

from ..protocol import catalogue_item

MAX_URI = 8 * 1024                 # characters of a resource URI the view accepts
MAX_VALUES = 512 * 1024            # characters of the values a tool's fields are rendered for


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
    return render(request, "sessions/resource_view.html", {"uri": uri, "resource": listed or {}, "listed": bool(listed)})


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
        return HttpResponse(f"the arguments hold {len(text)} characters; the form takes at most {MAX_VALUES}",
                            status=413, content_type="text/plain")
    try:
        values: Any = jsontext.loads(text)
    except (ValueError, RecursionError) as exc:
        return HttpResponseBadRequest(f"not valid JSON: {exc}", content_type="text/plain")
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {"type": "object"}
    return HttpResponse(render_form(schema, prefix="args", values=values))
