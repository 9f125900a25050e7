"""Capture tokens, and the state of each capture that uploads into a captured session."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.crypto import salted_hmac

TOKEN_PREFIX = "mcpcap_"  # recognisable in a config file, a log or a secret scanner


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _token_for(nonce: str) -> str:
    return TOKEN_PREFIX + salted_hmac("playground.capture.token", nonce, algorithm="sha256").hexdigest()[:43]


class CaptureToken(models.Model):
    """A per-user token a capture uploads with. It can only add captured sessions for its owner's
    registered servers; it reads nothing.

    Only its hash is stored, with a random nonce from which the token is derived with the
    SECRET_KEY (an HMAC): the database alone does not hold the token, and its owner's Watch a host
    entries can still show it (a token shown once and lost would make every entry useless)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="capture_tokens")
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    nonce = models.CharField(max_length=64)
    created = models.DateTimeField(default=timezone.now)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def issue(cls, owner: Any, name: str) -> tuple[CaptureToken, str]:
        """A new token for `owner` and its plain value."""
        token = cls(owner=owner, name=name[:100] or "capture")
        plain = token._new_secret()
        token.save()
        return token, plain

    def _new_secret(self) -> str:
        self.nonce = secrets.token_hex(16)
        plain = _token_for(self.nonce)
        self.token_hash = token_hash(plain)
        return plain

    def rotate(self) -> str:
        """A new value for the token; the old one stops working at once."""
        plain = self._new_secret()
        self.save(update_fields=["nonce", "token_hash"])
        return plain

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    @property
    def plain(self) -> str:
        """The token, for its owner's entries (derived, not stored)."""
        return _token_for(self.nonce)

    @classmethod
    def authenticate(cls, plain: str) -> CaptureToken | None:
        """The active token whose value is `plain`, or None."""
        if not plain.startswith(TOKEN_PREFIX) or len(plain) > 100:
            return None
        return cls.objects.filter(token_hash=token_hash(plain), revoked_at__isnull=True).select_related("owner").first()


class Capture(models.Model):
    """One capture process's upload: the captured session it fills, and where its records are.

    Records are applied in their `i` order, whatever order requests bring them in: `next_i` is
    the next one to apply (those after a gap wait in CaptureRecord). The row is locked while a
    request applies records (one writer per session, across processes)."""

    uuid = models.CharField(max_length=32, unique=True)
    session = models.OneToOneField("transcripts.Session", on_delete=models.CASCADE, related_name="capture")
    server = models.ForeignKey("registry.Server", null=True, on_delete=models.SET_NULL, related_name="+")
    token = models.ForeignKey(CaptureToken, null=True, on_delete=models.SET_NULL, related_name="captures")
    next_i = models.PositiveBigIntegerField(default=0)
    next_seq = models.PositiveIntegerField(default=1)
    # The requests seen and not yet answered, for pairing responses (the tap's, between uploads).
    open_requests = models.JSONField(default=list, blank=True)
    requests = models.PositiveIntegerField(default=0)  # uploads received
    ended = models.BooleanField(default=False)  # an `end` record was applied
    # An HTTP capture's connection: "mcp:<Mcp-Session-Id>" or "sse:<session_id>" (http_proxy.py).
    http_key = models.CharField(max_length=300, blank=True, db_index=True)
    # A long line's `part` records waiting for its frame, per direction: {"recv": {"bytes": n,
    # "cut": bool}} (the parts themselves are CapturePart rows).
    pending_parts = models.JSONField(default=dict, blank=True)


class CaptureRecord(models.Model):
    """A record that came before the ones it follows (a gap): held until the gap is filled."""

    capture = models.ForeignKey(Capture, on_delete=models.CASCADE, related_name="held")
    i = models.PositiveBigIntegerField()
    data = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["capture", "i"], name="unique_capture_record")]


class CapturePart(models.Model):
    """A piece of a frame line too long for one upload, kept until the frame that ends it."""

    capture = models.ForeignKey(Capture, on_delete=models.CASCADE, related_name="parts")
    i = models.PositiveBigIntegerField()
    dir = models.CharField(max_length=4)
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["capture", "i"], name="unique_capture_part")]
