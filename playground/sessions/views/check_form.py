"""The Check server form: which tools the check may call (calling a tool runs its side
effects), then a session of kind "check" whose check feature runs the battery.

A GET never contacts the server: it offers the tools of the server's last session that listed
any. Listing them now starts the server (a stdio command runs) and is the person's decision: a
POST with the CSRF token ("Fetch the tool list"), so that no page elsewhere can make it happen
by linking here (a top-level navigation carries the SameSite=Lax session cookie)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from playground import security
from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.events import Tap
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import TransportError
from playground.registry.models import Server
from playground.transcripts.models import Session

from .connect import start_and_show, startable_server

LIST_TIMEOUT = 15.0  # the quick listing's requests
MAX_TICKED = 500


def last_tools(server: Server, user: Any) -> tuple[list[dict[str, Any]], Session | None]:
    """The tools of the server's latest session that listed any (the catalogue it saved)."""
    latest = Session.objects.filter(server=server, owner=user).order_by("-started_at")[:20]
    for session in latest.only("pk", "started_at", "catalogue").iterator(chunk_size=1):  # (usually the first)
        tools = (session.catalogue or {}).get("tools") if isinstance(session.catalogue, dict) else None
        if isinstance(tools, list) and tools:
            return [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)], session
    return [], None


async def list_tools_now(server: Server) -> list[dict[str, Any]]:
    """A quick listing session (not recorded): connect, tools/list (every page), close.
    Raises what went wrong: ConnectError or PolicyError before the listing, JsonRpcError,
    RequestTimeout or TransportError during it."""
    config = server.to_config()
    config.timeout = min(config.timeout, LIST_TIMEOUT)
    security.check_config(config)
    client: McpClient = await open_client(config, tap=Tap(), guard=security.net_guard())
    try:
        if "tools" not in (client.server_capabilities or {}):
            return []
        return [t for t in await client.list_tools() if isinstance(t.get("name"), str)]
    finally:
        await client.close()


def read_only(tool: dict[str, Any]) -> bool:
    notes = tool.get("annotations")
    return isinstance(notes, dict) and notes.get("readOnlyHint") is True


async def check_form(request: HttpRequest, server_pk: int) -> HttpResponse:
    user, server, refused = await startable_server(request, server_pk)
    if refused is not None:
        return refused
    fetched = request.method == "POST" and request.POST.get("fetch") == "1"
    if request.method == "POST" and not fetched:
        names = [n for n in request.POST.getlist("call_tools") if n][:MAX_TICKED]
        return await start_and_show(
            request, user, server, kind=Session.Kind.CHECK, hints={"check": {"call_tools": names}}
        )
    tools, source = await sync_to_async(last_tools)(server, user)
    fetch_error = ""
    if fetched:
        try:
            tools, source = await list_tools_now(server), None
        except (ConnectError, security.PolicyError, JsonRpcError, RequestTimeout, TransportError, OSError) as exc:
            fetch_error = str(exc) or type(exc).__name__
    rows = [{"tool": t, "read_only": read_only(t), "index": i} for i, t in enumerate(tools)]
    return await sync_to_async(render)(
        request,
        "sessions/check_form.html",
        {
            "server": server,
            "rows": rows,
            "source": source,
            "fetched": fetched and not fetch_error,
            "fetch_error": fetch_error,
        },
    )
