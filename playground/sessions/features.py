"""The protocol's side features of a live session, kept out of the worker's core loop:
logging, resource subscriptions (legacy `resources/subscribe`, modern `subscriptions/listen`),
completion, roots edited mid-session, tasks, and the `input_required` rounds of a call.

The worker owns one `Features`; it forwards the commands listed in `COMMANDS`, every server
notification, and each input round. What the page needs to catch up after a reload (panel
state, the recent notifications) is in `snapshot()`.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import json
from typing import TYPE_CHECKING, Any

from playground.mcp.client import META_SUBSCRIPTION, RequestTimeout
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import TransportError

from . import render

if TYPE_CHECKING:
    from .worker import SessionWorker

# The page's call a coroutine works for (set by the worker around each call), so an input
# round or a server request can be threaded under the call that caused it.
CURRENT_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_call", default=None)

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LISTEN_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
FEED_KEPT = 200             # notifications replayed to a reloading page
BURST_WINDOW = 0.05         # seconds: notifications arriving within it reach the page as one message
BURST_SHOWN = 20            # the latest of a burst sent to the page (the transcript has them all)
STATE_SHOWN = 2000          # characters of an opaque requestState shown on the page
SUMMARY_CHARS = 500         # characters of one notification shown in the feed (the transcript has all)

COMMANDS = frozenset({"complete", "set_level", "subscribe", "unsubscribe", "listen", "stop_listen",
                      "auto_refresh", "set_roots", "set_timeout"})
MAX_TIMEOUT = 24 * 3600     # seconds: the longest per-request timeout the page accepts


class Features:
    def __init__(self, worker: "SessionWorker") -> None:
        self.worker = worker
        self.auto_refresh = True
        self.log_level = ""
        self.subscribed: list[str] = []                 # legacy resources/subscribe, in order
        self.listen: dict[str, Any] | None = None       # the modern subscriptions/listen stream
        self._listen_task: asyncio.Task[Any] | None = None
        self.feed: collections.deque[dict[str, Any]] = collections.deque(maxlen=FEED_KEPT)
        # A flood must not become one group message per notification: gather bursts.
        self._feed_pending: collections.deque[dict[str, Any]] = collections.deque(maxlen=BURST_SHOWN)
        self._feed_skipped = 0
        self._burst: asyncio.Task[None] | None = None
        self._panels_dirty = False
        self.rounds: dict[str, list[dict[str, Any]]] = {}   # call id -> its input_required rounds
        self._round_now: dict[str, dict[str, Any]] = {}
        self._completion_seq: dict[str, int] = {}
        self.error = ""                                  # the last panel action that failed

    # Commands ----------------------------------------------------------------------------

    async def handle(self, command: str, message: dict[str, Any]) -> None:
        client = self.worker.client
        if command == "auto_refresh":
            self.auto_refresh = bool(message.get("on"))
            await self.publish_panels()
            return
        if command == "set_roots":
            await self.set_roots(list(message.get("roots") or []))
            return
        if command == "set_timeout":
            self.set_timeout(message.get("seconds"))
            await self.publish_panels()
            return
        if client is None or client.closed:
            return
        if command == "complete":
            asyncio.create_task(self.complete(message))
            return
        self.error = ""
        try:
            if command == "set_level":
                level = str(message.get("level") or "")
                await client.set_logging_level(level)
                self.log_level = level
            elif command == "subscribe":
                uri = str(message["uri"])
                await client.subscribe(uri)
                if uri not in self.subscribed:
                    self.subscribed.append(uri)
            elif command == "unsubscribe":
                uri = str(message["uri"])
                await client.unsubscribe(uri)
                self.subscribed = [u for u in self.subscribed if u != uri]
            elif command == "listen":
                await self.start_listen(message.get("filter") or {})
            elif command == "stop_listen":
                await self.stop_listen()
        except JsonRpcError as exc:
            self.error = f"{command}: JSON-RPC error {exc.code}: {exc.message}"
        except (RequestTimeout, TransportError) as exc:
            self.error = f"{command}: {exc}"
        await self.publish_panels()

    async def complete(self, message: dict[str, Any]) -> None:
        """`completion/complete` for one field; only the asking tab gets the answer, and only
        if no newer keystroke for the same field asked again meanwhile."""
        client = self.worker.client
        target = str(message.get("target") or "")
        seq = self._completion_seq[target] = self._completion_seq.get(target, 0) + 1
        reply: dict[str, Any] = {"type": "session.completion", "target": target, "values": [], "error": ""}
        try:
            result = await client.complete(message["ref"], message["argument"], message.get("context") or None)
            completion = result.get("completion") if isinstance(result, dict) else None
            if isinstance(completion, dict):
                reply["values"] = [str(v) for v in completion.get("values") or []][:100]
                reply["total"] = completion.get("total")
                reply["has_more"] = completion.get("hasMore") is True
        except (JsonRpcError, RequestTimeout, TransportError) as exc:
            reply["error"] = str(exc)
        if self._completion_seq.get(target) == seq and message.get("reply_channel"):
            await self.worker.to_layer(self.worker.layer.send, message["reply_channel"], reply)

    def set_timeout(self, seconds: Any) -> None:
        """The session's request timeout (each call may still set its own)."""
        self.error = ""
        try:
            value = float(seconds)
        except (TypeError, ValueError):
            value = 0.0
        if not 0 < value <= MAX_TIMEOUT:
            self.error = f"timeout: give a number of seconds between 0 and {MAX_TIMEOUT}"
            return
        self.worker.config.timeout = value
        if self.worker.client is not None:
            self.worker.client.timeout = value

    async def set_roots(self, roots: list[dict[str, Any]]) -> None:
        """New roots from the server's settings: answer from them, and tell a legacy server."""
        self.worker.responder.roots = roots
        client = self.worker.client
        if client is not None and not client.closed and client.era == "legacy":
            with contextlib.suppress(TransportError):
                await client.notify("notifications/roots/list_changed")
        await self.publish_panels()

    async def start_listen(self, flt: dict[str, Any]) -> None:
        client = self.worker.client
        assert client is not None
        await self.stop_listen()
        requested = {k: True for k in LISTEN_FLAGS if flt.get(k)}
        uris = [str(u) for u in flt.get("resourceSubscriptions") or [] if str(u).strip()]
        if uris:
            requested["resourceSubscriptions"] = uris
        request_id, task = await client.listen(requested)
        self.listen = {"id": request_id, "requested": requested, "acknowledged": None,
                       "status": "waiting for the acknowledgement", "count": 0}
        self._listen_task = task
        task.add_done_callback(lambda t: asyncio.get_running_loop().create_task(self._listen_ended(request_id, t)))

    async def stop_listen(self) -> None:
        client = self.worker.client
        if self.listen and self._listen_task and not self._listen_task.done() and client and not client.closed:
            self.listen["status"] = "closing"
            await client.cancel(self.listen["id"], "stopped by the user")

    async def _listen_ended(self, request_id: Any, task: asyncio.Task[Any]) -> None:
        if not self.listen or self.listen["id"] != request_id:
            return
        if task.cancelled():
            status = "closed by us"
        elif isinstance(task.exception(), asyncio.CancelledError):
            status = "closed by us"
        elif task.exception() is not None:
            status = f"ended: {task.exception()}"
        else:
            status = "ended by the server (graceful)"
        self.listen["status"] = status
        await self.publish_panels()

    # From the client -----------------------------------------------------------------------

    def on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]          # (a str: the client only calls listeners with notifications)
        if method == "notifications/progress":
            return
        params = message.get("params")
        if type(params) is not dict:
            params = {}
        meta = params.get("_meta")
        tag = meta.get(META_SUBSCRIPTION) if type(meta) is dict else None
        if tag is not None and self.listen and tag == self.listen["id"]:
            if method == "notifications/subscriptions/acknowledged":
                acked = params.get("notifications")
                self.listen["acknowledged"] = acked if isinstance(acked, dict) else {}
                self.listen["status"] = "open"
            else:
                self.listen["count"] += 1
            self._panels_dirty = True
        # Kept as it came; completed (summary, level, kind) only if shown or replayed: a flood shows
        # a few of each burst (building every entry was the reader's largest single cost).
        entry = {"method": method, "params": params, "subscription": tag,
                 "t": self.worker.tap.clock() - self.worker.tap.start}
        self.feed.append(entry)
        if len(self._feed_pending) == BURST_SHOWN:
            self._feed_skipped += 1
        self._feed_pending.append(entry)
        if self._burst is None or self._burst.done():
            self._burst = asyncio.get_running_loop().create_task(self._publish_burst())
        if method.endswith("/list_changed") and method != "notifications/roots/list_changed" and self.auto_refresh:
            self.worker._spawn_call("refresh", {}, self.worker.refresh_catalogue())

    def on_input_required(self, method: str, round_no: int, result: dict[str, Any]) -> None:
        """Runs in the call's own task: remember the round, so its questions and the final
        result can say which call and round they belong to."""
        call_id = CURRENT_CALL.get()
        if call_id is None:
            return
        state = result.get("requestState")
        requests = result.get("inputRequests") if isinstance(result.get("inputRequests"), dict) else {}
        entry = {"round": round_no, "method": method, "keys": sorted(requests),
                 "request_state": None if state is None else str(state)[:STATE_SHOWN],
                 "state_size": len(str(state)) if state is not None else 0}
        self.rounds.setdefault(call_id, []).append(entry)
        self._round_now[call_id] = entry

    def request_context(self) -> dict[str, Any] | None:
        """For a server request asked now: the call and input round it belongs to, if any."""
        call_id = CURRENT_CALL.get()
        entry = self._round_now.get(call_id) if call_id else None
        if entry is None:
            return None
        limit = self.worker.client.max_input_rounds if self.worker.client else None
        return {"call_id": call_id, "round": entry["round"], "method": entry["method"], "limit": limit,
                "request_state": entry["request_state"], "state_size": entry["state_size"]}

    def finish_call(self, call_id: str) -> list[dict[str, Any]]:
        self._round_now.pop(call_id, None)
        return self.rounds.pop(call_id, [])

    # State for the page --------------------------------------------------------------------

    def panels(self) -> dict[str, Any]:
        client = self.worker.client
        listen = dict(self.listen) if self.listen else None
        if listen and listen["acknowledged"] is not None:
            listen["refused"] = refused(listen["requested"], listen["acknowledged"])
        return {"era": client.era if client else "", "auto_refresh": self.auto_refresh,
                "log_level": self.log_level, "subscribed": list(self.subscribed), "listen": listen,
                "roots": list(self.worker.responder.roots), "error": self.error,
                "timeout": client.timeout if client else self.worker.config.timeout,
                "client_capabilities": client.capabilities() if client else {},
                "can_subscribe": bool(((client.server_capabilities if client else {}) or {})
                                      .get("resources", {}).get("subscribe")) if client else False}

    async def publish_panels(self) -> None:
        await self.worker.broadcast({"type": "session.panels", "panels": self.panels()})

    def snapshot(self) -> dict[str, Any]:
        return {"panels": self.panels(), "feed": [_summarized(e) for e in self.feed]}

    async def _publish_burst(self) -> None:
        """One feed message (and at most one panels update) per burst of notifications."""
        await asyncio.sleep(BURST_WINDOW)
        entries, skipped = [_summarized(e) for e in self._feed_pending], self._feed_skipped
        self._feed_pending.clear()
        self._feed_skipped = 0
        if entries:
            # Rendered here once, not by each tab: the same fragment for all (50 tabs of a flood
            # rendered it 50 times, 20 times a second).
            await self.worker.broadcast({"type": "session.feed", "html": render.feed(entries, skipped=skipped)})
        if self._panels_dirty:
            self._panels_dirty = False
            await self.publish_panels()

    def _spawn(self, coro: Any) -> None:
        asyncio.get_running_loop().create_task(coro)


def refused(requested: dict[str, Any], acknowledged: dict[str, Any]) -> list[str]:
    """What the listen request asked for that the server's acknowledgement left out."""
    out = [k for k in LISTEN_FLAGS if requested.get(k) and not acknowledged.get(k)]
    acked_uris = set(acknowledged.get("resourceSubscriptions") or [])
    out += [u for u in requested.get("resourceSubscriptions") or [] if u not in acked_uris]
    return out


def _summarized(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as the page shows it: its summary instead of its params (which may be large:
    dropped once summarized), kind, time in ms, level and logger. Done once, in place."""
    if "params" in entry:
        method, params = entry["method"], entry.pop("params")
        entry["summary"] = summarize(method, params)
        entry["t"] = round(entry["t"] * 1000, 1)
        if method == "notifications/message":
            entry.update(kind="log", level=str(params.get("level") or "")[:40],
                         logger=str(params.get("logger") or "")[:200])
        else:
            entry["kind"] = "notification"
    return entry


def summarize(method: str, params: dict[str, Any]) -> str:
    """One line for the notifications panel, cut to SUMMARY_CHARS: the feed is replayed whole to
    a reloading page, and a 50 MB log message made that one websocket message too large."""
    text = _summary(method, params)
    return text if len(text) <= SUMMARY_CHARS else f"{text[:SUMMARY_CHARS]}… ({len(text)} characters)"


def _summary(method: str, params: dict[str, Any]) -> str:
    """The interesting field, else the params as JSON."""
    if method == "notifications/message":
        data = params.get("data")
        return data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)[:500]
    if method == "notifications/resources/updated":
        return str(params.get("uri", ""))
    if method == "notifications/tasks/status":
        return f"{params.get('taskId', '')} {params.get('status', '')} {params.get('statusMessage') or ''}".strip()
    if method == "notifications/subscriptions/acknowledged":
        return json.dumps(params.get("notifications"), ensure_ascii=False)[:500]
    rest = {k: v for k, v in params.items() if k != "_meta"}
    return json.dumps(rest, ensure_ascii=False)[:500] if rest else ""
