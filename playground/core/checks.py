"""System checks: binding beyond loopback exposes a tool that starts processes."""

from __future__ import annotations

from django.core.checks import Warning, register

from playground.security import bind_warning


@register("security")
def check_bind(app_configs=None, **kwargs) -> list[Warning]:
    message = bind_warning()
    if message is None:
        return []
    return [
        Warning(
            message, hint="Bind to 127.0.0.1 (the default) unless you mean to share this machine.", id="playground.W001"
        )
    ]
