"""The chat's pages: Model providers (add, edit, delete), the chats (listed, new), one chat."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from playground.registry.models import Server

from . import render as fragments
from .export import download
from .forms import ProviderForm
from .models import Chat, ChatShare, JsonArrayLength, Provider, share_redactor


def _own_chat(request: HttpRequest, pk: int) -> Chat:
    chat = Chat.objects.filter(pk=pk, owner_id=request.user.pk).first()
    if chat is None:
        raise Http404("no such chat")
    return chat


def _own_provider(request: HttpRequest, pk: int) -> Provider:
    provider = Provider.objects.filter(pk=pk, owner_id=request.user.pk).first()
    if provider is None:
        raise Http404("no such provider")
    return provider


@login_required
def providers(request: HttpRequest) -> HttpResponse:
    return render(request, "chat/providers.html", {"providers": Provider.objects.filter(owner_id=request.user.pk)})


@login_required
def provider_form(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    instance = _own_provider(request, pk) if pk is not None else Provider()
    form = ProviderForm(request.POST or None, instance=instance)
    if request.method == "POST" and form.is_valid():
        provider = form.save(commit=False)
        provider.owner = request.user
        if form.cleaned_data.get("clear_key"):
            provider.api_key = ""
        provider.save()
        messages.success(request, f"Model provider {provider.model} saved.")
        return redirect("chat:providers")
    return render(request, "chat/provider_form.html", {"form": form, "provider": instance if pk else None})


@login_required
@require_POST
def provider_delete(request: HttpRequest, pk: int) -> HttpResponse:
    provider = _own_provider(request, pk)
    provider.delete()
    messages.success(request, "Model provider deleted.")
    return redirect("chat:providers")


@login_required
def chats(request: HttpRequest) -> HttpResponse:
    """The saved chats, and New chat."""
    if request.method == "POST":
        chat = Chat(owner=request.user)  # type: ignore[misc]  # (login_required: a User)
        chat.save()
        return redirect(chat)
    # The list needs titles and counts, not the conversations: a chat's items and model lane (every
    # request it sent, whole) grow with each step, and were all read to show one line.
    listed = (
        Chat.objects.filter(owner_id=request.user.pk)
        .defer("items", "lane")
        .annotate(lane_count=JsonArrayLength("lane"), message_count=JsonArrayLength("messages"))
    )
    return render(request, "chat/chats.html", {"chats": listed})


@login_required
def chat(request: HttpRequest, pk: int) -> HttpResponse:
    chat = _own_chat(request, pk)
    return render(
        request,
        "chat/chat.html",
        {
            "chat": chat,
            "servers": Server.objects.filter(owner_id=request.user.pk).order_by("name"),
            "providers": Provider.objects.filter(owner_id=request.user.pk),
            "items_html": [fragments.item_html(i) for i in chat.items],
            "lane_html": [fragments.exchange_html(x, n) for n, x in enumerate(chat.lane, start=1)],
            "sessions": chat.sessions.order_by("pk"),
            "used_servers": set(chat.sessions.values_list("server_id", flat=True)),
            "ws_url": f"/ws/chats/{chat.pk}/",
            "shares": chat.shares.filter(revoked_at__isnull=True),
        },
    )


@login_required
@require_POST
def share_create(request: HttpRequest, pk: int) -> HttpResponse:
    chat = _own_chat(request, pk)
    ChatShare.objects.create(chat=chat)
    messages.success(request, "Share link made: anyone with it can read this chat (secrets masked).")
    return redirect(chat)


@login_required
@require_POST
def share_revoke(request: HttpRequest, pk: int, token: str) -> HttpResponse:
    chat = _own_chat(request, pk)
    chat.shares.filter(token=token).update(revoked_at=timezone.now())
    messages.success(request, "Share link revoked.")
    return redirect(chat)


def share(request: HttpRequest, token: str) -> HttpResponse:
    """A chat read-only, for anyone with the link: no control that acts, every secret masked; the
    sessions it used linked to their own shares where they have one."""
    link = ChatShare.objects.filter(token=token, revoked_at__isnull=True).select_related("chat").first()
    if link is None:
        raise Http404("no such share")
    chat = link.chat
    redactor = share_redactor(chat)
    sessions = [
        (s, s.shares.filter(revoked_at__isnull=True).order_by("created").first()) for s in chat.sessions.order_by("pk")
    ]
    return render(
        request,
        "chat/share.html",
        {
            "chat": chat,
            "token": token,
            "items_html": [fragments.item_html(i, shared=True) for i in redactor.obj(chat.items)],
            "lane_html": [fragments.exchange_html(x, n) for n, x in enumerate(redactor.obj(chat.lane), start=1)],
            "sessions": sessions,
        },
    )


@login_required
def export(request: HttpRequest, pk: int) -> HttpResponse:
    """The chat as JSON, masked as its share is."""
    return download(_own_chat(request, pk))


def share_export(request: HttpRequest, token: str) -> HttpResponse:
    link = ChatShare.objects.filter(token=token, revoked_at__isnull=True).select_related("chat").first()
    if link is None:
        raise Http404("no such share")
    return download(link.chat)
