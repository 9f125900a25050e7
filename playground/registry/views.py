"""Registry pages: list, add, edit, delete, detail, import/export, and the one-time login link."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db.models import Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from playground.mcp.secrets import mask_env, mask_headers
from playground.mcp.transports.http_common import shown_url
from playground.signed_in import SignedInRequest

from . import interchange
from .forms import ImportForm, ServerForm
from .models import LoginToken, Server
from .services import entry_from_server, import_servers, own_server


@login_required
def home(request: SignedInRequest) -> HttpResponse:
    servers = Server.objects.filter(owner=request.user).annotate(last_session_at=Max("sessions__started_at"))
    return render(request, "registry/home.html", {"servers": servers})


@login_required
@require_http_methods(["GET", "POST"])
def add(request: SignedInRequest) -> HttpResponse:
    form = ServerForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        server = form.save(commit=False)
        server.owner = request.user
        server.save()
        messages.success(request, f"Added {server.name}.")
        if form.split_message:
            messages.info(request, form.split_message)
        return redirect(server)
    return render(request, "registry/form.html", {"form": form, "title": "Add server"})


@login_required
@require_http_methods(["GET", "POST"])
def edit(request: SignedInRequest, pk: int) -> HttpResponse:
    server = own_server(request.user, pk)
    # Compared as parsed lists: the form's changed_data said "changed" on every save (the initial
    # value is the stored list, the posted one lines of text), so any edit told live sessions.
    roots_before = list(server.roots or [])
    form = ServerForm(request.POST or None, instance=server, user=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        if list(server.roots or []) != roots_before:
            tell_live_sessions_roots(server)
        messages.success(request, f"Saved {server.name}.")
        if form.split_message:
            messages.info(request, form.split_message)
        return redirect(server)
    return render(request, "registry/form.html", {"form": form, "server": server, "title": f"Edit {server.name}"})


def tell_live_sessions_roots(server: Server) -> None:
    """Live sessions of this server answer roots/list from the new list (and say it changed)."""
    from asgiref.sync import async_to_sync

    from playground.channel_layer import channel_layer

    layer = channel_layer()
    for channel in server.sessions.exclude(worker_channel="").values_list("worker_channel", flat=True):
        async_to_sync(layer.send)(channel, {"command": "set_roots", "params": list(server.roots or [])})


@login_required
@require_http_methods(["GET", "POST"])
def delete(request: SignedInRequest, pk: int) -> HttpResponse:
    server = own_server(request.user, pk)
    if request.method == "POST":
        name = server.name
        server.delete()
        messages.success(request, f"Deleted {name}.")
        return redirect("registry:home")
    return render(request, "registry/delete.html", {"server": server})


@login_required
def detail(request: SignedInRequest, pk: int) -> HttpResponse:
    server = own_server(request.user, pk)
    return render(
        request,
        "registry/detail.html",
        {
            "server": server,
            "url_shown": shown_url(server.url) if server.url else "",
            "env_shown": mask_env(server.env or {}),
            "headers_shown": mask_headers(server.headers or {}),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def import_view(request: SignedInRequest) -> HttpResponse:
    form = ImportForm(request.POST or None)
    context: dict = {"form": form}
    if request.method == "POST" and form.is_valid():
        try:
            result = interchange.parse(form.cleaned_data["text"])
        except interchange.InterchangeError as exc:
            form.add_error("text", str(exc))
        else:
            context["outcomes"] = import_servers(result, replace=form.cleaned_data["replace"], owner=request.user)
            context["warnings"] = result.warnings
            context["dialect"] = {
                "mcpServers": "mcpServers",
                "vscode": "VS Code servers",
                "bare": "a bare name → server mapping",
            }[result.dialect]
    return render(request, "registry/import.html", context)


def _export_response(servers: list[Server], fmt: str, filename: str) -> HttpResponse:
    fmt = "vscode" if fmt == "vscode" else "mcpServers"
    document = interchange.export([entry_from_server(s) for s in servers], fmt)
    response = HttpResponse(interchange.dumps(document), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def export_all(request: SignedInRequest) -> HttpResponse:
    fmt = request.GET.get("format", "")
    name = "mcp.json" if fmt == "vscode" else "mcp-servers.json"
    return _export_response(list(Server.objects.filter(owner=request.user)), fmt, name)


@login_required
def export_one(request: SignedInRequest, pk: int) -> HttpResponse:
    server = own_server(request.user, pk)
    fmt = request.GET.get("format", "")
    slug = slugify(server.name) or f"server-{server.pk}"
    suffix = "-vscode" if fmt == "vscode" else ""
    return _export_response([server], fmt, f"{slug}{suffix}.json")


@never_cache
def token_login(request: HttpRequest, token: str) -> HttpResponse:
    """The one-time link `manage.py playground_setup` prints: log in once, then the link is spent.
    `manage.py inspect`'s link also names a server: the browser is sent on to start a session of
    it (what may be started is remembered in this login's own session, so no other page can
    have the browser start one by sending it to that address)."""
    claimed = LoginToken.redeem(token)
    if claimed is None or not claimed.user.is_active:
        return render(request, "registration/token_invalid.html", status=403)
    login(request, claimed.user, backend="django.contrib.auth.backends.ModelBackend")
    if claimed.connect_id is not None:
        request.session[LoginToken.ARRIVING] = claimed.connect_id
        return redirect("sessions:arrive")
    return redirect("registry:home")
