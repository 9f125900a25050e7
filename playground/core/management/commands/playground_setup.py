"""`make run`'s first step: a local user, the bundled demo server, and a one-time login link.

Run after `migrate`. Idempotent: a second run creates nothing new but prints a fresh link.
"""

from __future__ import annotations

import os
import sys

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.urls import reverse
from django.utils import timezone

from playground.registry.models import LoginToken, Server
from playground.security import bind_warning
from playground.sessions.live.durability import reap_dead_sessions

DEMO_SERVER_NAME = "Playground demo"


def base_url() -> str:
    """Where the printed link points: the configured bind address, loopback for a wildcard bind."""
    host = str(getattr(settings, "PLAYGROUND_BIND", "127.0.0.1") or "127.0.0.1")
    port = getattr(settings, "PLAYGROUND_PORT", 8000)
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "[::1]"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


class Command(BaseCommand):
    help = "Ensure a local user and the demo server exist, then print a one-time login link."
    requires_system_checks: list[str] = []  # the bind warning is printed below, once

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-link", action="store_true", help="Do not create or print a login link.")

    def handle(self, *args, no_link: bool = False, **options) -> None:
        warning = bind_warning()
        if warning:
            self.stderr.write(self.style.WARNING(f"WARNING: {warning}"))
        ended = reap_dead_sessions()
        if ended:
            self.stdout.write(f"Marked {len(ended)} session(s) ended: their worker process had stopped.")
        user = self.ensure_user()
        self.ensure_demo_server(user)
        # Spent and expired links are of no use to anyone: keep the table small.
        LoginToken.objects.filter(expires__lte=timezone.now()).delete()
        LoginToken.objects.filter(used__isnull=False).delete()
        if not no_link:
            token = LoginToken.issue(user)
            link = base_url() + reverse("token_login", args=[token])
            self.stdout.write(f"MCP Playground: {link}")
            self.stdout.write(f"  (logs in as {user.get_username()!r} once, valid for 1 hour)")

    def ensure_user(self):
        User = get_user_model()
        username = os.environ.get("PLAYGROUND_USER", "").strip() or "admin"
        password = os.environ.get("PLAYGROUND_PASSWORD") or None
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if user is None:
            # The local operator: a superuser so /admin/ works too.
            user = User.objects.create_superuser(**{User.USERNAME_FIELD: username}, email="", password=password)
            if password is None:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            self.stdout.write(
                f"Created user {username!r}"
                + (" (password from PLAYGROUND_PASSWORD)." if password else " (log in with the link below).")
            )
        elif password is not None and not user.check_password(password):
            user.set_password(password)
            user.save(update_fields=["password"])
            self.stdout.write(f"Set the password of {username!r} from PLAYGROUND_PASSWORD.")
        return user

    def ensure_demo_server(self, owner) -> None:
        if Server.objects.filter(owner=owner, name=DEMO_SERVER_NAME).exists():
            return
        Server.objects.create(
            name=DEMO_SERVER_NAME,
            transport=Server.Transport.STDIO,
            command=sys.executable,
            args=["-m", "playground.demo_server"],
            cwd=str(settings.BASE_DIR),
            era=Server.Era.LEGACY,
            owner=owner,
        )
        self.stdout.write(f"Registered the demo server {DEMO_SERVER_NAME!r}.")
