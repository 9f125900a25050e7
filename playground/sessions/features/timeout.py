"""The session's request timeout, set in the page's header (each call may still set its own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings

from ..fragments.html import oob
from ..protocol import Command
from .base import Feature
from .context import TabContext

if TYPE_CHECKING:
    from playground.transcripts.models import Session

MAX_TIMEOUT = 24 * 3600  # seconds: the longest per-request timeout the page accepts


class Timeout(Feature):
    name = "timeout"
    actions = frozenset({"set_timeout"})
    head_template = "sessions/features/timeout_head.html"

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        return {"timeout": f"{settings.PLAYGROUND_REQUEST_TIMEOUT:g}"}

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        return {"command": "set_timeout", "params": str(content.get("seconds") or "")}

    async def handle(self, command: Command) -> None:
        self.error = ""
        try:
            value = float(command.get("params") or 0)
        except (TypeError, ValueError):
            value = 0.0
        if 0 < value <= MAX_TIMEOUT:
            self.ctx.set_request_timeout(value)
        else:
            self.error = f"timeout: give a number of seconds between 0 and {MAX_TIMEOUT}"
        await self.publish_state(outcome=True)

    def state_html(self) -> str:
        client = self.ctx.client
        seconds = client.timeout if client else self.ctx.config.timeout
        return oob("timeout-state", "outerHTML", f'<span id="timeout-state" hidden data-timeout="{seconds:g}"></span>')
