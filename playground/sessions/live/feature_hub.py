"""A live session's features (features/) as its worker uses them, without naming one.

Each feature is made with its options and the session as its context (`SessionContext`); the
hub knows who listens to which server notification, who answers which server request (it is
the connection's responder, declaring exactly their capabilities), and runs each feature's
hooks at the core's moments — the connection up or ending, a call's end, a new catalogue, a
reloading tab, a share viewer joining — where a feature's failure is logged and never breaks
the core (a Result that never came, a snapshot failing on every reconnect).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from playground.mcp.auth import OAuth
from playground.mcp.events import TranscriptEvent
from playground.mcp.jsonrpc import METHOD_NOT_FOUND, JsonRpcError
from playground.mcp.secrets import Redactor

from ..features import ALL, FEATURES, Feature
from ..features.context import SessionContext
from ..protocol import FeatureEvent

log = logging.getLogger(__name__)


def hook(feature: Feature, run: Callable[..., Any], *args: Any) -> Any:
    """One of a feature's hooks, run by the core: a failure is logged, and None returned."""
    try:
        return run(*args)
    except Exception:
        log.exception("feature %s failed in %s", feature.name, getattr(run, "__name__", run))
        return None


class FeatureHub:
    def __init__(self, ctx: SessionContext, options: dict[str, dict[str, Any]]) -> None:
        self.by_name: dict[str, Feature] = {cls.name: cls(ctx, options.get(cls.name)) for cls in FEATURES}
        listed = list(self.by_name.values())
        self._every = [f for f in listed if f.notifications == ALL]
        self._by_method: dict[str, list[Feature]] = {}
        for feature in listed:
            if feature.notifications != ALL:
                for method in feature.notifications:
                    self._by_method.setdefault(method, []).append(feature)
        self._listeners: dict[str, tuple[Feature, ...]] = {}  # by method, built as methods come
        self._answering = {method: f for f in listed for method in f.server_requests}
        self._first = [f for f in listed if f.answers_first]
        # The features with something to do when a call ends (on every call's path: the others'
        # empty hooks cost a call each, ~20 of them).
        self._call_enders = [f for f in listed if type(f).on_call_end is not Feature.on_call_end]
        # What the recorder runs on every batch of events before it is saved.
        self.checks: list[Callable[[list[TranscriptEvent]], Awaitable[None]]] = [
            f.check_frames for f in listed if f.checks_frames
        ]
        self.client_auth: OAuth | None = next((a for f in listed if (a := f.client_auth()) is not None), None)

    # The connection's responder: the server's requests -----------------------------------

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        for feature in self.by_name.values():
            caps.update(feature.capabilities())
        return caps

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        for first in self._first:
            if (result := await first.answer_first(method, params)) is not None:
                return result
        feature = self._answering.get(method)
        if feature is None:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await feature.answer(method, params)

    # The connection's listeners ---------------------------------------------------------

    def on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]  # (a str: the client only calls listeners with notifications)
        if method == "notifications/progress":
            return  # the call's own (calls.py)
        listeners = self._listeners.get(method)
        if listeners is None:
            listeners = (
                *(f for f in self._every if method not in f.ignored_notifications),
                *self._by_method.get(method, ()),
            )
            if len(self._listeners) < 1000:  # (a server may invent methods without end)
                self._listeners[method] = listeners
        for feature in listeners:
            try:
                feature.on_notification(message)
            except Exception:
                log.exception("feature %s failed on %s", feature.name, method)

    def on_input_required(self, method: str, round_no: int, result: dict[str, Any]) -> None:
        for feature in self.by_name.values():
            hook(feature, feature.on_input_required, method, round_no, result)

    # The core's moments -----------------------------------------------------------------

    async def start(self) -> None:
        """The session is connected and listed."""
        for feature in self.by_name.values():
            try:
                await feature.start()
            except Exception:
                log.exception("feature %s failed to start", feature.name)

    async def stop(self) -> None:
        """The session is ending."""
        for feature in self.by_name.values():
            with contextlib.suppress(Exception):
                await feature.stop()

    def busy(self) -> bool:
        return any(hook(f, f.busy) for f in self.by_name.values())

    def call_ended(self, call_id: str, outcome: Any) -> None:
        for feature in self._call_enders:
            hook(feature, feature.on_call_end, call_id, outcome)

    def catalogue_changed(self) -> None:
        for feature in self.by_name.values():
            hook(feature, feature.on_catalogue)

    def snapshot(self) -> list[FeatureEvent]:
        """What a reloading tab needs of every feature."""
        return [event for f in self.by_name.values() for event in hook(f, f.snapshot) or ()]

    def share_snapshot(self, redact: Redactor) -> list[tuple[str, dict[str, Any]]]:
        """What a live share viewer needs when it joins, (feature, event), masked by `redact`."""
        return [(f.name, event) for f in self.by_name.values() for event in hook(f, f.share_snapshot, redact) or ()]
