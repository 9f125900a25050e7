"""A server's authorization settings and what its authorization servers issued.

Tokens and client secrets are secrets: they live here only (never in a transcript, a share
or an export), keyed by server and issuer like the core's store.
"""

from __future__ import annotations

from django.db import models

from playground.mcp.auth import AuthSettings
from playground.registry.models import Server


class ServerAuth(models.Model):
    """OAuth settings of one server (absent = defaults: discover everything, browser redirect)."""

    class RedirectMode(models.TextChoices):
        BROWSER = "browser", "Send the browser to the authorization server"
        HEADLESS = "headless", "Follow the redirect on the server (authorization servers that approve without a person)"

    server = models.OneToOneField(Server, on_delete=models.CASCADE, related_name="oauth")
    settings = models.JSONField(default=dict, blank=True)  # AuthSettings.to_dict()
    redirect_mode = models.CharField(max_length=10, choices=RedirectMode.choices, default=RedirectMode.BROWSER)

    def auth_settings(self) -> AuthSettings:
        return AuthSettings.from_dict(self.settings)


class OAuthRecord(models.Model):
    """The core's AuthRecord for one (server, issuer): client registration, tokens, AS metadata."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="oauth_records")
    issuer = models.CharField(max_length=2000)
    data = models.JSONField(default=dict)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["server", "issuer"], name="oauth_record_server_issuer")]
        ordering = ["-updated"]
