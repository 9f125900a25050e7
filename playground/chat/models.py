"""Model providers (a user's API keys) and saved chats.

An API key is a secret like an OAuth client secret (playground/oauth): it lives in this table
only, is never rendered into a page (forms show it masked), never in a chat's lane (wire.py masks
it in every request it records), an export or a share, and never logged.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse

from playground.mcp.secrets import Redactor
from playground.transcripts.models import Session, new_share_token

from . import wire


class Provider(models.Model):
    class Api(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible"
        ANTHROPIC = "anthropic", "Anthropic"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="model_providers")
    api = models.CharField(max_length=10, choices=Api.choices, default=Api.OPENAI)
    base_url = models.URLField(max_length=2000)
    api_key = models.CharField(max_length=2000, blank=True)
    model = models.CharField(max_length=200)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.model} ({self.get_api_display()}, {self.base_url})"

    def endpoint(self) -> wire.Endpoint:
        return wire.Endpoint(self.api, self.base_url, self.api_key, self.model)  # type: ignore[arg-type]

    @property
    def key_shown(self) -> str:
        return wire.masked_key(self.api_key) if self.api_key else "(none)"


class JsonArrayLength(models.Func):
    """The length of a JSON array column, counted by the database (SQLite, PostgreSQL)."""

    function = "json_array_length"
    output_field = models.IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return super().as_sql(compiler, connection, function="jsonb_array_length", **extra)


class Chat(models.Model):
    """A conversation: its messages (wire.Message, neutral), what the page showed (`items`), and
    its model lane (one wire.Exchange dict each); the sessions it used."""

    class Mode(models.TextChoices):
        NATIVE = "native", "Native tool calling"
        CHATBOT = "chatbot", "Tools in the system prompt (simple-chatbot)"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chats")
    provider = models.ForeignKey(Provider, on_delete=models.SET_NULL, null=True, blank=True)
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.NATIVE)
    step_limit = models.PositiveIntegerField(default=8)
    messages = models.JSONField(default=list)
    items = models.JSONField(default=list)
    lane = models.JSONField(default=list)
    sessions = models.ManyToManyField(Session, blank=True, related_name="chats")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated"]

    def get_absolute_url(self) -> str:
        return reverse("chat:chat", args=[self.pk])

    @property
    def title(self) -> str:
        first = next((m.get("text", "") for m in self.messages if m.get("role") == "user"), "")
        return (first[:60] + "…") if len(first) > 60 else (first or f"Chat {self.pk}")


class ChatShare(models.Model):
    """A read-only link to one chat (256 random bits, revocable), as a session's share link."""

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="shares")
    token = models.CharField(max_length=64, unique=True, default=new_share_token)
    created = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("chat:share", args=[self.token])


def share_redactor(chat: Chat) -> Redactor:
    """What a chat's share masks: every secret of the sessions it used (a server may echo a header
    value or a token in a result the model then quotes), and the provider's key."""
    values = [v for s in chat.sessions.all() for v in s.share_redactor().originals]
    if chat.provider is not None and chat.provider.api_key:
        values.append(chat.provider.api_key)
    return Redactor(values)
