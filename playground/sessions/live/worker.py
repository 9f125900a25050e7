"""SessionWorker: owns one McpClient in one asyncio task, addressable by channel name.

Data flows one way — transport → tap → worker → (database, group "session.<id>") →
consumers — and commands the other way, from any consumer in any process, to the
worker's own channel. The database is the truth for the transcript (transcripts.recorder
saves every event before the pages see it).

The worker keeps the session's life: it connects, serves until the end, and ends cleanly
(calls told why, features stopped, the server stopped, the transcript saved, the session marked
ended), and it routes each command. The rest it delegates, each to one component:
- calls.py, the page's calls (`Calls`: start, progress, cancel, the outcome published);
- catalogue.py, the server's lists (`CatalogueRefresh`);
- state_strip.py, the state strip and the connecting steps (`StateStrip`);
- audience.py, what goes to the tabs and the share viewers, masked (`Audience`);
- feature_hub.py, the features (`FeatureHub`): each gets its commands, the server notifications
  and requests it declared, and a `SessionContext` (this worker) to act through; the worker
  never names one.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from playground import security
from playground.channel_layer import channel_layer
from playground.mcp.client import McpClient
from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.events import Tap
from playground.mcp.secrets import Redactor
from playground.registry.models import Server
from playground.transcripts.models import Session
from playground.transcripts.recorder import Recorder

from ..features import BY_COMMAND, FEATURES, Feature
from ..protocol import Catalogue, Command, Snapshot, as_command
from . import shutdown, workers
from .audience import Audience
from .calls import CALLS, Calls
from .catalogue import CatalogueRefresh
from .feature_hub import FeatureHub
from .lanes import Lanes
from .layers import InboxLayer, copied
from .state_strip import StateStrip

log = logging.getLogger(__name__)

Handler = Callable[[Command], Awaitable[None]]


class SessionWorker:
    """One live session; the `SessionContext` its features act through."""

    def __init__(
        self, session_id: int, config: ServerConfig, *, options: dict[str, dict[str, Any]] | None = None
    ) -> None:
        self.session_id = session_id
        self.config = config
        self.layer = channel_layer()
        self.channel: str = ""
        self.client: McpClient | None = None
        self.catalogue: Catalogue = {}  # the server's lists as last fetched (catalogue.py)
        self.tap = Tap(max_raw=settings.PLAYGROUND_MAX_FRAME_BYTES)
        self.audience = Audience(session_id, self.layer)
        self.recorder = Recorder(
            session_id, on_saved=self.audience.throttle.push, pause=self.tap.pause, resume=self.tap.resume
        )
        self.strip = StateStrip(session_id, config, self.tap, self.audience)  # (follows the tap first)
        self.tap.subscribe(self.recorder.add)
        self._stop = asyncio.Event()
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()  # the commands, in order
        self._idle = False  # the command loop waits for a command (none is being handled or waiting)
        self._task: asyncio.Task[None] | None = None
        self._spawned: set[asyncio.Task[Any]] = set()
        self._lanes = Lanes(self.spawn)  # features' commands, beside the command loop
        self._end_reason: str | None = None  # set once the session is ending
        self._stop_reason: str | None = None  # why this side ended it, if it says (stop(reason))
        self._running = False  # its task has started (its cleanup will run)
        self._serving = False  # connected and listed: waiting for the end
        self.calls = Calls(self)
        self.catalogue_refresh = CatalogueRefresh(self)
        self.features = FeatureHub(self, options or {})
        self.audience.attach(self.features)
        self.recorder.checks = self.features.checks
        # The core's commands (a feature's go to its lane, a call to the calls).
        self._core: dict[str, Handler] = {
            "disconnect": self._disconnect,
            "sync": self._sync,
            "cancel": self.calls.cancel,
            "refresh": self.catalogue_refresh.command,
            "share_join": self.audience.join,
            "share_leave": self.audience.leave,
        }

    # SessionContext (features/context.py) -------------------------------------------------

    async def publish(self, feature: str, event: dict[str, Any]) -> None:
        await self.audience.publish(feature, event)

    async def reply(self, channel: str, feature: str, event: dict[str, Any]) -> None:
        await self.audience.reply(channel, feature, event)

    async def publish_shared(self, feature: str, event: Callable[[Redactor], dict[str, Any]]) -> None:
        await self.audience.publish_shared(feature, event)

    def secrets(self) -> Redactor:
        return self.audience.secrets()

    async def refresh_catalogue(self, announced: bool = False) -> None:
        await self.catalogue_refresh.refresh(announced)

    def call(self, command: Command) -> str:
        """Run one of the page's calls as if a page had asked."""
        return self.calls.start(str(command["command"]), command)

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=f"session-{self.session_id}-{name}")
        self._spawned.add(task)  # (the loop keeps only a weak reference)
        task.add_done_callback(self._spawn_done)

    def _spawn_done(self, task: asyncio.Task[Any]) -> None:
        self._spawned.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("session %s: task %s failed", self.session_id, task.get_name(), exc_info=task.exception())

    def set_request_timeout(self, seconds: float) -> None:
        self.config.timeout = seconds
        if self.client is not None:
            self.client.timeout = seconds

    def feature(self, name: str) -> Feature | None:
        return self.features.by_name.get(name)

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
        if not isinstance(self.layer, InboxLayer):  # (settings name one of live/layers.py's)
            raise ImproperlyConfigured(
                f"a session's worker needs a layer with inboxes, not {type(self.layer).__name__}"
            )
        self._inbox = self.layer.attach(self.channel)  # what is sent to the channel lands in it
        await database_sync_to_async(Session.objects.filter(pk=self.session_id).update)(
            worker_channel=self.channel,
            heartbeat_at=timezone.now(),
            clock_origin=datetime.datetime.fromtimestamp(self.tap.epoch, datetime.UTC),
        )
        self.strip.started(session.state())
        self.audience.share_redactor = session.share_redactor()
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
            while not self._running:  # cancelled before its first step, it would skip its cleanup:
                await asyncio.sleep(0)  # the session left "connecting", the worker listed as live
            task.cancel()
        await asyncio.wait({task})

    def busy(self) -> bool:
        """At work on its own (a feature says so): not idle, whoever watches."""
        return self.features.busy()

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
                self.client = await open_client(
                    self.config,
                    tap=self.tap,
                    responder=self.features,
                    guard=security.net_guard(),
                    auth=self.features.client_auth,
                )
            except ConnectError as exc:
                status, reason = Session.Status.FAILED, str(exc)
                self.strip.hint = exc.hint
                return
            finally:
                self.strip.connected()
            self.client.on_notification(self.features.on_notification)
            self.client.on_input_required(self.features.on_input_required)
            self.client.on_close(lambda why: self._stop.set())
            await self.strip.save_connected(self.client)
            await self.refresh_catalogue()
            await self.features.start()
            self._serving = True
            await self._stop.wait()
            if self.client.closed and self.client.close_reason != "closed by the client":
                reason = self.client.close_reason or "connection closed"
            elif self._stop_reason is not None:
                reason = self._stop_reason
        except asyncio.CancelledError:  # stop() before the session was up
            reason = self._stop_reason or "stopped while connecting"
            raise
        except Exception as exc:  # never let a worker die silently
            log.exception("session worker %s failed", self.session_id)
            status, reason = Session.Status.FAILED, f"worker error: {exc!r}"
            self.tap.note("error", f"worker error: {exc!r}")
        finally:
            self.strip.connected()
            # Calls still waiting get no answer now: say why (not "cancelled by the user").
            self._end_reason = reason
            self.calls.end(reason)
            for task in list(self._spawned):
                task.cancel()
            await self.features.stop()
            self.tap.resume()  # the transport's readers must drain while it closes
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await self.client.close()
            receiver.cancel()
            with contextlib.suppress(BaseException):
                await receiver
            self._stop.set()
            saver.cancel()
            with contextlib.suppress(BaseException):
                await saver
            await self.recorder.final_flush()
            with contextlib.suppress(Exception):
                await self.audience.throttle.flush()  # the last lines (the note saying why it ended)
            await self.strip.save_end(status, reason)
            workers.remove(self.session_id)
            if isinstance(self.layer, InboxLayer):
                self.layer.detach(self.channel)

    # Commands ---------------------------------------------------------------------------

    def deliver(self, command: Command) -> None:
        """A tab's command in this process, not through the layer; a call with none before it starts at once."""
        own, name = copied(command), command.get("command")
        if name in CALLS and name not in self._core and name not in BY_COMMAND and self._idle and self._inbox.empty():
            self.calls.start(str(name), own, eager=True)  # nothing before it: written in this turn
            return
        self._inbox.put_nowait(own)

    async def _receive_loop(self) -> None:
        try:
            while True:
                self._idle = self._inbox.empty()
                command = as_command(await self._inbox.get())
                self._idle = False
                await self._command(self.handle, command)
        finally:
            self._idle = False  # (ended: a call delivered now is not started)

    async def _command(self, run: Handler, message: Command) -> None:
        try:
            await run(message)
        except Exception as exc:
            log.exception("command failed")
            self.tap.note("error", f"command {message.get('command')!r} failed: {exc!r}")

    async def handle(self, message: Command) -> None:
        """One command. The core's run here, and none waits on the server; a feature's run in
        its lane (lanes.py), a call in a task of its own (calls.py): nothing holds the loop."""
        command = str(message.get("command"))
        core = self._core.get(command)
        if core is not None:
            await core(message)
        elif command in BY_COMMAND:
            feature = self.features.by_name[BY_COMMAND[command].name]
            self._lanes.run(feature.name, lambda: self._command(feature.handle, message))
        elif command in CALLS:
            self.calls.start(command, message)
        else:
            self.tap.note("error", f"unknown command from the page: {command!r}")

    async def _disconnect(self, message: Command) -> None:
        self._stop.set()

    async def _sync(self, message: Command) -> None:
        await self.audience.to_layer(self.layer.send, message["reply_channel"], self.snapshot())

    def snapshot(self) -> Snapshot:
        """What a (re)connecting page needs besides the transcript."""
        results, progress, inflight = self.calls.snapshot()
        snapshot: Snapshot = {
            "type": "session.snapshot",
            "catalogue": self.catalogue,
            "results": results,
            "progress": progress,
            "inflight": inflight,
            "features": self.features.snapshot(),
        }
        if (state := self.strip.connecting_state()) is not None:
            snapshot["state"] = state  # (a reloaded tab: what it waits for)
        return snapshot


async def start_session(
    server: Server,
    owner: Any,
    *,
    oauth_redirect_uri: str | None = None,
    kind: str = Session.Kind.SESSION,
    hints: dict[str, Any] | None = None,
    replay_of: Session | None = None,
) -> Session:
    """Create the Session row and start its worker in this process. Each feature reads its
    options from the server first (`prepare`, given `hints` from the starting page); HTTP servers
    authorize with OAuth 2.1 on a 401 (`oauth_redirect_uri`: the page's callback as the browser
    sees it). `replay_of`: the session this one replays (its kind is then "replay")."""
    config: ServerConfig = server.to_config()

    def create() -> tuple[Session, dict[str, dict[str, Any]]]:
        options = {
            cls.name: cls.prepare(server, callback_url=oauth_redirect_uri, replay_of=replay_of, **(hints or {}))
            for cls in FEATURES
        }
        masked = sorted({value for o in options.values() for value in o.get("secrets", []) if value})
        secrets = [s for s in config.secret_values() if s]
        if replay_of is not None:  # its frames reach this session's pages (the Differences): so do its secrets
            secrets += [s for s in replay_of.secret_values or [] if s not in secrets]
            masked = sorted({*masked, *(replay_of.oauth_secret_values or [])})
        session = Session.objects.create(
            server=server,
            server_name=server.name,
            owner=owner,
            transport=config.transport,
            secret_values=secrets,
            oauth_secret_values=masked,
            heartbeat_at=timezone.now(),
            viewed_at=timezone.now(),
            kind=Session.Kind.REPLAY if replay_of else kind,
            source=replay_of,
        )
        return session, options

    session, options = await database_sync_to_async(create)()
    worker = SessionWorker(session.pk, config, options=options)
    await worker.start(session)
    return session
