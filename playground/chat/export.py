"""A chat as one JSON file (its page's Export, and its share's): the conversation, the cards,
the model lane and the sessions it used, masked as its share is (the provider's key, every
secret of those sessions): an export goes where a share goes, to someone else."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse

from playground.mcp import jsontext

from .models import Chat, share_redactor

FORMAT = "mcp-playground-chat/1"


def chat_document(chat: Chat) -> dict[str, Any]:
    provider = chat.provider
    document = {
        "format": FORMAT,
        "chat": chat.pk,
        "title": chat.title,
        "created": chat.created.isoformat(),
        "updated": chat.updated.isoformat(),
        "mode": chat.mode,
        "step_limit": chat.step_limit,
        "provider": None
        if provider is None
        else {"api": provider.api, "base_url": provider.base_url, "model": provider.model},
        "sessions": [
            {"id": s.pk, "server": s.server_name, "transport": s.transport} for s in chat.sessions.order_by("pk")
        ],
        "messages": chat.messages,
        "items": chat.items,
        "lane": chat.lane,
    }
    return share_redactor(chat).obj(document)


def download(chat: Chat) -> HttpResponse:
    response = HttpResponse(jsontext.dumps(chat_document(chat)), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="chat-{chat.pk}.json"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
