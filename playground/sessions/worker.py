"""SessionWorker: owns one McpClient in one asyncio task, addressable by channel name.

Data flows one way — transport → tap → worker → (database, group "session.<id>") →
consumers — and commands the other way, from any consumer in any process, to the
worker's own channel. The database is the truth for the transcript: events are
persisted in batches first and only then pushed to the group, so a viewer that missed a
group message (full channel, hidden tab, reload) replays them by sequence number.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from playground import security
from playground.mcp.auth import OAuth
from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.events import Tap, TranscriptEvent
from playground.mcp import jsontext
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.secrets import Redactor
from playground.mcp.transports.base import HttpStatusError, TransportError
from playground.oauth import page as oauth_page
from playground.oauth.models import ServerAuth
from playground.transcripts.models import Event, Session
from playground.transcripts.storable import storable, storable_row, without_surrogates

from . import render, shutdown
from .features import COMMANDS as FEATURE_COMMANDS
from .features import CURRENT_CALL, Features
from .flood import PageWindow

log = logging.getLogger(__name__)

# Workers living in this process, by session id.
WORKERS: dict[int, "SessionWorker"] = {}

FLUSH_MAX_EVENTS = 500        # one database batch at most
FLUSH_WINDOW = 0.02           # seconds to gather more events once one arrived
# Events waiting to be saved beyond which the server's output is no longer read (the tap is
# paused, the server blocks on its pipe), and below which reading resumes: a flood costs
# bounded memory instead of queuing every event (20,000 of them grew the process by ~30 MB).
# Reading resumes as soon as one batch is saved, so reading and saving overlap (resuming only
# once the backlog had drained left the reader idle for three saves in a row).
BACKLOG_HIGH = 4 * FLUSH_MAX_EVENTS
BACKLOG_LOW = BACKLOG_HIGH - FLUSH_MAX_EVENTS
# The same in characters of recorded text (a frame is recorded up to PLAYGROUND_MAX_FRAME_BYTES):
# 2,000 unsaved events of a megabyte each would be gigabytes. A batch stops at BATCH_CHARS too,
# so one insert never carries hundreds of megabytes.
BATCH_CHARS = 8 * 1024 * 1024
BACKLOG_CHARS = 4 * BATCH_CHARS
# A call is shown in flight (spinner, progress bar, "Cancel request") once it has lasted this
# long, or as soon as it reports progress: a card that flashes for a millisecond tells nobody
# anything, and costs a render and a websocket message on the path a person waits on.
INFLIGHT_AFTER = 0.1


_heartbeat: asyncio.Task[None] | None = None


def _ensure_heartbeat() -> None:
    """One heartbeat task per process (and event loop), running while it has workers."""
    global _heartbeat
    loop = asyncio.get_running_loop()
    if _heartbeat is None or _heartbeat.done() or _heartbeat.get_loop() is not loop:
        _heartbeat = loop.create_task(_heartbeat_loop(), name="session-heartbeats")


async def _heartbeat_loop() -> None:
    """Tell other processes that this process's workers live (see durability.reap_dead_sessions):
    one UPDATE for all of them every beat. (A task and a write per worker made 100 idle sessions
    cost 1-2% of a core: ten writes a second.) Ends when the process has no worker left."""
    def touch(beats: dict[int, str]) -> None:
        Session.objects.filter(pk__in=list(beats), worker_channel__in=list(beats.values())).update(
            heartbeat_at=timezone.now())

    while WORKERS:
        await asyncio.sleep(settings.PLAYGROUND_HEARTBEAT_SECONDS)
        beats = {session_id: worker.channel for session_id, worker in WORKERS.items() if worker.channel}
        if beats:
            try:
                await database_sync_to_async(touch)(beats)
            except Exception:
                log.exception("heartbeat of %d session(s) failed", len(beats))


_NO_SECRETS = Redactor()


def group_name(session_id: int) -> str:
    return f"session.{session_id}"


class PageResponder:
    """Answers the server's requests through the page: roots from the server's settings
    without asking; sampling and elicitation by a person, via a card on the page."""

    def __init__(self, worker: "SessionWorker", roots: list[dict[str, Any]]) -> None:
        self.worker = worker
        self.roots = roots
        self.waiting: dict[str, tuple[str, dict[str, Any], asyncio.Future[dict[str, Any]], Any]] = {}
        self._keys = itertools.count(1)

    def capabilities(self) -> dict[str, Any]:
        return {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "roots/list":
            return {"roots": self.roots}
        if method not in ("sampling/createMessage", "elicitation/create"):
            raise JsonRpcError(-32601, f"Method not found: {method}")
        key = f"q{next(self._keys)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        context = self.worker.features.request_context()     # an input round of one of our calls?
        self.waiting[key] = (method, params, future, context)
        await self.worker.broadcast({"type": "session.server_request", "key": key, "method": method,
                                     "params": params, "context": context})
        try:
            return await future
        finally:
            self.waiting.pop(key, None)
            await self.worker.broadcast({"type": "session.server_request_done", "key": key})

    def resolve(self, key: str, result: dict[str, Any] | None, error: str | None) -> bool:
        entry = self.waiting.get(key)
        if entry is None or entry[2].done():
            return False
        if error is not None:
            entry[2].set_exception(JsonRpcError(-1, error))
        else:
            entry[2].set_result(result or {})
        return True

    def pending(self) -> list[dict[str, Any]]:
        return [{"key": k, "method": m, "params": p, "context": c} for k, (m, p, _, c) in self.waiting.items()]


class SessionWorker:
    def __init__(self, session_id: int, config: ServerConfig, *, roots: list[dict[str, Any]] | None = None,
                 oauth_factory: Callable[["SessionWorker"], OAuth | None] | None = None) -> None:
        self.session_id = session_id
        self.config = config
        self.layer = get_channel_layer()
        self.channel: str = ""
        self.client: McpClient | None = None
        self.responder = PageResponder(self, roots or [])
        self.tap = Tap(max_raw=settings.PLAYGROUND_MAX_FRAME_BYTES)
        self.tap.subscribe(self._on_event)
        self.authorizer: Any = None        # set by the OAuth factory: the page's authorizer
        self.client_auth: OAuth | None = oauth_factory(self) if oauth_factory else None
        self._buffer: list[TranscriptEvent] = []
        self._buffer_chars = 0                       # recorded text held in _buffer
        # Transcript lines for the pages, windowed and rendered here once for every tab.
        self.window = PageWindow(self._send_lines, rate=settings.PLAYGROUND_PAGE_MAX_LINES)
        self._buffered = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._calls: dict[str, asyncio.Task[Any]] = {}
        self._call_ids = itertools.count(1)
        self.catalogue: dict[str, Any] = {}
        self.results: list[dict[str, Any]] = []      # recent results, replayed to a reloading page
        self.progress: dict[str, dict[str, Any]] = {}
        self.inflight: dict[str, dict[str, Any]] = {}  # page calls under way, for a reloading page
        self._announcing: dict[str, asyncio.Task[None]] = {}
        self.features = Features(self)
        self.era_evidence = ""
        self._refresh_lock = asyncio.Lock()
        self._refresh_waiting = False
        self._end_reason: str | None = None     # set once the session is ending
        self._stop_reason: str | None = None    # why this side ended it, if it says (stop(reason))
        self._serving = False                   # connected and listed: waiting for the end

    # Lifecycle --------------------------------------------------------------

    async def start(self) -> str:
        # The default prefix on purpose: channels_redis receives every process-specific channel
        # under one lock, and a channel of another prefix ("worker.N.") waited behind a tab's
        # blocking receive on "specific.…!" — commands reached the worker late or never.
        self.channel = await self.layer.new_channel()
        await database_sync_to_async(Session.objects.filter(pk=self.session_id).update)(
            worker_channel=self.channel, heartbeat_at=timezone.now())
        WORKERS[self.session_id] = self
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"session-worker-{self.session_id}")
        _ensure_heartbeat()
        shutdown.install()
        return self.channel

    async def stop(self, reason: str | None = None) -> None:
        """End the session from this side and wait until it has ended (server stopped,
        transcript saved, session marked ended). `reason`, if given, is the session's end
        reason, noted in its transcript. A worker still connecting or listing the catalogue is
        cancelled rather than waited for (a server that never answers would hold it for the
        request timeout): the connection is closed as it unwinds."""
        if reason is not None and self._stop_reason is None and self._end_reason is None:
            self._stop_reason = reason
            self.tap.note("info", f"ending the session: {reason}")
        self._stop.set()
        task = self._task
        if task is None:
            return
        if not self._serving and self._end_reason is None and not task.cancelling():
            task.cancel()
        await asyncio.wait({task})

    async def _run(self) -> None:
        receiver = asyncio.create_task(self._receive_loop())
        flusher = asyncio.create_task(self._flush_loop())
        status, reason = Session.Status.ENDED, "disconnected"
        try:
            try:
                security.check_config(self.config)
            except security.PolicyError as exc:
                self.tap.note("error", f"refused: {exc}", policy=True)
                status, reason = Session.Status.FAILED, str(exc)
                return
            try:
                self.client = await open_client(self.config, tap=self.tap, responder=self.responder,
                                                guard=security.net_guard(), auth=self.client_auth)
            except ConnectError as exc:
                status, reason = Session.Status.FAILED, str(exc)
                return
            self.client.on_notification(self.features.on_notification)
            self.client.on_input_required(self.features.on_input_required)
            self.client.on_close(lambda why: self._stop.set())
            await self._save_facts()
            await self.refresh_catalogue()
            await self.features.publish_panels()
            self._serving = True
            await self._stop.wait()
            if self.client.closed and self.client.close_reason != "closed by the client":
                reason = self.client.close_reason or "connection closed"
            elif self._stop_reason is not None:
                reason = self._stop_reason
        except asyncio.CancelledError:      # stop() before the session was up
            reason = self._stop_reason or "stopped while connecting"
            raise
        except Exception as exc:  # never let a worker die silently
            log.exception("session worker %s failed", self.session_id)
            status, reason = Session.Status.FAILED, f"worker error: {exc!r}"
            self.tap.note("error", f"worker error: {exc!r}")
        finally:
            # Calls still waiting get no answer now: say why (not "cancelled by the user").
            self._end_reason = reason
            for task in list(self._calls.values()):
                task.cancel()
            self.tap.resume()       # the transport's readers must drain while it closes
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await self.client.close()
            receiver.cancel()
            with contextlib.suppress(BaseException):
                await receiver
            self._stop.set()
            flusher.cancel()
            with contextlib.suppress(BaseException):
                await flusher
            await self._final_flush()
            with contextlib.suppress(Exception):
                await self.window.flush()        # the last lines (the note saying why it ended)
            await self._end(status, reason)
            WORKERS.pop(self.session_id, None)
            if not WORKERS and _heartbeat is not None:
                _heartbeat.cancel()

    async def _final_flush(self) -> None:
        for attempt in range(5):
            try:
                await self._flush()
                return
            except Exception:
                log.exception("final transcript flush failed (attempt %d)", attempt + 1)
                await asyncio.sleep(0.2 * (attempt + 1))

    async def _end(self, status: str, reason: str) -> None:
        def save() -> None:
            Session.objects.filter(pk=self.session_id).update(
                status=status, end_reason=storable(reason), ended_at=timezone.now(), worker_channel="")
        await database_sync_to_async(save)()
        await self.broadcast({"type": "session.state", "state": await self.state()})

    async def _save_facts(self) -> None:
        client = self.client
        assert client is not None

        def save() -> None:
            Session.objects.filter(pk=self.session_id).update(
                status=Session.Status.CONNECTED, era=client.era,
                protocol_version=storable(str(client.protocol_version or ""))[:40],
                server_info=storable(client.server_info), capabilities=storable(client.server_capabilities),
                instructions=storable(client.instructions or ""), transport=client.transport.name,
                era_evidence=storable(self.era_evidence))
        await database_sync_to_async(save)()
        await self.broadcast({"type": "session.state", "state": await self.state()})

    async def state(self) -> dict[str, Any]:
        session = await database_sync_to_async(Session.objects.get)(pk=self.session_id)
        return session_state(session)

    # Transcript ---------------------------------------------------------------

    def _on_event(self, event: TranscriptEvent) -> None:
        if event.kind == "era":
            self.era_evidence = event.text or ""
        self._buffer.append(event)
        self._buffer_chars += _chars(event)
        self._buffered.set()
        if len(self._buffer) >= BACKLOG_HIGH or self._buffer_chars >= BACKLOG_CHARS:
            self.tap.pause()

    def _full_batch_waits(self, start: int = 0, start_chars: int = 0) -> bool:
        """Whether a full batch is buffered beyond the first `start` events (`start_chars` of text)."""
        return len(self._buffer) - start >= FLUSH_MAX_EVENTS or self._buffer_chars - start_chars >= BATCH_CHARS

    def _next_batch(self, start: int = 0) -> list[TranscriptEvent]:
        """The oldest buffered events from `start` on, up to FLUSH_MAX_EVENTS and BATCH_CHARS (one at least)."""
        size, chars = 0, 0
        for event in self._buffer[start:start + FLUSH_MAX_EVENTS]:
            chars += _chars(event)
            size += 1
            if chars >= BATCH_CHARS:
                break
        return self._buffer[start:start + size]

    async def _flush_loop(self) -> None:
        while True:
            await self._buffered.wait()
            # Gather a burst into one batch: one insert and one group message instead of hundreds.
            if not self._full_batch_waits():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), FLUSH_WINDOW)
            try:
                await self._flush(drain=False)
            except Exception:
                # The batch went back into the buffer; wait a little and try again rather than lose it.
                log.exception("saving transcript events failed; retrying")
                await asyncio.sleep(0.5)

    async def _flush(self, drain: bool = True) -> None:
        """Persist buffered events, then push them to viewers. A failed write keeps them buffered.

        Without `drain`, it stops once less than a full batch is left: what arrived during a save
        waits for the next window with the events after it (saving it at once made a batch of a
        row or two per save, back to back: the database thread never idled during a stream of calls).

        Up to two saves are in flight: the next full batch waits in the database thread's queue
        while the one before it is written. With one, the thread idled between batches until the
        event loop (busy reading a flood) got round to handing it the next: ~40% of a flood.
        Batches are applied (removed from the buffer, shown) in order; a failed save leaves its
        batch and the ones after it buffered, to be saved again (saving is idempotent)."""
        # (rows of the batch, their recorded text, the save): a batch's rows are its first len(rows) events
        in_flight: collections.deque[tuple[list[dict[str, Any]], int, asyncio.Future[None]]] = collections.deque()
        queued = queued_chars = 0                 # buffered events (and their text) handed to a save
        try:
            while True:
                while len(in_flight) < 2 and queued < len(self._buffer) and (
                        not in_flight or drain or self._full_batch_waits(queued, queued_chars)):
                    batch = self._next_batch(queued)
                    chars = sum(_chars(event) for event in batch)
                    rows = [event.to_dict() for event in batch]
                    saving = asyncio.ensure_future(database_sync_to_async(save_events)(self.session_id, rows))
                    in_flight.append((rows, chars, saving))
                    queued, queued_chars = queued + len(rows), queued_chars + chars
                if not in_flight:
                    break
                rows, chars, saving = in_flight[0]
                await saving
                in_flight.popleft()
                queued, queued_chars = queued - len(rows), queued_chars - chars
                del self._buffer[:len(rows)]
                self._buffer_chars -= chars
                if len(self._buffer) <= BACKLOG_LOW and self._buffer_chars <= BACKLOG_CHARS - BATCH_CHARS:
                    self.tap.resume()
                # Saved first, shown after (the database is the truth a reloading tab replays).
                await self.window.push(rows)
                if not in_flight and not drain and not self._full_batch_waits():
                    break
        finally:
            for _rows, _size, saving in in_flight:     # left behind by a failure: finish unobserved
                saving.add_done_callback(_ignore_outcome)
        if not self._buffer:
            self._buffered.clear()

    async def _send_lines(self, rows: list[dict[str, Any]], skipped: int) -> None:
        """One windowed piece of transcript for every tab, rendered once: a marker for the lines
        left out, then the lines (in appends under daphne's 1 MiB message). Rendering per tab
        made 30 tabs of a flood cost 30 times the rendering."""
        frames = [render.skipped(self.session_id, skipped)] if skipped else []
        frames += render.transcript_append_frames(self.masker().obj(rows))
        await self.broadcast({"type": "session.lines", "frames": frames})

    def masker(self) -> Redactor:
        """Masks what the OAuth flow obtained in what the pages get, as the session's
        `oauth_secret_values` do for what is read from the database; from the flow's own list,
        which knows a token before the request that uses it is sent."""
        return self.client_auth.redactor() if self.client_auth is not None else _NO_SECRETS

    async def broadcast(self, message: dict[str, Any]) -> None:
        await self.to_layer(self.layer.group_send, group_name(self.session_id), message)

    async def to_layer(self, send: Callable[[str, dict[str, Any]], Any], to: str, message: dict[str, Any]) -> None:
        """Send on the channel layer, OAuth values masked (a server may echo a token in a
        result, a log entry, a request; transcript lines are masked before they are rendered,
        where a preview could cut a token in two). A server's unpaired surrogates ("\\ud800"
        in its JSON) make Redis's msgpack refuse the message, which then goes with U+FFFD in their place."""
        if message.get("type") != "session.lines":
            message = self.masker().obj(message)
        try:
            await send(to, message)
        except UnicodeEncodeError:
            await send(to, without_surrogates(message))

    # Commands -------------------------------------------------------------------

    async def _receive_loop(self) -> None:
        while True:
            message = await self.layer.receive(self.channel)
            try:
                await self.handle(message)
            except Exception as exc:
                log.exception("command failed")
                self.tap.note("error", f"command {message.get('command')!r} failed: {exc!r}")

    async def handle(self, message: dict[str, Any]) -> None:
        command = message.get("command")
        if command == "disconnect":
            self._stop.set()
        elif command == "sync":
            await self.to_layer(self.layer.send, message["reply_channel"], {"type": "session.snapshot", **self.snapshot()})
        elif command == "answer":
            self.responder.resolve(message["key"], message.get("result"), message.get("error"))
        elif command == "cancel":
            task = self._calls.get(message.get("call_id", ""))
            if task:
                task.cancel()
        elif command in ("oauth_callback", "oauth_refresh", "oauth_revoke"):
            self._spawn_call(f"{command}-{next(self._call_ids)}", message, oauth_page.handle_command(self, message))
        elif command == "refresh":
            self._spawn_call("refresh", {}, self.refresh_catalogue())
        elif command in FEATURE_COMMANDS:
            await self.features.handle(command, message)
        elif command in ("call_tool", "read_resource", "get_prompt", "ping", "raw", "task_get", "task_result",
                         "task_cancel"):
            call_id = message.get("call_id") or f"c{next(self._call_ids)}"
            self._spawn_call(call_id, message, self._perform(command, message, call_id))
        else:
            self.tap.note("error", f"unknown command from the page: {command!r}")

    def _spawn_call(self, call_id: str, message: dict[str, Any], coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._calls[call_id] = task
        task.add_done_callback(lambda _t: self._calls.pop(call_id, None))

    async def _perform(self, command: str, message: dict[str, Any], call_id: str) -> None:
        client = self.client
        outcome: dict[str, Any] = {"type": "session.result", "call_id": call_id, "command": command,
                                   "name": message.get("name") or message.get("uri") or message.get("method") or ""}
        if client is None or client.closed:
            outcome["error"] = {"message": "not connected"}
            await self._publish_result(outcome)
            return
        started = {"type": "session.call_started", "call_id": call_id, "command": command,
                   "name": outcome["name"], "started": time.time()}
        self.inflight[call_id] = started
        announce = asyncio.get_running_loop().call_later(INFLIGHT_AFTER, self._announce, call_id)
        CURRENT_CALL.set(call_id)
        try:
            if command == "call_tool" and message.get("task") is not None:
                # Task-augmented (2025-11-25 tasks): the answer is a CreateTaskResult to poll.
                outcome["result"] = await client.request(
                    "tools/call", {"name": message["name"], "arguments": message.get("arguments") or {},
                                   "task": message["task"]},
                    timeout=message.get("timeout"), on_progress=lambda p: self._on_progress(call_id, p))
            elif command == "call_tool":
                outcome["result"] = await client.call_tool(
                    message["name"], message.get("arguments"), timeout=message.get("timeout"),
                    on_progress=lambda p: self._on_progress(call_id, p))
            elif command in ("task_get", "task_result", "task_cancel"):
                method = {"task_get": "tasks/get", "task_result": "tasks/result", "task_cancel": "tasks/cancel"}[command]
                outcome["result"] = await client.request(method, {"taskId": message["task_id"]},
                                                         timeout=message.get("timeout"))
            elif command == "read_resource":
                outcome["result"] = await client.read_resource(message["uri"])
            elif command == "get_prompt":
                outcome["result"] = await client.get_prompt(message["name"], message.get("arguments"))
            elif command == "ping":
                outcome["result"] = await client.ping()
            elif command == "raw":
                frame = message.get("frame")
                request_id = raw_request_id(frame) if frame and not message.get("notification") else None
                if request_id is not None:
                    # A hand-made request with an id: wait for the response to that id.
                    outcome["result"] = await client.request_raw(frame, request_id, timeout=message.get("timeout"))
                elif frame:
                    await client.send_raw(frame)
                    outcome["result"] = {"sent": True}
                elif message.get("notification"):
                    await client.notify(message["method"], message.get("params"))
                    outcome["result"] = {"sent": True}
                else:
                    outcome["result"] = await client.request(message["method"], message.get("params"),
                                                             timeout=message.get("timeout"))
        except JsonRpcError as exc:
            outcome["error"] = {"code": exc.code, "message": exc.message, "data": exc.data}
        except RequestTimeout as exc:
            outcome["error"] = {"message": str(exc), "timeout": True}
        except asyncio.CancelledError:
            if self._end_reason is not None:
                outcome["error"] = {"message": f"no answer: the session ended ({self._end_reason})", "kind": "ended"}
            else:
                outcome["error"] = {"message": "cancelled by the user", "cancelled": True}
            announce.cancel()
            await self._publish_result(outcome)
            raise
        except HttpStatusError as exc:
            outcome["error"] = http_error(exc)
        except TransportError as exc:
            outcome["error"] = {"message": str(exc) or type(exc).__name__, "kind": "transport"}
        except Exception as exc:
            # The client gave up (ProtocolError: too many input rounds...) or a bug: not the server's words.
            outcome["error"] = {"message": str(exc) or type(exc).__name__, "kind": "client"}
        announce.cancel()
        outcome["latency_ms"] = round((time.time() - started["started"]) * 1000, 1)
        await self._publish_result(outcome)

    def _announce(self, call_id: str) -> None:
        """Show a call in flight on the pages (once)."""
        started = self.inflight.get(call_id)
        if started is not None and not started.get("announced"):
            started["announced"] = True
            self._announcing[call_id] = asyncio.get_running_loop().create_task(self.broadcast(started))

    async def _publish_result(self, outcome: dict[str, Any]) -> None:
        started = self.inflight.get(outcome["call_id"]) or {}
        outcome["announced"] = bool(started.get("announced"))     # the Result removes the card, if any
        announcing = self._announcing.pop(outcome["call_id"], None)
        if announcing is not None:
            await asyncio.shield(announcing)     # the card reaches the group before the Result does
        self.progress.pop(outcome["call_id"], None)
        self.inflight.pop(outcome["call_id"], None)
        rounds = self.features.finish_call(outcome["call_id"])
        if rounds:
            outcome["rounds"] = rounds
        self.results = (self.results + [outcome])[-5:]
        await self.broadcast(outcome)

    def _on_progress(self, call_id: str, params: dict[str, Any]) -> None:
        self.progress[call_id] = params
        self._announce(call_id)                  # the progress bar is in the in-flight card
        asyncio.get_running_loop().create_task(self.broadcast(
            {"type": "session.progress", "call_id": call_id, "progress": params}))

    async def refresh_catalogue(self) -> None:
        """Refreshes run one at a time, and at most one waits: it will see every change announced
        so far. (Concurrent ones tripled the traffic on servers that announce list_changed at
        start, and the slowest — possibly stale — one overwrote the catalogue.)"""
        if self._refresh_waiting:
            return
        self._refresh_waiting = True
        async with self._refresh_lock:
            self._refresh_waiting = False
            await self._refresh_catalogue_now()

    async def _refresh_catalogue_now(self) -> None:
        """Every list, all pages, for the capabilities the server declared."""
        client = self.client
        if client is None:
            return
        caps = client.server_capabilities or {}
        catalogue: dict[str, Any] = {"tools": [], "resources": [], "templates": [], "prompts": [], "errors": {}}
        for key, cap, fetch in (("tools", "tools", client.list_tools),
                                ("resources", "resources", client.list_resources),
                                ("templates", "resources", client.list_resource_templates),
                                ("prompts", "prompts", client.list_prompts)):
            if cap not in caps:
                continue
            try:
                catalogue[key] = await fetch()
            except (JsonRpcError, RequestTimeout, TransportError) as exc:
                catalogue["errors"][key] = str(exc)
        # Legacy per-resource subscriptions (modern ones go through subscriptions/listen).
        catalogue["subscribe"] = client.era == "legacy" and bool((caps.get("resources") or {}).get("subscribe"))
        self.catalogue = catalogue
        await database_sync_to_async(lambda: Session.objects.filter(pk=self.session_id).update(
            catalogue=storable(catalogue)))()
        await self.broadcast({"type": "session.catalogue", "catalogue": catalogue})

    def snapshot(self) -> dict[str, Any]:
        """What a (re)connecting page needs besides the transcript."""
        for started in self.inflight.values():
            started["announced"] = True          # the reloading page shows it: its result must remove it
        return {"catalogue": self.catalogue, "results": self.results, "progress": self.progress,
                "calls": sorted(self._calls), "server_requests": self.responder.pending(),
                "inflight": list(self.inflight.values()), **self.features.snapshot(),
                "oauth_pending": self.authorizer.pending() if self.authorizer is not None else []}


def raw_request_id(frame: str) -> Any:
    """The id of a hand-typed frame that is a JSON-RPC request (a string or an integer id), else None."""
    try:
        parsed = jsontext.loads(frame)
    except (ValueError, RecursionError):
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("method"), str) and "id" in parsed:
        rid = parsed["id"]
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return rid
    return None


def http_error(exc: HttpStatusError) -> dict[str, Any]:
    """An HTTP error status: the JSON-RPC error in its body if there is one (the server's own code)."""
    body = exc.json if isinstance(exc.json, dict) else None
    error = body.get("error") if body else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return {"code": error["code"], "message": str(error.get("message", "")), "data": error.get("data"),
                "http": exc.status}
    return {"message": str(exc), "kind": "transport", "http": exc.status}


def _ignore_outcome(future: asyncio.Future[Any]) -> None:
    """A save left running when its batch's turn failed: it is done again later (idempotent)."""
    if not future.cancelled():
        future.exception()


def _chars(event: TranscriptEvent) -> int:
    """What an unsaved event weighs: its recorded text (the parsed message is of the same order)."""
    return len(event.raw or event.text or "")


def _method(row: dict[str, Any]) -> str:
    message = row.get("message")
    method = message.get("method") if isinstance(message, dict) else None
    return method[:200] if isinstance(method, str) else ""


def _same(text: str) -> str:
    return text


def save_events(session_id: int, rows: list[dict[str, Any]]) -> None:
    """One transaction: the rows, then the session's event count.

    Multi-row INSERT ... VALUES (...), (...) ON CONFLICT DO NOTHING statements (SQLite and
    PostgreSQL), not executemany: SQLite's driver releases the GIL around each statement's step
    and takes it back after, so executemany waited for the event loop's thread once a row (up to
    its 5 ms switch interval when the loop is busy, as in a flood: ~780 us a row against a busy
    thread, ~37 us a row with one statement per 500). One statement also steps once, ~40% less
    time a row without contention. The ORM's bulk_create built a model instance and compiled
    every field of every row. Idempotent: a batch whose save was interrupted may be saved again.
    `data` is the row's JSON text, as the JSONField would store it (jsonb on PostgreSQL)."""
    texts = [jsontext.dumps(row) for row in rows]
    if connection.vendor == "postgresql":
        from psycopg.types.json import Jsonb
        cleaned = [storable_row(row, text) for row, text in zip(rows, texts)]
        rows, texts = [row for row, _ in cleaned], [text for _, text in cleaned]
        params: list[Any] = [Jsonb(text, dumps=_same) for text in texts]
    else:
        params = texts
    values: list[Any] = []
    for row, data in zip(rows, params):
        values += (session_id, row["seq"], row["t"], row["dir"], _method(row), data)
    step = INSERT_ROWS * _EVENT_COLUMNS
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(values), step):
            part = values[start:start + step]
            cursor.execute(_insert_events(len(part) // _EVENT_COLUMNS), part)
        cursor.execute(_COUNT_EVENTS, [rows[-1]["seq"], session_id])    # (the ORM compiled it every batch)


# Rows per INSERT statement: 3,000 parameters, under SQLite's and PostgreSQL's limits.
INSERT_ROWS = 500
_EVENT_COLUMNS = 6


@functools.lru_cache(maxsize=64)
def _insert_events(count: int) -> str:
    """The INSERT of `count` rows (cached: a flood's batches are mostly of one size)."""
    return (f"INSERT INTO {Event._meta.db_table} (session_id, seq, t, dir, method, data) VALUES "
            + ", ".join(["(%s, %s, %s, %s, %s, %s)"] * count)
            + " ON CONFLICT (session_id, seq) DO NOTHING")


_COUNT_EVENTS = f"UPDATE {Session._meta.db_table} SET event_count = %s WHERE id = %s"


def session_state(session: Session) -> dict[str, Any]:
    return {"id": session.pk, "status": session.status, "era": session.era, "era_evidence": session.era_evidence,
            "protocol_version": session.protocol_version, "server_info": session.server_info,
            "capabilities": session.capabilities, "instructions": session.instructions,
            "transport": session.transport, "end_reason": session.end_reason,
            "event_count": session.event_count}


async def start_session(server: Any, owner: Any, *, oauth_redirect_uri: str | None = None) -> Session:
    """Create the Session row and start its worker in this process. HTTP servers authorize
    with OAuth 2.1 on a 401 (`oauth_redirect_uri`: the page's callback as the browser sees it)."""
    config: ServerConfig = server.to_config()

    def create() -> tuple[Session, Any]:
        auth = ServerAuth.objects.filter(server=server).first()
        client_secret = auth.auth_settings().client_secret if auth else ""
        return Session.objects.create(server=server, server_name=server.name, owner=owner, transport=config.transport,
                                      secret_values=[s for s in config.secret_values() if s],
                                      oauth_secret_values=[client_secret] if client_secret else [],
                                      heartbeat_at=timezone.now()), auth
    session, auth = await database_sync_to_async(create)()
    factory = None
    if config.transport != "stdio":
        def factory(worker: SessionWorker) -> OAuth | None:
            return oauth_page.make_oauth(worker, server.pk, config.url, auth, oauth_redirect_uri)
    worker = SessionWorker(session.pk, config, roots=list(server.roots or []), oauth_factory=factory)
    await worker.start()
    return session
