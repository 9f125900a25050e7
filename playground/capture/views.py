"""The capture's pages and its upload.

- The upload (`POST /capture/v1/frames`) serves a capture process, not a browser: the token
  alone authenticates it (no login, no CSRF), and a request carrying another site's Origin is
  refused (a web page must not post into someone's sessions with a token it learnt).
- The Capture tokens page: list, create, revoke, rotate (the owner's only).
"""

from __future__ import annotations

import logging

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from playground.signed_in import SignedInRequest

from .ingest import Forbidden, ingest
from .models import CaptureToken
from .publish import publish
from .records import LIMITS, Malformed, parse

log = logging.getLogger(__name__)


def _error(status: int, text: str) -> JsonResponse:
    return JsonResponse({"error": text}, status=status)


def own_origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


def foreign_origin(request: HttpRequest) -> bool:
    """Whether the request carries an Origin other than the playground's own."""
    origin = request.headers.get("Origin")
    return origin is not None and origin.rstrip("/").lower() != own_origin(request).lower()


def bearer(request: HttpRequest) -> str:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


@csrf_exempt
@require_POST
def upload(request: HttpRequest) -> JsonResponse:
    """The contract with the capture (docs/watch-a-host.md): 200 {session, acked}; 401, 403, 400,
    413 with {error}, and nothing recorded. (The search index catches up with these events when
    a search runs: search.acatch_up, as for events another process saved.)"""
    return _upload(request)[0]


def _upload(request: HttpRequest) -> tuple[JsonResponse, bool]:
    if foreign_origin(request):
        return _error(403, "requests from another site's page are refused"), False
    plain = bearer(request)
    token = CaptureToken.authenticate(plain) if plain else None
    if token is None:
        return _error(401, "missing, wrong or revoked capture token"), False
    try:
        length = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        return _error(400, "bad Content-Length"), False
    if length > LIMITS.request_bytes:
        return _error(413, f"an upload is at most {LIMITS.request_bytes} bytes"), False
    body = request.read(LIMITS.request_bytes + 1)
    if len(body) > LIMITS.request_bytes:
        return _error(413, f"an upload is at most {LIMITS.request_bytes} bytes"), False
    try:
        applied = ingest(token, plain, parse(body), publish)
    except Malformed as exc:
        return _error(400, str(exc)), False
    except Forbidden as exc:
        return _error(403, str(exc)), False
    return JsonResponse({"session": applied.session.pk, "acked": applied.acked}), bool(applied.rows)


# The Capture tokens page -------------------------------------------------------------------


def _tokens_page(request: SignedInRequest, shown: CaptureToken | None = None, plain: str = "") -> HttpResponse:
    """The list; a token just created or rotated is shown in full once (`plain`)."""
    return render(
        request,
        "capture/tokens.html",
        {"tokens": CaptureToken.objects.filter(owner=request.user), "shown": shown, "plain": plain},
    )


def _next(request: HttpRequest) -> str:
    """The page the form came from (a server's Watch a host region), if one of ours."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return ""


@login_required
@require_http_methods(["GET"])
def tokens(request: SignedInRequest) -> HttpResponse:
    return _tokens_page(request)


@login_required
@require_POST
def create(request: SignedInRequest) -> HttpResponse:
    name = request.POST.get("name", "").strip() or "capture"
    token, plain = CaptureToken.issue(request.user, name)
    if target := _next(request):
        messages.success(request, f"Created the capture token “{token.name}”: the entries below carry it.")
        return redirect(target)
    return _tokens_page(request, token, plain)


@login_required
@require_POST
def revoke(request: SignedInRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(CaptureToken, pk=pk, owner=request.user)
    token.revoke()
    messages.success(request, f"Revoked “{token.name}”: captures using it keep forwarding and stop recording.")
    return redirect(_next(request) or "capture:tokens")


@login_required
@require_POST
def rotate(request: SignedInRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(CaptureToken, pk=pk, owner=request.user, revoked_at__isnull=True)
    plain = token.rotate()
    if target := _next(request):
        messages.success(request, f"Rotated “{token.name}”: the old value stops working; copy the entries again.")
        return redirect(target)
    return _tokens_page(request, token, plain)
