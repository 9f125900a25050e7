"""The Differences region of a replay session, from its saved report: on its page (before the
websocket brings the live one) and on its share page (redacted, read-only)."""
from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

register = template.Library()


@register.simple_tag
def differences(session: Any, share: bool = False) -> str:
    if session.kind != "replay":
        return ""
    from playground.sessions.features.replay import region_html

    redact = session.share_redactor() if share else session.owner_redactor()
    report = redact.obj(session.report or {})
    return SafeString(region_html(report, session_id=session.pk, owner=not share,
                                  live=session.is_live and not share))
