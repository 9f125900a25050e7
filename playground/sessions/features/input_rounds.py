"""The `input_required` rounds of a call (modern era): which round of which call a server
request belongs to (the Server request card says so), and every round in the call's Result."""

from __future__ import annotations

from typing import Any

from ..protocol import CURRENT_CALL, Outcome
from .base import Feature
from .context import SessionContext

STATE_SHOWN = 2000  # characters of an opaque requestState shown on the page


class InputRounds(Feature):
    name = "input_rounds"

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.rounds: dict[str, list[dict[str, Any]]] = {}  # call id -> its rounds
        self._now: dict[str, dict[str, Any]] = {}  # call id -> its current round

    def on_input_required(self, method: str, round_no: int, result: dict[str, Any]) -> None:
        """Runs in the call's own task: remember the round, so its questions and the final
        result can say which call and round they belong to."""
        call_id = CURRENT_CALL.get()
        if call_id is None:
            return
        state = result.get("requestState")
        requests = result.get("inputRequests")
        requests = requests if isinstance(requests, dict) else {}
        entry = {
            "round": round_no,
            "method": method,
            "keys": sorted(requests),
            "request_state": None if state is None else self.ctx.secrets().cut(str(state), STATE_SHOWN),
            "state_size": len(str(state)) if state is not None else 0,
        }
        self.rounds.setdefault(call_id, []).append(entry)
        self._now[call_id] = entry

    def request_context(self) -> dict[str, Any] | None:
        """For a server request asked now: the call and input round it belongs to, if any."""
        call_id = CURRENT_CALL.get()
        entry = self._now.get(call_id) if call_id else None
        if entry is None:
            return None
        client = self.ctx.client
        return {
            "call_id": call_id,
            "round": entry["round"],
            "method": entry["method"],
            "limit": client.max_input_rounds if client else None,
            "request_state": entry["request_state"],
            "state_size": entry["state_size"],
        }

    def on_call_end(self, call_id: str, outcome: Outcome) -> None:
        self._now.pop(call_id, None)
        rounds = self.rounds.pop(call_id, [])
        if rounds:
            outcome["rounds"] = rounds
