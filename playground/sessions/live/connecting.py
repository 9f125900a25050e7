"""What a connecting session is waiting for, in words, for the state strip.

Connecting can take a minute (npx downloading a package, a server that never answers
initialize, a person authorizing in another tab); "CONNECTING" alone said nothing for all of
it. The transcript already records every step, so the step is read from its events as they
pass (no hook in the client core): the request sent and not yet answered, the process
started, the SSE stream opened, the authorization step. The page adds the elapsed time.
"""

from __future__ import annotations

from typing import Any

from playground.mcp.config import ServerConfig
from playground.mcp.events import TranscriptEvent
from playground.mcp.transports.http_common import shown_url

from ..protocol import SessionState

# Characters of a note's text quoted as a step (an OAuth step quotes URLs).
STEP_CHARS = 160


class ConnectWatch:
    """The current step of one session's connection (`text`); the page counts the time from
    the session's start."""

    def __init__(self, config: ServerConfig) -> None:
        self.timeout = config.timeout
        self.text = first_step(config)

    def observe(self, event: TranscriptEvent) -> bool:
        """Follow one event; True when the step changed (the strip should say so)."""
        step = step_of(event)
        if step is None or step == self.text:
            return False
        self.text = step
        return True

    def facts(self) -> dict[str, Any]:
        """Added to the state while connecting (sessions.protocol.SessionState)."""
        return {"waiting": self.text, "request_timeout": self.timeout}


def first_step(config: ServerConfig) -> str:
    if config.transport == "stdio":
        return f"starting the process: {config.command}"
    if config.transport == "sse":
        return f"opening the SSE stream at {shown_url(config.url)}"
    return f"reaching {shown_url(config.url)}"


def step_of(event: TranscriptEvent) -> str | None:
    """The step an event starts, if it starts one."""
    if event.dir == "send":
        message = event.message
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            return f"waiting for the server's answer to {message['method']}"
        return None
    if event.dir != "note":
        return None
    kind, text = event.kind, (event.text or "")[:STEP_CHARS]
    data = event.data or {}
    if kind == "started":
        return f"process started (pid {data.get('pid')}), about to send initialize"
    if kind == "http" and "SSE stream open" in text and event.http and event.http.get("method") == "GET":
        return "SSE stream open: waiting for the server's endpoint event"
    if kind == "fallback":
        return text
    if kind == "auth":
        if data.get("step") == "authorization-request":
            return "waiting for you to authorize (the Authorization required card)"
        return f"authorizing: {text}"
    return None


def with_hint(state: SessionState, rows: list[dict[str, Any]]) -> SessionState:
    """A failed session's state with the hint its transcript holds (connect.transport_hint's
    note, among the last events): a reloaded page offers the same switch as the live one."""
    if state.get("status") != "failed":
        return state
    for row in reversed(rows[-HINT_WITHIN:]):
        if row.get("dir") == "note" and row.get("kind") == "hint" and isinstance(row.get("data"), dict):
            return {**state, "hint": {**row["data"], "text": row.get("text") or ""}}
    return state


# The hint note is among a failed connection's last few events (then the transport's "closed").
HINT_WITHIN = 20
