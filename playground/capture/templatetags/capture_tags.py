from typing import Any

from django import template

from ..entries import host_entries, http_entries
from ..models import CaptureToken

register = template.Library()


@register.inclusion_tag("capture/_watch_a_host.html", takes_context=True)
def watch_a_host(context: Any, server: Any) -> dict[str, Any]:
    """A registered server's Watch a host region: its entries, with the owner's newest token."""
    request = context["request"]
    token = CaptureToken.objects.filter(owner=request.user, revoked_at__isnull=True).first()
    base = f"{request.scheme}://{request.get_host()}"
    return {
        "server": server,
        "token": token,
        "entries": (host_entries if server.is_stdio else http_entries)(server, base, token.plain) if token else [],
        "next": request.get_full_path(),
        "csrf_token": context.get("csrf_token"),
    }
