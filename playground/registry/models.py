"""Registered MCP servers: how to reach them, stored as plain fields the core's ServerConfig mirrors."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from playground.mcp.config import ServerConfig


class Server(models.Model):
    """One MCP server the user can start a session with."""

    class Transport(models.TextChoices):
        STDIO = "stdio", "stdio"
        HTTP = "http", "Streamable HTTP"
        SSE = "sse", "SSE"
        AUTO = "auto", "Auto"

    class Era(models.TextChoices):
        LEGACY = "legacy", "Legacy"
        AUTO = "auto", "Auto"
        MODERN = "modern", "Modern"

    name = models.CharField(max_length=200)
    transport = models.CharField(max_length=10, choices=Transport.choices, default=Transport.STDIO)
    command = models.CharField(max_length=1000, blank=True)
    args = models.JSONField(default=list, blank=True)
    env = models.JSONField(default=dict, blank=True)
    cwd = models.CharField(max_length=1000, blank=True)
    # Start with the playground's whole environment (its secrets included) instead of the small
    # default one (HOME, LOGNAME, PATH, SHELL, TERM, USER): an explicit choice per server.
    inherit_env = models.BooleanField(default=False)
    url = models.CharField(max_length=2000, blank=True)
    headers = models.JSONField(default=dict, blank=True)
    era = models.CharField(max_length=10, choices=Era.choices, default=Era.LEGACY)
    # The version offered; "" = the latest of the era (ServerConfig.protocol_version).
    protocol_version = models.CharField(max_length=10, blank=True, default="")
    # Roots offered to the server (list of {"uri", "name"}); edited by a later feature.
    roots = models.JSONField(default=list, blank=True)
    # What a replay against this server leaves out of its comparison, on top of the defaults:
    # JSON pointer patterns (`*` one segment, `**` any number), e.g. /result/content/*/text.
    replay_ignore = models.JSONField(default=list, blank=True)
    # MCP Apps: declare the extension and render a tool's UI below its Result (features/apps.py).
    apps_enabled = models.BooleanField(default=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="mcp_servers"
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        # Names are each user's own: another user's server names are not even revealed by a clash.
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="unique_server_name_per_owner")]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("registry:detail", args=[self.pk])

    @property
    def is_stdio(self) -> bool:
        return self.transport == self.Transport.STDIO

    def to_config(self, timeout: float | None = None) -> ServerConfig:
        """The core's view of this server (no Django types leak into playground.mcp)."""
        config = ServerConfig(
            transport=self.transport,  # type: ignore[arg-type]
            command=self.command,
            args=[str(a) for a in (self.args or [])],
            env={str(k): str(v) for k, v in (self.env or {}).items()},
            cwd=self.cwd or None,
            inherit_env=self.inherit_env,
            url=self.url,
            headers={str(k): str(v) for k, v in (self.headers or {}).items()},
            era=self.era,  # type: ignore[arg-type]
            protocol_version=self.protocol_version,
        )
        if timeout is not None:
            config.timeout = timeout
        else:
            config.timeout = float(getattr(settings, "PLAYGROUND_REQUEST_TIMEOUT", config.timeout))
        return config


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class LoginToken(models.Model):
    """A one-time login link (like Jupyter's): only the hash is stored; single use; short-lived."""

    LIFETIME = timedelta(hours=1)
    ARRIVING = "playground.arriving"  # the login's session key naming the server a link starts

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    token_hash = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(default=timezone.now)
    expires = models.DateTimeField()
    used = models.DateTimeField(null=True, blank=True)
    # `manage.py inspect`: the link also starts a session of this server and lands on it.
    connect = models.ForeignKey(Server, null=True, blank=True, on_delete=models.CASCADE, related_name="+")

    @classmethod
    def issue(cls, user, lifetime: timedelta | None = None, connect: Server | None = None) -> str:
        """Create a token for `user` and return the plain token (shown once, never stored)."""
        token = secrets.token_urlsafe(32)
        now = timezone.now()
        cls.objects.create(
            user=user,
            token_hash=_hash_token(token),
            created=now,
            expires=now + (lifetime or cls.LIFETIME),
            connect=connect,
        )
        return token

    @classmethod
    def redeem(cls, token: str) -> LoginToken | None:
        """The token if it is known, unused and unexpired (its `user`, and the server it
        connects to if any); marks it used atomically."""
        now = timezone.now()
        digest = _hash_token(token)
        claimed = cls.objects.filter(token_hash=digest, used__isnull=True, expires__gt=now).update(used=now)
        if claimed != 1:
            return None
        return cls.objects.select_related("user").get(token_hash=digest)
