"""A live session's state strip: its status and facts, saved on the Session row and shown to
every tab (each share viewer redacts its own) when the connection is up and when it ends.

While connecting, the strip says what the session waits for (connecting.ConnectWatch reads the
step from the transcript's events as they pass) and is sent again shortly after each step;
once failed, it offers what the evidence suggests trying (a `hint`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.db import database_sync_to_async
from django.utils import timezone

from playground.mcp.client import McpClient
from playground.mcp.config import ServerConfig
from playground.mcp.events import Tap, TranscriptEvent
from playground.transcripts.models import Session
from playground.transcripts.storable import storable

from ..protocol import SessionState
from .audience import Audience
from .connecting import ConnectWatch

# The connecting strip is sent this long after its step changed (steps come in bursts).
STEP_DELAY = 0.05


class StateStrip:
    def __init__(self, session_id: int, config: ServerConfig, tap: Tap, audience: Audience) -> None:
        self.session_id = session_id
        self.tap = tap
        self.audience = audience
        # While connecting: what it waits for, said in the strip (None once connected or failed);
        # the session's state as it started (the strip is re-sent from it, without a database
        # read, at each step).
        self.watch: ConnectWatch | None = ConnectWatch(config)
        self._state: SessionState | None = None
        self._step_task: asyncio.Task[None] | None = None
        self.hint: dict[str, Any] | None = None  # what a failed connection's evidence suggests trying
        self.era_evidence = ""
        tap.subscribe(self._observe)  # until connected (`connected`)

    def started(self, state: SessionState) -> None:
        """The session's state as its row was created."""
        self._state = self.live_facts(state)

    def _observe(self, event: TranscriptEvent) -> None:
        """An event while connecting: the era's evidence, and the step it starts, if any."""
        if event.kind == "era":
            self.era_evidence = event.text or ""
        if self.watch is not None and self.watch.observe(event):
            self._soon()

    def connected(self) -> None:
        """Connecting is over (connected, failed or stopped): no more steps to follow."""
        self.watch = None
        if self._observe in self.tap.listeners:
            self.tap.listeners.remove(self._observe)

    async def save_connected(self, client: McpClient) -> None:
        """The connection is up: its facts saved and shown."""

        def save() -> None:
            Session.objects.filter(pk=self.session_id).update(
                status=Session.Status.CONNECTED,
                era=client.era,
                protocol_version=storable(str(client.protocol_version or ""))[:40],
                server_info=storable(client.server_info),
                capabilities=storable(client.server_capabilities),
                instructions=storable(client.instructions or ""),
                transport=client.transport.name,
                era_evidence=storable(self.era_evidence),
            )

        await database_sync_to_async(save)()
        await self._steps_done()
        await self.audience.broadcast({"type": "session.state", "state": await self.state()})

    async def save_end(self, status: str, reason: str) -> None:
        """The session has ended: its status and reason saved and shown."""

        def save() -> None:
            Session.objects.filter(pk=self.session_id).update(
                status=status, end_reason=storable(reason), ended_at=timezone.now(), worker_channel=""
            )

        await database_sync_to_async(save)()
        await self._steps_done()
        await self.audience.broadcast({"type": "session.state", "state": await self.state()})

    async def state(self) -> SessionState:
        session = await database_sync_to_async(Session.objects.get)(pk=self.session_id)
        return self.live_facts(session.state())

    def live_facts(self, state: SessionState) -> SessionState:
        """What only the worker knows, added to the saved state: while connecting, what it
        waits for; once failed, what the evidence suggests trying (the page finds that one in
        the transcript after a reload: connecting.with_hint)."""
        if self.watch is not None and state.get("status") == Session.Status.CONNECTING:
            state["waiting"], state["request_timeout"] = self.watch.text, self.watch.timeout
        elif self.hint is not None and state.get("status") == Session.Status.FAILED:
            state["hint"] = self.hint
        return state

    def connecting_state(self) -> SessionState | None:
        """The strip for a tab reloaded while connecting (what it waits for), else None."""
        if self.watch is not None and self._state:
            return self.live_facts(self._state.copy())
        return None

    def _soon(self) -> None:
        """The strip, once, shortly after the connection's step changed (steps come in bursts)."""
        if (self._step_task is None or self._step_task.done()) and self._state:
            self._step_task = asyncio.get_running_loop().create_task(self._send_step())

    async def _send_step(self) -> None:
        """Until the step shown is the step now: a step that changes while the strip is being
        sent is sent too (it would otherwise wait for the next change, maybe for minutes)."""
        shown = None
        while True:
            await asyncio.sleep(STEP_DELAY)
            watch = self.watch
            if watch is None or watch.text == shown:
                return
            shown = watch.text
            if self._state:
                await self.audience.broadcast({"type": "session.state", "state": self.live_facts(self._state.copy())})

    async def _steps_done(self) -> None:
        """No step's strip may arrive after the state that ends connecting."""
        task, self._step_task = self._step_task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
