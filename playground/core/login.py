"""Log-in throttling: after FAILURES failed log-ins within WINDOW for one user name, or from one
client address, further attempts are refused with a clear message until the window has room
again. Password guessing against a local tool is slow, whoever tries; no new service needed."""

from __future__ import annotations

import ipaddress
import unicodedata
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest
from django.utils import timezone

from .models import LoginFailure

FAILURES = 10
WINDOW = timedelta(minutes=5)


def address_key(request: HttpRequest | None) -> str:
    """The key of the per-address limit for the client's address. The whole loopback range
    (127.0.0.0/8, ::1, ::ffff:127.x.y.z) is one key, the local machine: a local client may pick
    any source address in it, 16 million of them. An IPv6 client is keyed by its /64, what one
    machine is normally given and can rotate through (machines sharing a /64 share the limit).
    An IPv4-mapped IPv6 address is its IPv4 address."""
    raw = str((request.META.get("REMOTE_ADDR") if request is not None else "") or "")
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(raw)
    except ValueError:
        return raw[:64]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "127.0.0.0/8"
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def username_key(value: Any) -> str:
    """The key of the per-name limit: one for every spelling of a name that logs in to the same
    account. Authentication looks the name up as the form cleans it (stripped, NFKC: `ａlice`
    is `alice`, as `normalize_username` made it when the account was created), so the key is
    computed from that form, the check's and the record's alike. Case-folded too, as it was
    lower-cased before: the look-up is case-sensitive, but `Alice` and `alice` are more often
    one person than two, and a shared limit only makes guessing slower."""
    # (A name longer than the field's 150 characters never logs in: not normalised whole.)
    name = unicodedata.normalize("NFKC", str(value or "")[:1000].strip())
    return unicodedata.normalize("NFKC", name.casefold())[:150]


def refusal(request: HttpRequest | None, username: str) -> str | None:
    """Why a log-in attempt is refused now, or None."""
    since = timezone.now() - WINDOW
    address, name = address_key(request), username_key(username)
    recent = LoginFailure.objects.filter(at__gte=since)
    by_name = recent.filter(username=name).count() if name else 0
    by_address = recent.filter(address=address).count() if address else 0
    if max(by_name, by_address) < FAILURES:
        return None
    which = "for this user name" if by_name >= FAILURES else "from this address"
    return (
        f"Too many failed log-ins {which} ({FAILURES} in {int(WINDOW.total_seconds() // 60)} minutes). "
        "Wait a few minutes, then try again."
    )


@receiver(user_login_failed)
def _record(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any) -> None:
    LoginFailure.objects.create(username=username_key(credentials.get("username")), address=address_key(request))
    LoginFailure.objects.filter(at__lt=timezone.now() - 2 * WINDOW).delete()  # keep the table small


class ThrottledMixin(AuthenticationForm):
    """Checks the throttle before the password is even looked at."""

    def clean(self) -> dict[str, Any]:
        # The name as authentication gets it (and the record of a failure); as posted if the
        # field refused it (no authentication then, but the address may be refused).
        reason = refusal(self.request, self.cleaned_data.get("username") or self.data.get("username", ""))
        if reason:
            raise forms.ValidationError(reason, code="throttled")
        return super().clean()


class ThrottledAuthenticationForm(ThrottledMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottledMixin, AdminAuthenticationForm):
    pass


__all__ = ["ThrottledAdminAuthenticationForm", "ThrottledAuthenticationForm", "address_key", "refusal", "username_key"]
