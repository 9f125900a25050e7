"""A session with a server and every event of its transcript, persisted in order."""

from __future__ import annotations

import datetime
import secrets
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from playground.mcp.secrets import Redactor

if TYPE_CHECKING:
    from playground.sessions.protocol import SessionState


class Session(models.Model):
    class Status(models.TextChoices):
        CONNECTING = "connecting", "Connecting"
        CONNECTED = "connected", "Connected"
        ENDED = "ended", "Ended"
        FAILED = "failed", "Failed"

    server = models.ForeignKey(
        "registry.Server", null=True, blank=True, on_delete=models.SET_NULL, related_name="sessions"
    )
    server_name = models.CharField(max_length=200)
    transport = models.CharField(max_length=20, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="mcp_sessions"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.CONNECTING)
    era = models.CharField(max_length=10, blank=True)
    era_evidence = models.TextField(blank=True)
    protocol_version = models.CharField(max_length=40, blank=True)
    server_info = models.JSONField(default=dict, blank=True)
    capabilities = models.JSONField(default=dict, blank=True)
    instructions = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    # When the transcript's `t` was 0 (the tap's start, to the microsecond): a line's time of day is
    # clock_origin + t. Null for sessions recorded before it was kept (started_at stands in).
    clock_origin = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.TextField(blank=True)
    event_count = models.PositiveIntegerField(default=0)
    # Problems the schema lint found in the saved frames (each frame's are on its event: `schema_problems`).
    schema_problems = models.PositiveIntegerField(default=0)
    # The last lists fetched (tools, resources, templates, prompts): forms are built from these.
    catalogue = models.JSONField(default=dict, blank=True)
    # The channel of the worker that owns the live connection (empty when none does).
    worker_channel = models.CharField(max_length=200, blank=True)
    # Touched by the worker every PLAYGROUND_HEARTBEAT_SECONDS: a live session whose heartbeat is
    # older than three beats lost its worker (its process died); see sessions/durability.py.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # When a tab or a live share viewer last showed it (touched every beat while one does): a live
    # session nobody watched for PLAYGROUND_IDLE_MINUTES ends (live/workers.py).
    viewed_at = models.DateTimeField(null=True, blank=True)
    # Values that must never reach a share page or a share's export (header and env values,
    # and everything in oauth_secret_values).
    secret_values = models.JSONField(default=list, blank=True)
    # What the OAuth flow obtained or holds (access, refresh and ID tokens, codes, verifiers,
    # client secrets): masked wherever the session is read, the owner's page and exports
    # included. The events keep every frame as it came; this is applied when they are shown.
    oauth_secret_values = models.JSONField(default=list, blank=True)

    # What the session was for: a person working with the server, a replay of an earlier
    # session (`source`), or a server check. Replays and checks keep their outcome in `report`
    # (the Differences, the check's rows), saved with the transcript and shown on its share pages.
    class Kind(models.TextChoices):
        SESSION = "session", "Session"
        REPLAY = "replay", "Replay"
        CHECK = "check", "Server check"
        # The traffic between a real host and the server, uploaded by a capture (playground/capture):
        # no worker (the host is the client); live while the capture's records keep coming.
        CAPTURED = "captured", "Captured"

    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.SESSION)
    source = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replays")
    report = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.server_name} @ {self.started_at:%Y-%m-%d %H:%M}"

    def owner_redactor(self) -> Redactor:
        """What the owner reads (page, exports) is masked of the OAuth values."""
        return Redactor(self.oauth_secret_values or [])

    def share_redactor(self) -> Redactor:
        """What a share link shows is masked of every secret value (the OAuth ones among them)."""
        return Redactor([*(self.secret_values or []), *(self.oauth_secret_values or [])])

    def visible_to(self, user: Any) -> bool:
        """Only the owner sees a session on its pages (staff see every one, in the admin only)."""
        return bool(user and user.is_authenticated and self.owner_id is not None and self.owner_id == user.pk)

    def state(self) -> SessionState:
        """The state strip's facts."""
        return {
            "id": self.pk,
            "status": self.status,
            "era": self.era,
            "era_evidence": self.era_evidence,
            "protocol_version": self.protocol_version,
            "server_info": self.server_info,
            "capabilities": self.capabilities,
            "instructions": self.instructions,
            "transport": self.transport,
            "end_reason": self.end_reason,
            "event_count": self.event_count,
            "started": self.started_at.timestamp(),
            "schema_problems": self.schema_problems,
        }

    @property
    def time_zero(self) -> datetime.datetime:
        """The moment each event's `t` counts from: `clock_origin`, or the start for sessions
        saved before it was kept."""
        return self.clock_origin or self.started_at

    @property
    def clock_origin_ms(self) -> int:
        """`time_zero` as Unix milliseconds, what the page adds each line's `t` to."""
        return round(self.time_zero.timestamp() * 1000)

    @property
    def is_live(self) -> bool:
        """Live: its worker runs, or (a captured session, which has none) its capture's records come."""
        live = self.status in (self.Status.CONNECTING, self.Status.CONNECTED)
        return live and (bool(self.worker_channel) or self.kind == self.Kind.CAPTURED)


class WrittenJSONField(models.JSONField):
    """A JSONField without SQLite's CHECK (JSON_VALID(...)) constraint: what is written is
    always encoded by us (`save_events`, or the ORM), and re-parsing each row in the check was
    ~40% of an insert's time in a flood (~2 us a row). PostgreSQL's jsonb validates as before."""

    def db_check(self, connection: Any) -> str | None:
        return None


class Event(models.Model):
    """One TranscriptEvent; `data` is exactly the event's JSONL line (the export format)."""

    # No index of its own: the unique (session, seq) index serves every lookup by session, and a
    # second index cost each inserted event another B-tree write (a flood inserts thousands a second).
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="events", db_index=False)
    seq = models.PositiveIntegerField()
    t = models.FloatField()
    dir = models.CharField(max_length=8)
    method = models.CharField(max_length=200, blank=True)
    data = WrittenJSONField()

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="unique_event_seq")]


def new_share_token() -> str:
    """256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


class ShareLink(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="shares")
    token = models.CharField(max_length=64, unique=True, default=new_share_token)
    created = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    revoked_at = models.DateTimeField(null=True, blank=True)

    @property
    def active(self) -> bool:
        return self.revoked_at is None
