"""Modern subscriptions (2026-07-28): one `subscriptions/listen` stream at a time, its filter,
what the server acknowledged (and left out), and how many notifications it carried."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from playground.mcp.client import META_SUBSCRIPTION, McpClient

from ..fragments.html import oob
from ..protocol import Command
from .base import ALL, Feature, render
from .context import SessionContext, TabContext
from .summaries import params_of

if TYPE_CHECKING:
    from playground.transcripts.models import Session

LISTEN_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
UPDATE_EVERY = 0.05  # seconds: a stream's count reaches the page at most this often


class Listen(Feature):
    name = "listen"
    actions = frozenset({"listen", "stop_listen"})
    notifications = ALL  # a stream's notifications are any method, tagged in `_meta`
    panel_template = "sessions/features/listen_panel.html"

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        return {"listen_flags": LISTEN_FLAGS}

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        if action == "stop_listen":
            return {"command": "stop_listen"}
        uris = [u.strip() for u in str(content.get("uris") or "").splitlines() if u.strip()]
        return {
            "command": "listen",
            "params": {**{flag: bool(content.get(flag)) for flag in LISTEN_FLAGS}, "resourceSubscriptions": uris},
        }

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.stream: dict[str, Any] | None = None
        self._task: asyncio.Task[Any] | None = None

    async def handle(self, command: Command) -> None:
        action = str(command.get("command"))

        async def run(client: McpClient) -> None:
            if action == "listen":
                await self.start_listen(client, command.get("params") or {})
            else:
                await self.stop_listen(client)

        if await self.attempt(action, run):
            await self.publish_state(outcome=True)

    async def start_listen(self, client: McpClient, flt: dict[str, Any]) -> None:
        await self.stop_listen(client)
        requested: dict[str, Any] = {k: True for k in LISTEN_FLAGS if flt.get(k)}
        uris = [str(u) for u in flt.get("resourceSubscriptions") or [] if str(u).strip()]
        if uris:
            requested["resourceSubscriptions"] = uris
        request_id, task = await client.listen(requested)
        self.stream = {
            "id": request_id,
            "requested": requested,
            "acknowledged": None,
            "status": "waiting for the acknowledgement",
            "count": 0,
        }
        self._task = task
        task.add_done_callback(lambda t: self.ctx.spawn("listen-ended", self._ended(request_id, t)))

    async def stop_listen(self, client: McpClient) -> None:
        if self.stream and self._task and not self._task.done():
            self.stream["status"] = "closing"
            await client.cancel(self.stream["id"], "stopped by the user")

    async def _ended(self, request_id: Any, task: asyncio.Task[Any]) -> None:
        if not self.stream or self.stream["id"] != request_id:
            return
        if task.cancelled() or isinstance(task.exception(), asyncio.CancelledError):
            status = "closed by us"
        elif task.exception() is not None:
            status = f"ended: {task.exception()}"
        else:
            status = "ended by the server (graceful)"
        self.stream["status"] = status
        await self.publish_state()

    def on_notification(self, message: dict[str, Any]) -> None:
        if not self.stream:
            return
        params = params_of(message)
        meta = params.get("_meta")
        if type(meta) is not dict or meta.get(META_SUBSCRIPTION) != self.stream["id"]:
            return
        if message["method"] == "notifications/subscriptions/acknowledged":
            acked = params.get("notifications")
            self.stream["acknowledged"] = acked if isinstance(acked, dict) else {}
            self.stream["status"] = "open"
        else:
            self.stream["count"] += 1
        self.publish_state_soon(UPDATE_EVERY)  # a stream's flood updates the page a few times a second

    def state_html(self) -> str:
        stream = dict(self.stream) if self.stream else None
        if stream and stream["acknowledged"] is not None:
            stream["refused"] = refused(stream["requested"], stream["acknowledged"])
        return oob(
            "listen-state",
            "innerHTML",
            render("sessions/features/listen_state.html", {"l": stream, "flags": LISTEN_FLAGS}),
        )


def refused(requested: dict[str, Any], acknowledged: dict[str, Any]) -> list[str]:
    """What the listen request asked for that the server's acknowledgement left out."""
    out = [k for k in LISTEN_FLAGS if requested.get(k) and not acknowledged.get(k)]
    acked_uris = set(acknowledged.get("resourceSubscriptions") or [])
    out += [u for u in requested.get("resourceSubscriptions") or [] if u not in acked_uris]
    return out
