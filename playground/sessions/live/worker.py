"""SessionWorker: owns one McpClient in one asyncio task, addressable by channel name.

Data flows one way — transport → tap → worker → (database, group "session.<id>") →
consumers — and commands the other way, from any consumer in any process, to the
worker's own channel. The database is the truth for the transcript (transcripts.recorder
saves every event before the pages see it).

The worker's core is the connection's life, the calls and their results, and the catalogue.
Everything else a session does is a feature (features/): the worker hands each its commands,
the server notifications and requests it declared, and a `SessionContext` (this worker) to act
through; it never names one.
"""
from __future__ import annotations

import asyncio
import contextlib
import datetime
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from playground import security
from playground.mcp.auth import OAuth
from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.events import Tap, TranscriptEvent
from playground.mcp.jsonrpc import METHOD_NOT_FOUND, JsonRpcError
from playground.mcp.secrets import NO_SECRETS, Redactor
from playground.mcp.transports.base import HttpStatusError, TransportError
from playground.transcripts.models import Session
from playground.transcripts.recorder import Recorder
from playground.transcripts.storable import storable, without_surrogates

from . import calls, shutdown, workers
from ..fragments import lines
from .calls import CALLS, http_error
from .connecting import ConnectWatch
from ..features import ALL, BY_COMMAND, FEATURES, Feature
from .throttle import LineThrottle
from .lanes import Lanes
from ..protocol import CURRENT_CALL, Catalogue, Command, Outcome, Snapshot, group_name, share_group_name

log = logging.getLogger(__name__)

# A call is shown in flight (spinner, progress bar, "Cancel request") once it has lasted this
# long, or as soon as it reports progress: a card that flashes for a millisecond tells nobody
# anything, and costs a render and a websocket message on the path a person waits on.
INFLIGHT_AFTER = 0.1
# The connecting strip is sent this long after its step changed (steps come in bursts).
STEP_DELAY = 0.05


def hook(feature: Feature, run: Callable[..., Any], *args: Any) -> Any:
    """One of a feature's hooks, run by the core: a feature's failure is logged, and never
    breaks the core (a Result that never came, a snapshot failing on every reconnect)."""
    try:
        return run(*args)
    except Exception:
        log.exception("feature %s failed in %s", feature.name, getattr(run, "__name__", run))
        return None


class FeatureResponder:
    """Answers the server's requests through the features that declared them (roots from the
    server's settings, sampling and elicitation by a person on the page), and declares exactly
    their capabilities."""

    def __init__(self, features: list[Feature]) -> None:
        self.by_method = {method: f for f in features for method in f.server_requests}
        self.features = features
        self.first = [f for f in features if f.answers_first]

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        for feature in self.features:
            caps.update(feature.capabilities())
        return caps

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        for first in self.first:
            if (result := await first.answer_first(method, params)) is not None:
                return result
        feature = self.by_method.get(method)
        if feature is None:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await feature.answer(method, params)


class SessionWorker:
    """One live session; the `SessionContext` its features act through."""

    def __init__(self, session_id: int, config: ServerConfig, *,
                 options: dict[str, dict[str, Any]] | None = None) -> None:
        self.session_id = session_id
        self.config = config
        self.layer = get_channel_layer()
        self.channel: str = ""
        self._client: McpClient | None = None
        self.tap = Tap(max_raw=settings.PLAYGROUND_MAX_FRAME_BYTES)
        # Transcript lines for the pages, throttled and rendered here once for every tab.
        self.throttle = LineThrottle(self._send_lines, rate=settings.PLAYGROUND_PAGE_MAX_LINES)
        self.recorder = Recorder(session_id, on_saved=self.throttle.push, pause=self.tap.pause,
                                 resume=self.tap.resume)
        self.tap.subscribe(self._on_event)
        self._catalogue: Catalogue = {}
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._calls: dict[str, asyncio.Task[Any]] = {}
        self._call_ids = itertools.count(1)
        self._spawned: set[asyncio.Task[Any]] = set()
        self._lanes = Lanes(self.spawn)          # features' commands, beside the command loop
        self.results: list[Outcome] = []             # recent results, replayed to a reloading page
        self.progress: dict[str, dict[str, Any]] = {}
        self.inflight: dict[str, dict[str, Any]] = {}  # page calls under way, for a reloading page
        self._announcing: dict[str, asyncio.Task[None]] = {}
        self.era_evidence = ""
        self._refresh_lock = asyncio.Lock()
        self._refresh_waiting = False
        self._end_reason: str | None = None     # set once the session is ending
        self._stop_reason: str | None = None    # why this side ended it, if it says (stop(reason))
        self._running = False                   # its task has started (its cleanup will run)
        self._serving = False                   # connected and listed: waiting for the end
        # While connecting: what it waits for, said in the state strip; the session's state as
        # it started (the strip is re-sent from it, without a database read, at each step).
        self.connecting: ConnectWatch | None = ConnectWatch(config)
        self._state: dict[str, Any] = {}
        self._step_task: asyncio.Task[None] | None = None
        self.hint: dict[str, Any] | None = None  # what a failed connection's evidence suggests trying
        # Live share viewers (their channels): while there is one, each piece of transcript is
        # rendered a second time for them (without the owner's controls), masked as the share
        # page and its exports are: Session.share_redactor(), read in start() (the server's
        # header and env secrets, a replay's source's too; the OAuth ones are the masker's).
        self.share_viewers: set[str] = set()
        self._share_redactor = NO_SECRETS
        self._secrets = (NO_SECRETS, NO_SECRETS, NO_SECRETS)    # (share's, masker, both together): secrets()
        # The features, and who listens to what.
        options = options or {}
        self.features: dict[str, Feature] = {cls.name: cls(self, options.get(cls.name)) for cls in FEATURES}
        listed = list(self.features.values())
        self._every = [f for f in listed if f.notifications == ALL]
        self._by_method: dict[str, list[Feature]] = {}
        for feature in listed:
            if feature.notifications != ALL:
                for method in feature.notifications:
                    self._by_method.setdefault(method, []).append(feature)
        self._listeners: dict[str, tuple[Feature, ...]] = {}      # by method, built as methods come
        self.responder = FeatureResponder(listed)
        self.recorder.checks = [f.check_frames for f in listed if f.checks_frames]
        self.client_auth: OAuth | None = next((a for f in listed if (a := f.client_auth()) is not None), None)

    # SessionContext ---------------------------------------------------------------------

    @property
    def client(self) -> McpClient | None:
        return self._client

    @property
    def catalogue(self) -> Catalogue:
        return self._catalogue

    async def publish(self, feature: str, event: dict[str, Any]) -> None:
        await self.broadcast({"type": "session.feature", "feature": feature, "event": event})

    async def reply(self, channel: str, feature: str, event: dict[str, Any]) -> None:
        await self.to_layer(self.layer.send, channel, {"type": "session.feature", "feature": feature, "event": event})

    async def publish_shared(self, feature: str, event: Callable[[Redactor], dict[str, Any]]) -> None:
        if self.share_viewers:
            await self.to_layer(self.layer.group_send, share_group_name(self.session_id),
                                {"type": "session.feature", "feature": feature, "event": event(self._share_redactor)})

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=f"session-{self.session_id}-{name}")
        self._spawned.add(task)                 # (the loop keeps only a weak reference)
        task.add_done_callback(self._spawn_done)

    def _spawn_done(self, task: asyncio.Task[Any]) -> None:
        self._spawned.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("session %s: task %s failed", self.session_id, task.get_name(), exc_info=task.exception())

    def set_request_timeout(self, seconds: float) -> None:
        self.config.timeout = seconds
        if self._client is not None:
            self._client.timeout = seconds

    def feature(self, name: str) -> Any:
        return self.features.get(name)

    def end(self, reason: str | None = None) -> None:
        """End the session from this side; `reason`, if given (and the first), is noted in its
        transcript and becomes its end reason."""
        if reason is not None and self._stop_reason is None and self._end_reason is None:
            self._stop_reason = reason
            self.tap.note("info", f"ending the session: {reason}")
        self._stop.set()

    # Lifecycle --------------------------------------------------------------------------

    async def start(self, session: Session) -> str:
        """`session`: the row just created for this worker (its facts and secrets, as created)."""
        # The default prefix on purpose: channels_redis receives every process-specific channel
        # under one lock, and a channel of another prefix ("worker.N.") waited behind a tab's
        # blocking receive on "specific.…!" — commands reached the worker late or never.
        self.channel = await self.layer.new_channel()
        await database_sync_to_async(Session.objects.filter(pk=self.session_id).update)(
            worker_channel=self.channel, heartbeat_at=timezone.now(),
            clock_origin=datetime.datetime.fromtimestamp(self.tap.epoch, datetime.UTC))
        self._state = self._live_facts(session.state())
        self._share_redactor = session.share_redactor()
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"session-worker-{self.session_id}")
        workers.add(self.session_id, self)
        shutdown.install()
        return self.channel

    async def stop(self, reason: str | None = None) -> None:
        """End the session from this side and wait until it has ended (server stopped,
        transcript saved, session marked ended). `reason`, if given, is the session's end
        reason, noted in its transcript. A worker still connecting or listing the catalogue is
        cancelled rather than waited for (a server that never answers would hold it for the
        request timeout): the connection is closed as it unwinds."""
        self.end(reason)
        task = self._task
        if task is None:
            return
        if not self._serving and self._end_reason is None and not task.cancelling():
            while not self._running:     # cancelled before its first step, it would skip its cleanup:
                await asyncio.sleep(0)   # the session left "connecting", the worker listed as live
            task.cancel()
        await asyncio.wait({task})

    async def _run(self) -> None:
        self._running = True
        receiver = asyncio.create_task(self._receive_loop())
        saver = asyncio.create_task(self.recorder.run(self._stop))
        status, reason = Session.Status.ENDED, "disconnected"
        try:
            try:
                security.check_config(self.config)
            except security.PolicyError as exc:
                self.tap.note("error", f"refused: {exc}", policy=True)
                status, reason = Session.Status.FAILED, str(exc)
                return
            try:
                self._client = await open_client(self.config, tap=self.tap, responder=self.responder,
                                                 guard=security.net_guard(), auth=self.client_auth)
            except ConnectError as exc:
                status, reason = Session.Status.FAILED, str(exc)
                self.hint = exc.hint
                return
            finally:
                self.connecting = None
            self._client.on_notification(self._on_notification)
            self._client.on_input_required(self._on_input_required)
            self._client.on_close(lambda why: self._stop.set())
            await self._save_facts()
            await self.refresh_catalogue()
            for feature in self.features.values():
                try:
                    await feature.start()
                except Exception:
                    log.exception("feature %s failed to start", feature.name)
            self._serving = True
            await self._stop.wait()
            if self._client.closed and self._client.close_reason != "closed by the client":
                reason = self._client.close_reason or "connection closed"
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
            self.connecting = None
            # Calls still waiting get no answer now: say why (not "cancelled by the user").
            self._end_reason = reason
            for task in [*self._calls.values(), *self._spawned]:
                task.cancel()
            for feature in self.features.values():
                with contextlib.suppress(Exception):
                    await feature.stop()
            self.tap.resume()       # the transport's readers must drain while it closes
            if self._client is not None:
                with contextlib.suppress(Exception):
                    await self._client.close()
            receiver.cancel()
            with contextlib.suppress(BaseException):
                await receiver
            self._stop.set()
            saver.cancel()
            with contextlib.suppress(BaseException):
                await saver
            await self.recorder.final_flush()
            with contextlib.suppress(Exception):
                await self.throttle.flush()        # the last lines (the note saying why it ended)
            await self._end(status, reason)
            workers.remove(self.session_id)

    async def _end(self, status: str, reason: str) -> None:
        def save() -> None:
            Session.objects.filter(pk=self.session_id).update(
                status=status, end_reason=storable(reason), ended_at=timezone.now(), worker_channel="")
        await database_sync_to_async(save)()
        await self._steps_done()
        await self.broadcast({"type": "session.state", "state": await self.state()})

    async def _save_facts(self) -> None:
        client = self._client
        assert client is not None

        def save() -> None:
            Session.objects.filter(pk=self.session_id).update(
                status=Session.Status.CONNECTED, era=client.era,
                protocol_version=storable(str(client.protocol_version or ""))[:40],
                server_info=storable(client.server_info), capabilities=storable(client.server_capabilities),
                instructions=storable(client.instructions or ""), transport=client.transport.name,
                era_evidence=storable(self.era_evidence))
        await database_sync_to_async(save)()
        await self._steps_done()
        await self.broadcast({"type": "session.state", "state": await self.state()})

    async def state(self) -> dict[str, Any]:
        session = await database_sync_to_async(Session.objects.get)(pk=self.session_id)
        return self._live_facts(session.state())

    def _live_facts(self, state: dict[str, Any]) -> dict[str, Any]:
        """What only the worker knows, added to the saved state: while connecting, what it
        waits for; once failed, what the evidence suggests trying (the page finds that one in
        the transcript after a reload: sessions.connecting_hint)."""
        if self.connecting is not None and state.get("status") == Session.Status.CONNECTING:
            state.update(self.connecting.facts())
        elif self.hint is not None and state.get("status") == Session.Status.FAILED:
            state["hint"] = self.hint
        return state

    def _state_soon(self) -> None:
        """The strip, once, shortly after the connection's step changed (steps come in bursts)."""
        if (self._step_task is None or self._step_task.done()) and self._state:
            self._step_task = asyncio.get_running_loop().create_task(self._send_step())

    async def _send_step(self) -> None:
        """Until the step shown is the step now: a step that changes while the strip is being
        sent is sent too (it would otherwise wait for the next change, maybe for minutes)."""
        shown = None
        while True:
            await asyncio.sleep(STEP_DELAY)
            watch = self.connecting
            if watch is None or watch.text == shown:
                return
            shown = watch.text
            await self.broadcast({"type": "session.state", "state": self._live_facts(dict(self._state))})

    async def _steps_done(self) -> None:
        """No step's strip may arrive after the state that ends connecting."""
        task, self._step_task = self._step_task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # From the connection ----------------------------------------------------------------

    def _on_event(self, event: TranscriptEvent) -> None:
        if event.kind == "era":
            self.era_evidence = event.text or ""
        if self.connecting is not None and self.connecting.observe(event):
            self._state_soon()
        self.recorder.add(event)

    def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]          # (a str: the client only calls listeners with notifications)
        if method == "notifications/progress":
            return                          # the call's own (on_progress)
        listeners = self._listeners.get(method)
        if listeners is None:
            listeners = (*(f for f in self._every if method not in f.ignored_notifications),
                         *self._by_method.get(method, ()))
            if len(self._listeners) < 1000:         # (a server may invent methods without end)
                self._listeners[method] = listeners
        for feature in listeners:
            try:
                feature.on_notification(message)
            except Exception:
                log.exception("feature %s failed on %s", feature.name, method)

    def _on_input_required(self, method: str, round_no: int, result: dict[str, Any]) -> None:
        for feature in self.features.values():
            hook(feature, feature.on_input_required, method, round_no, result)

    async def _send_lines(self, rows: list[dict[str, Any]], skipped: int) -> None:
        """One windowed piece of transcript for every tab, rendered once: a marker for the lines
        left out, then the lines (in appends under daphne's 1 MiB message). Rendering per tab
        made 30 tabs of a flood cost 30 times the rendering."""
        rows = self.masker().obj(rows)
        frames = [lines.skipped(self.session_id, skipped)] if skipped else []
        await self.broadcast({"type": "session.lines", "frames": frames + lines.transcript_append_frames(rows, owner=True)})
        if self.share_viewers:
            # Rendered again for the shares: without the owner's controls, every secret masked.
            shared = self._share_redactor.obj(rows) if self._share_redactor else rows
            frames = [lines.skipped(self.session_id, skipped, export_url="#share-downloads")] if skipped else []
            await self.to_layer(self.layer.group_send, share_group_name(self.session_id),
                                {"type": "session.lines", "frames": frames + lines.transcript_append_frames(shared)})

    def masker(self) -> Redactor:
        """Masks what the OAuth flow obtained in what the pages get, as the session's
        `oauth_secret_values` do for what is read from the database; from the flow's own list,
        which knows a token before the request that uses it is sent."""
        return self.client_auth.redactor() if self.client_auth is not None else NO_SECRETS

    def secrets(self) -> Redactor:
        """The share's redactor and the masker's values together (made anew when the flow learns one)."""
        share, masker = self._share_redactor, self.masker()
        if not masker:
            return share
        if self._secrets[0] is not share or self._secrets[1] is not masker:
            self._secrets = (share, masker, Redactor([*share.originals, *masker.originals]))
        return self._secrets[2]

    async def broadcast(self, message: dict[str, Any]) -> None:
        await self.to_layer(self.layer.group_send, group_name(self.session_id), message)
        if self.share_viewers and message.get("type") == "session.state":   # (redacted by each viewer)
            await self.to_layer(self.layer.group_send, share_group_name(self.session_id), message)

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

    # Commands ---------------------------------------------------------------------------

    async def _receive_loop(self) -> None:
        while True:
            message = await self.layer.receive(self.channel)
            await self._command(self.handle, message)

    async def _command(self, run: Callable[[Command], Awaitable[None]], message: Command) -> None:
        try:
            await run(message)
        except Exception as exc:
            log.exception("command failed")
            self.tap.note("error", f"command {message.get('command')!r} failed: {exc!r}")

    async def handle(self, message: Command) -> None:
        """One command. The core's run here, and none waits on the server; a feature's run in
        its lane (lanes.py), a call in a task of its own: nothing holds the loop."""
        command = str(message.get("command"))
        core = self._core.get(command)
        if core is not None:
            await core(self, message)
        elif command in BY_COMMAND:
            feature = self.features[BY_COMMAND[command].name]
            self._lanes.run(feature.name, lambda: self._command(feature.handle, message))
        elif command in CALLS:
            self._start_call(command, message)
        else:
            self.tap.note("error", f"unknown command from the page: {command!r}")

    def call(self, command: Command) -> str:
        """Run one of the page's calls as if a page had asked (SessionContext)."""
        return self._start_call(str(command["command"]), command)

    def _start_call(self, command: str, message: Command) -> str:
        call_id = message.get("call_id") or f"c{next(self._call_ids)}"
        task = asyncio.create_task(self._perform(command, message, call_id))
        self._calls[call_id] = task
        task.add_done_callback(lambda _t: self._calls.pop(call_id, None))
        return call_id

    async def _disconnect(self, message: Command) -> None:
        self._stop.set()

    async def _sync(self, message: Command) -> None:
        await self.to_layer(self.layer.send, message["reply_channel"], dict(self.snapshot()))

    async def _cancel(self, message: Command) -> None:
        task = self._calls.get(message.get("call_id", ""))
        if task:
            task.cancel()

    async def _refresh(self, message: Command) -> None:
        self.spawn("refresh", self.refresh_catalogue())

    async def _share_join(self, message: Command) -> None:
        """A live share viewer: lines go to the share group from now on; it replays once told,
        then gets what the features show shares (a replay's Differences so far)."""
        channel = message.get("reply_channel")
        if channel:
            self.share_viewers.add(channel)
            await self.to_layer(self.layer.send, channel, {"type": "share.follow"})
            for feature in self.features.values():
                for event in hook(feature, feature.share_snapshot, self._share_redactor) or ():
                    await self.reply(channel, feature.name, event)

    async def _share_leave(self, message: Command) -> None:
        self.share_viewers.discard(message.get("reply_channel", ""))

    _core: dict[str, Callable[["SessionWorker", Command], Coroutine[Any, Any, None]]] = {
        "disconnect": _disconnect, "sync": _sync, "cancel": _cancel, "refresh": _refresh,
        "share_join": _share_join, "share_leave": _share_leave}

    # Calls ------------------------------------------------------------------------------

    async def _perform(self, command: str, message: Command, call_id: str) -> None:
        client = self._client
        outcome: Outcome = {"type": "session.result", "call_id": call_id, "command": command,
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
            outcome["result"] = await calls.request(client, command, message,
                                                    lambda params: self._on_progress(call_id, params))
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

    async def _publish_result(self, outcome: Outcome) -> None:
        await calls.check_structured(outcome, self._catalogue)     # (still in flight meanwhile)
        started = self.inflight.get(outcome["call_id"]) or {}
        outcome["announced"] = bool(started.get("announced"))     # the Result removes the card, if any
        announcing = self._announcing.pop(outcome["call_id"], None)
        if announcing is not None:
            await asyncio.shield(announcing)     # the card reaches the group before the Result does
        self.progress.pop(outcome["call_id"], None)
        self.inflight.pop(outcome["call_id"], None)
        for feature in self.features.values():
            hook(feature, feature.on_call_end, outcome["call_id"], outcome)
        self.results = (self.results + [outcome])[-5:]
        await self.broadcast(dict(outcome))

    def _on_progress(self, call_id: str, params: dict[str, Any]) -> None:
        self.progress[call_id] = params
        self._announce(call_id)                  # the progress bar is in the in-flight card
        self.spawn("progress", self.broadcast({"type": "session.progress", "call_id": call_id, "progress": params}))

    # The catalogue ----------------------------------------------------------------------

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
        client = self._client
        if client is None:
            return
        caps = client.server_capabilities or {}
        catalogue: Catalogue = {"tools": [], "resources": [], "templates": [], "prompts": [], "errors": {}}
        for key, cap, fetch in (("tools", "tools", client.list_tools),
                                ("resources", "resources", client.list_resources),
                                ("templates", "resources", client.list_resource_templates),
                                ("prompts", "prompts", client.list_prompts)):
            if cap not in caps:
                continue
            try:
                catalogue[key] = await fetch()      # type: ignore[literal-required]
            except (JsonRpcError, RequestTimeout, TransportError) as exc:
                catalogue["errors"][key] = str(exc)
        # Legacy per-resource subscriptions (modern ones go through subscriptions/listen).
        catalogue["subscribe"] = client.era == "legacy" and bool((caps.get("resources") or {}).get("subscribe"))
        self._catalogue = catalogue
        await database_sync_to_async(lambda: Session.objects.filter(pk=self.session_id).update(
            catalogue=storable(catalogue)))()
        await self.broadcast({"type": "session.catalogue", "catalogue": catalogue})
        for feature in self.features.values():
            hook(feature, feature.on_catalogue)

    def snapshot(self) -> Snapshot:
        """What a (re)connecting page needs besides the transcript."""
        for started in self.inflight.values():
            started["announced"] = True          # the reloading page shows it: its result must remove it
        snapshot: Snapshot = {"type": "session.snapshot", "catalogue": self._catalogue, "results": self.results,
                              "progress": self.progress, "inflight": list(self.inflight.values()),
                              "features": [event for f in self.features.values() for event in hook(f, f.snapshot) or ()]}
        if self.connecting is not None and self._state:
            snapshot["state"] = self._live_facts(dict(self._state))   # (a reloaded tab: what it waits for)
        return snapshot


async def start_session(server: Any, owner: Any, *, oauth_redirect_uri: str | None = None,
                        kind: str = Session.Kind.SESSION, hints: dict[str, Any] | None = None,
                        replay_of: Session | None = None) -> Session:
    """Create the Session row and start its worker in this process. Each feature reads its
    options from the server first (`prepare`, given `hints` from the starting page); HTTP servers
    authorize with OAuth 2.1 on a 401 (`oauth_redirect_uri`: the page's callback as the browser
    sees it). `replay_of`: the session this one replays (its kind is then "replay")."""
    config: ServerConfig = server.to_config()

    def create() -> tuple[Session, dict[str, dict[str, Any]]]:
        options = {cls.name: cls.prepare(server, callback_url=oauth_redirect_uri, replay_of=replay_of, **(hints or {}))
                   for cls in FEATURES}
        masked = sorted({value for o in options.values() for value in o.get("secrets", []) if value})
        secrets = [s for s in config.secret_values() if s]
        if replay_of is not None:       # its frames reach this session's pages (the Differences): so do its secrets
            secrets += [s for s in replay_of.secret_values or [] if s not in secrets]
            masked = sorted({*masked, *(replay_of.oauth_secret_values or [])})
        session = Session.objects.create(server=server, server_name=server.name, owner=owner,
                                         transport=config.transport, secret_values=secrets,
                                         oauth_secret_values=masked, heartbeat_at=timezone.now(),
                                         kind=Session.Kind.REPLAY if replay_of else kind, source=replay_of)
        return session, options
    session, options = await database_sync_to_async(create)()
    worker = SessionWorker(session.pk, config, options=options)
    await worker.start(session)
    return session
