"""One line for a notification in a panel, cut to SUMMARY_CHARS: a panel's entries are replayed
whole to a reloading page, and a 50 MB log message made that one websocket message too large."""

from __future__ import annotations

import json
from typing import Any

from playground.mcp.secrets import CUT, NO_SECRETS, Redactor

SUMMARY_CHARS = 500  # characters of one notification shown in a panel (the transcript has all)


def summarize(method: str, params: dict[str, Any], secrets: Redactor = NO_SECRETS) -> str:
    """Cut by `secrets` (the session's: a secret's head at the cut is masked, the page masks whole values)."""
    text = _summary(method, params)
    return text if len(text) <= SUMMARY_CHARS else f"{secrets.cut(text, SUMMARY_CHARS, CUT)} ({len(text)} characters)"


def _summary(method: str, params: dict[str, Any]) -> str:
    """The interesting field, else the params as JSON."""
    if method == "notifications/message":
        data = params.get("data")
        return data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    if method == "notifications/resources/updated":
        return str(params.get("uri", ""))
    if method == "notifications/tasks/status":
        return f"{params.get('taskId', '')} {params.get('status', '')} {params.get('statusMessage') or ''}".strip()
    if method == "notifications/subscriptions/acknowledged":
        return json.dumps(params.get("notifications"), ensure_ascii=False)
    rest = {k: v for k, v in params.items() if k != "_meta"}
    return json.dumps(rest, ensure_ascii=False) if rest else ""


def params_of(message: dict[str, Any]) -> dict[str, Any]:
    """A notification's params, or {} when they are not an object (a server's JSON is untrusted)."""
    params = message.get("params")
    return params if type(params) is dict else {}
