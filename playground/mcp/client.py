"""The MCP session over any transport, in both protocol eras.

Legacy (2024-11-05 … 2025-11-25): `initialize` → result → `notifications/initialized`,
then requests; the server may send its own requests (answered by the responder).
Modern (2026-07-28): no handshake; every request carries `_meta` with the protocol
version, client capabilities and client info; results may be `input_required`, which
the client answers through the responder and retries with a new id.

The client never drops a frame: anything odd (unknown ids, bad JSON) is already in the
transcript through the tap; here it becomes a note that says what was wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import jsonrpc
from .events import SENT_ON_PURPOSE, Tap
from .jsonrpc import JsonRpcError
from .responder import NoResponder, Responder
from .transports.base import Transport, TransportError

LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN_VERSIONS = ("2026-07-28",)
LATEST_LEGACY = LEGACY_VERSIONS[0]
LATEST_MODERN = MODERN_VERSIONS[0]
CLIENT_INFO = {"name": "mcp-playground", "title": "MCP Playground", "version": "0.1.0"}

META_PREFIX = "io.modelcontextprotocol/"
META_VERSION = META_PREFIX + "protocolVersion"
META_CAPS = META_PREFIX + "clientCapabilities"
META_INFO = META_PREFIX + "clientInfo"
META_LOG_LEVEL = META_PREFIX + "logLevel"
META_SERVER_INFO = META_PREFIX + "serverInfo"
META_SUBSCRIPTION = META_PREFIX + "subscriptionId"
META_RELATED_TASK = META_PREFIX + "related-task"

# Methods whose result may be `input_required` (MRTR).
MRTR_METHODS = frozenset({"tools/call", "resources/read", "prompts/get"})
MAX_INPUT_ROUNDS = 10
# Requests about one task: a server request related to that task (`related-task`) is caused by them.
_TASK_METHODS = frozenset({"tasks/result", "tasks/get"})


class RequestTimeout(Exception):
    """No response within the timeout (progress resets it); the request was cancelled, or abandoned
    where it may not be cancelled (initialize)."""

    def __init__(self, method: str, request_id: Any, timeout: float) -> None:
        super().__init__(f"{method} (id {request_id}) timed out after {timeout:g} s without a response")
        self.method = method
        self.request_id = request_id
        self.timeout = timeout


class ProtocolError(Exception):
    """The server's answers do not let the session go on (unusable handshake, too many rounds...)."""


ProgressCallback = Callable[[dict[str, Any]], None]


def ignore_progress(params: dict[str, Any]) -> None:
    """A progress listener for a request that should carry a progress token (its progress then
    resets its timeout) though nobody shows the progress: a replay's, the server check's."""


NotificationListener = Callable[[dict[str, Any]], None]
# Told of each `input_required` result before its input requests are answered:
# (method, round number from 1, the result as received).
InputRequiredListener = Callable[[str, int, dict[str, Any]], None]


# The request a coroutine is sending: the tasks a transport starts while sending it (a Streamable
# HTTP POST's stream reader) inherit it, so a server request arriving on that stream is known to
# be caused by that request.
_SENDING: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_sending", default=None)


class _Answer(asyncio.Future[Any]):
    """A request's answer, which wakes the request's waiter (`_wait`) as it is set: the waiter
    resumes on the loop's next turn, where `asyncio.wait` took two (its callback's, then the
    task's) — on the path of every call."""

    waiter: asyncio.Future[None] | None = None

    def set_result(self, result: Any) -> None:
        super().set_result(result)
        self._wake()

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        self._wake()

    def cancel(self, msg: Any | None = None) -> bool:
        cancelled = super().cancel(msg)
        self._wake()
        return cancelled

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


@dataclass
class _Pending:
    method: str
    future: _Answer
    timeout: float
    on_progress: ProgressCallback | None = None
    progress_token: Any = None
    deadline: float = 0.0
    task_id: str | None = None  # tasks/get, tasks/result: the task it is about
    context: contextvars.Context | None = None  # the requester's, to answer its server requests in
    # Server requests this request caused that still wait for an answer (a person's, often): its
    # timeout does not run meanwhile, and starts afresh once the last is answered.
    paused: int = 0
    resumed: asyncio.Future[None] | None = None
    # Its timeout is a guess (the era probe's), not the person's: it does not run out while the
    # transport says the server is still starting.
    patient_start: bool = False


async def _answered(answer: _Answer, seconds: float) -> bool:
    """Whether `answer` is set within `seconds` (inf: no limit); `answer` itself is never
    cancelled by the wait (a later turn may wait on it again)."""
    if answer.done():
        return True
    loop = asyncio.get_running_loop()
    answer.waiter = loop.create_future()
    timer = None if seconds == float("inf") else loop.call_later(seconds, _expire, answer.waiter)
    try:
        await answer.waiter
    finally:
        if timer is not None:
            timer.cancel()
        answer.waiter = None
    return answer.done()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


@dataclass
class ServerFacts:
    """What the handshake or discovery told us, for the page's header strip."""

    protocol_version: str | None = None
    server_info: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    supported_versions: list[str] = field(default_factory=list)
    raw_result: dict[str, Any] = field(default_factory=dict)


class McpClient:
    def __init__(
        self,
        transport: Transport,
        *,
        tap: Tap,
        responder: Responder | None = None,
        era: str = "legacy",
        timeout: float = 60.0,
        client_info: dict[str, Any] | None = None,
        max_input_rounds: int = MAX_INPUT_ROUNDS,
    ) -> None:
        if era not in ("legacy", "modern"):
            raise ValueError("McpClient speaks 'legacy' or 'modern'; 'auto' is decided by connect.open_client")
        self.transport = transport
        self.tap = tap
        self.responder: Responder = responder or NoResponder()
        self.timeout = timeout
        self.client_info = client_info or CLIENT_INFO
        self.max_input_rounds = max_input_rounds
        self.facts = ServerFacts()
        self.log_level: str | None = None  # modern: sent per request in _meta
        self.closed = False
        self.close_reason: str | None = None
        self._ids = jsonrpc.IdAllocator()
        self._pending: dict[str, _Pending] = {}
        self._by_token: dict[str, _Pending] = {}
        self._listeners: list[NotificationListener] = []
        self._close_listeners: list[Callable[[str | None], None]] = []
        self._input_listeners: list[InputRequiredListener] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tool_schemas: dict[str, dict[str, Any]] = {}
        self.era = era
        transport.bind(self._on_message, self._on_closed, self._on_failed)

    # Era and version ------------------------------------------------------------

    @property
    def era(self) -> str:
        return self._era

    @era.setter
    def era(self, value: str) -> None:
        self._era = value
        self.transport.era = value
        if value == "modern" and (self.facts.protocol_version or "") < LATEST_MODERN:
            self.protocol_version = LATEST_MODERN

    @property
    def protocol_version(self) -> str | None:
        return self.facts.protocol_version

    @protocol_version.setter
    def protocol_version(self, value: str | None) -> None:
        self.facts.protocol_version = value
        self.transport.protocol_version = value

    @property
    def server_info(self) -> dict[str, Any]:
        return self.facts.server_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.facts.capabilities

    @property
    def instructions(self) -> str | None:
        return self.facts.instructions

    def capabilities(self) -> dict[str, Any]:
        """Exactly what our responder can answer, in this era's terms: the modern era has no
        `notifications/roots/list_changed`, so no `roots.listChanged` either."""
        caps = self.responder.capabilities()
        if self.era == "modern" and isinstance(caps.get("roots"), dict) and "listChanged" in caps["roots"]:
            caps = {**caps, "roots": {k: v for k, v in caps["roots"].items() if k != "listChanged"}}
        return caps

    # Lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        await self.transport.start()

    async def initialize(self, version: str = LATEST_LEGACY) -> ServerFacts:
        """The legacy handshake: offer `version`, accept an older one the server picks."""
        result = await self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": self.capabilities(),
                "clientInfo": self.client_info,
            },
        )
        if not isinstance(result, dict):
            raise ProtocolError(f"initialize returned {type(result).__name__}, not an object")
        chosen = result.get("protocolVersion")
        self.facts = ServerFacts(
            protocol_version=chosen if isinstance(chosen, str) else None,
            server_info=jsonrpc.member(result, "serverInfo"),
            capabilities=jsonrpc.member(result, "capabilities"),
            instructions=result.get("instructions") if isinstance(result.get("instructions"), str) else None,
            raw_result=result,
        )
        self.transport.protocol_version = self.facts.protocol_version
        if chosen not in LEGACY_VERSIONS:
            known = ", ".join(LEGACY_VERSIONS + MODERN_VERSIONS)
            self.tap.note(
                "warning",
                f"server chose protocol version {chosen!r}, which this client does not know "
                f"(known: {known}); carrying on with it",
                protocol_version=chosen,
            )
        elif chosen != version:
            self.tap.note(
                "info", f"server chose protocol version {chosen} (we offered {version})", protocol_version=chosen
            )
        await self.notify("notifications/initialized")
        self.tap.note(
            "connected",
            f"initialized: {self._describe_server()} speaks {chosen}",
            era="legacy",
            protocol_version=chosen,
        )
        return self.facts

    async def discover(
        self, version: str = LATEST_MODERN, *, timeout: float | None = None, patient_start: bool = False
    ) -> ServerFacts:
        """Modern `server/discover`: pick the newest version both sides support. `patient_start`:
        the timeout waits while the server is still starting (the era probe's)."""
        self.protocol_version = version
        result = await self.request("server/discover", {}, timeout=timeout, patient_start=patient_start)
        if not isinstance(result, dict):
            raise ProtocolError(f"server/discover returned {type(result).__name__}, not an object")
        supported = [v for v in result.get("supportedVersions") or [] if isinstance(v, str)]
        meta = jsonrpc.member(result, "_meta")
        self.facts = ServerFacts(
            protocol_version=version,
            server_info=jsonrpc.member(meta, META_SERVER_INFO),
            capabilities=jsonrpc.member(result, "capabilities"),
            instructions=result.get("instructions") if isinstance(result.get("instructions"), str) else None,
            supported_versions=supported,
            raw_result=result,
        )
        common = [v for v in MODERN_VERSIONS if v in supported]
        if common:
            self.protocol_version = common[0]
        elif supported:
            self.tap.note(
                "warning",
                f"server supports {supported}, none of which this client speaks "
                f"({', '.join(MODERN_VERSIONS)}); carrying on with {version}",
            )
        self.tap.note(
            "connected",
            f"discovered: {self._describe_server()} supports {', '.join(supported) or '?'}; "
            f"using {self.protocol_version}",
            era="modern",
            protocol_version=self.protocol_version,
            supported_versions=supported,
        )
        return self.facts

    def _describe_server(self) -> str:
        info = self.facts.server_info
        name = info.get("name") if isinstance(info, dict) else None
        return f"{name} {info.get('version', '')}".strip() if name else "server"

    async def close(self) -> None:
        """Close the transport and fail whatever is still waiting. Idempotent."""
        if not self.closed:
            self.closed = True
            self.close_reason = self.close_reason or "closed by the client"
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        await self.transport.close()
        self._fail_all(TransportError(self.close_reason or "closed"))

    def on_notification(self, listener: NotificationListener) -> None:
        self._listeners.append(listener)

    def on_close(self, listener: Callable[[str | None], None]) -> None:
        self._close_listeners.append(listener)

    def on_input_required(self, listener: InputRequiredListener) -> None:
        """Called in the requesting task, before the round's input requests go to the responder
        (so a page can thread the rounds under the original call)."""
        self._input_listeners.append(listener)

    # Sending --------------------------------------------------------------------

    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            META_VERSION: self.protocol_version or LATEST_MODERN,
            META_CAPS: self.capabilities(),
            META_INFO: self.client_info,
        }
        if self.log_level:
            meta[META_LOG_LEVEL] = self.log_level
        return meta

    def _with_meta(self, params: dict[str, Any] | None, progress_token: Any = None) -> dict[str, Any] | None:
        if self.era != "modern" and progress_token is None:
            return params
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        if self.era == "modern":
            meta = {**self._meta(), **meta}
        if progress_token is not None:
            meta["progressToken"] = progress_token
        params["_meta"] = meta
        return params

    def _extra_headers(self, method: str, params: dict[str, Any] | None) -> dict[str, str] | None:
        """Modern HTTP mirrors `x-mcp-header` tool parameters into `Mcp-Param-*` headers."""
        if self.era != "modern" or method != "tools/call" or not params or self.transport.name != "streamable-http":
            return None
        schema = self._tool_schemas.get(params.get("name"))  # type: ignore[arg-type]
        if not schema:
            return None
        from .transports.http_common import param_headers

        headers = param_headers(schema, params.get("arguments") or {})
        return headers or None

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._check_open()
        if self.era == "modern" and method != "notifications/cancelled":
            params = self._with_meta(params)
        await self.transport.send(jsonrpc.notification(method, params))

    async def send_raw(self, frame: str | dict[str, Any]) -> None:
        """Send anything, exactly as given: a debugger sends malformed frames on purpose.
        A raw request's response arrives as an unmatched response (noted in the transcript)."""
        self._check_open()
        await self.transport.send(frame)

    async def request_raw(self, frame: str, request_id: Any, *, timeout: float | None = None) -> Any:
        """Send a request frame exactly as typed (a debugger's hand-made request) and wait for the
        response to its id. Raises JsonRpcError, RequestTimeout, TransportError; ValueError if a
        request of ours is already waiting on that id."""
        self._check_open()
        key = jsonrpc.id_key(request_id)
        if key in self._pending:
            raise ValueError(f"id {request_id!r} is already in use by a request in flight")
        loop = asyncio.get_running_loop()
        limit = self.timeout if timeout is None else timeout
        pending = _Pending(
            method="(raw)",
            future=_Answer(loop=loop),
            timeout=limit,
            deadline=loop.time() + limit,
            context=contextvars.copy_context(),
        )
        self._pending[key] = pending
        try:
            if not await self._send_and_wait(key, pending, frame):
                self.tap.note(
                    "timeout",
                    f"raw request (id {request_id}) got no response within {limit:g} s",
                    request_id=request_id,
                )
                raise RequestTimeout("raw request", request_id, limit)
        finally:
            self._pending.pop(key, None)
        message = pending.future.result()
        if "error" in message:
            raise JsonRpcError.from_error(message["error"])
        return message.get("result")

    async def _wait(self, pending: _Pending) -> bool:
        """Wait for the response: True once it is there, False when the timeout ran out. Progress
        moves the deadline; the clock stops while a person is authorizing, or answering a server
        request this request caused (see `_pause`)."""
        loop = asyncio.get_running_loop()
        while True:
            if pending.paused and pending.resumed is not None:
                await asyncio.wait({pending.future, pending.resumed}, return_when=asyncio.FIRST_COMPLETED)
                if pending.future.done():
                    return True
                continue
            remaining = pending.deadline - loop.time()
            if remaining <= 0 and self.transport.waiting_on_user():
                pending.deadline = loop.time() + pending.timeout  # a person is authorizing: wait for them
                continue
            if remaining <= 0 and pending.patient_start and self.transport.starting():
                # A server that has not said a word since it was started (a slow import, a package
                # being fetched) is waited for, not taken for a legacy one that ignores the probe.
                pending.deadline = loop.time() + pending.timeout
                continue
            if remaining <= 0:
                return pending.future.done()
            if await _answered(pending.future, remaining):
                return True

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        on_purpose: str | None = None,
        patient_start: bool = False,
    ) -> Any:
        """Send a request and return its result; raises JsonRpcError, RequestTimeout, TransportError.
        `on_purpose`: why it is sent invalid on purpose (its frame is marked so: events.ON_PURPOSE).

        For MRTR methods, `input_required` results are answered through the responder and the
        request is retried (new id, `inputResponses`, the exact `requestState`) up to the round limit."""
        base = dict(params) if params is not None else None
        attempt = base
        for round_no in range(self.max_input_rounds + 1):
            result = await self._roundtrip(
                method,
                attempt,
                timeout=timeout,
                on_progress=on_progress,
                on_purpose=on_purpose,
                patient_start=patient_start,
            )
            if not (isinstance(result, dict) and result.get("resultType") == "input_required"):
                return result
            if round_no == self.max_input_rounds:
                break
            attempt = dict(base or {})
            for listener in list(self._input_listeners):
                try:
                    listener(method, round_no + 1, result)
                except Exception as exc:
                    self.tap.note("error", f"input_required listener failed: {exc!r}")
            requests = result.get("inputRequests")
            if isinstance(requests, dict) and requests:
                attempt["inputResponses"] = await self._answer_inputs(requests, round_no + 1)
            if "requestState" in result:
                attempt["requestState"] = result["requestState"]
            self.tap.note(
                "input_required",
                f"{method}: input round {round_no + 1} answered; retrying",
                round=round_no + 1,
                keys=sorted(requests) if isinstance(requests, dict) else [],
            )
        raise ProtocolError(f"{method}: still input_required after {self.max_input_rounds} rounds; giving up")

    async def _answer_inputs(self, requests: dict[str, Any], round_no: int) -> dict[str, Any]:
        responses: dict[str, Any] = {}
        for key, req in requests.items():
            method = req.get("method") if isinstance(req, dict) else None
            params = jsonrpc.member(req, "params") if isinstance(req, dict) else {}
            if not isinstance(method, str):
                self.tap.note("error", f"input request {key!r} has no method; skipped")
                continue
            try:
                responses[key] = await self.responder.answer(method, params)
            except JsonRpcError as exc:
                self.tap.note("warning", f"input request {key!r} ({method}) not answered: {exc.message}")
        return responses

    async def _send_and_wait(
        self,
        key: str,
        pending: _Pending,
        frame: dict[str, Any] | str,
        headers: dict[str, str] | None = None,
        on_purpose: str | None = None,
    ) -> bool:
        """Send a request registered under `key` (_SENDING names it while it goes; SENT_ON_PURPOSE
        says why, for a request invalid on purpose); whether its response came in time (`_wait`)."""
        sending = _SENDING.set(key)
        purpose = SENT_ON_PURPOSE.set(on_purpose) if on_purpose is not None else None
        try:
            await self.transport.send(frame, headers=headers)
        finally:
            if purpose is not None:
                SENT_ON_PURPOSE.reset(purpose)
            _SENDING.reset(sending)
        return await self._wait(pending)

    async def _roundtrip(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
        request_id: Any = None,
        on_purpose: str | None = None,
        patient_start: bool = False,
    ) -> Any:
        self._check_open()
        if request_id is None:
            request_id = self._ids.next()
        token = f"progress-{request_id}" if on_progress is not None else None
        sent_params = self._with_meta(params, token)
        loop = asyncio.get_running_loop()
        limit = self.timeout if timeout is None else timeout
        task_id = params.get("taskId") if method in _TASK_METHODS and isinstance(params, dict) else None
        pending = _Pending(
            method=method,
            future=_Answer(loop=loop),
            timeout=limit,
            on_progress=on_progress,
            progress_token=token,
            deadline=loop.time() + limit,
            task_id=task_id if isinstance(task_id, str) else None,
            context=contextvars.copy_context(),
            patient_start=patient_start,
        )
        key = jsonrpc.id_key(request_id)
        self._pending[key] = pending
        if token is not None:
            self._by_token[jsonrpc.id_key(token)] = pending
        try:
            if not await self._send_and_wait(
                key,
                pending,
                jsonrpc.request(request_id, method, sent_params),
                self._extra_headers(method, sent_params),
                on_purpose,
            ):
                how = await self._cancel_request(request_id, f"timed out after {limit:g} s", method, note=False)
                self.tap.note(
                    "timeout",
                    f"{method} (id {request_id}) got no response within {limit:g} s; {how}",
                    request_id=request_id,
                    method=method,
                )
                raise RequestTimeout(method, request_id, limit)
        except asyncio.CancelledError as exc:
            # The caller gave up (Cancel button, task cancelled): tell the server, why if the
            # cancellation says (`task.cancel(msg)`: the server check's deadline does).
            if not self.closed:
                reason = exc.args[0] if exc.args and isinstance(exc.args[0], str) else "cancelled by the user"
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._cancel_request(request_id, reason, method))
            raise
        finally:
            self._pending.pop(key, None)
            if token is not None:
                self._by_token.pop(jsonrpc.id_key(token), None)
            if pending.future.done() and not pending.future.cancelled():
                pending.future.exception()  # a failure that raced a cancellation is not "never retrieved"
        message = pending.future.result()
        if "error" in message:
            raise JsonRpcError.from_error(message["error"])
        return message.get("result")

    async def _cancel_request(
        self, request_id: Any, reason: str, method: str | None = None, *, note: bool = True
    ) -> str:
        """Tell the server we gave up on a request, the way the era and transport allow; returns
        what was done, in words ("cancelled (…)", "abandoned: …"), for the note that says why.
        `note`: also note it when the request is abandoned rather than cancelled (a caller that
        notes the outcome itself says it in one statement)."""
        if self.closed:
            return "abandoned: the connection is closed"
        try:
            if await self.transport.cancel(request_id):
                return "cancelled (its response stream closed)"
            if method == "initialize":
                # "The initialize request MUST NOT be cancelled by clients" (lifecycle, cancellation).
                how = "abandoned, not cancelled: the protocol forbids cancelling initialize"
                if note:
                    self.tap.note("info", f"initialize (id {request_id}) {how} ({reason})", request_id=request_id)
                return how
            await self.transport.send(
                jsonrpc.notification("notifications/cancelled", {"requestId": request_id, "reason": reason})
            )
            return "cancelled (notifications/cancelled sent)"
        except TransportError as exc:
            return f"abandoned: the cancellation could not be sent ({exc})"

    async def cancel(self, request_id: Any, reason: str = "cancelled by the user") -> None:
        """Cancel one of our requests by id (its waiter gets a JsonRpcError-free CancelledError upstream)."""
        pending = self._pending.get(jsonrpc.id_key(request_id))
        await self._cancel_request(request_id, reason, pending.method if pending else None)
        if pending and not pending.future.done():
            pending.future.set_exception(asyncio.CancelledError(reason))

    def _check_open(self) -> None:
        if self.closed:
            raise TransportError(f"session is closed ({self.close_reason})")

    # Receiving ------------------------------------------------------------------

    def _on_message(self, message: Any) -> None:
        if isinstance(message, list):
            for item in message:
                self._on_message(item)
            return
        kind = jsonrpc.classify(message)
        if kind in ("response", "error"):
            pending = self._pending.get(jsonrpc.id_key(message.get("id")))
            if pending is None or pending.future.done():
                self.tap.note(
                    "error", f"response with unknown or already answered id {message.get('id')!r}", id=message.get("id")
                )
                return
            pending.future.set_result(message)
        elif kind == "request":
            self._start_answer(message)
        elif kind == "notification":
            self._on_notification(message)
        elif isinstance(message, dict) and "error" in message:
            # An error with a null/absent id: the server could not tell which request it answers.
            self.tap.note("error", "error response without an id: " + str(message.get("error"))[:300])
        else:
            self.tap.note("error", "frame is not a JSON-RPC request, notification or response")

    def _on_notification(self, message: dict[str, Any]) -> None:
        params = jsonrpc.member(message, "params")
        if message["method"] == "notifications/progress":
            pending = self._by_token.get(jsonrpc.id_key(params.get("progressToken")))
            if pending is not None:
                pending.deadline = asyncio.get_running_loop().time() + pending.timeout
                if pending.on_progress is not None:
                    try:
                        pending.on_progress(params)
                    except Exception as exc:  # a listener's bug must not kill the reader
                        self.tap.note("error", f"progress listener failed: {exc!r}")
        for listener in list(self._listeners):
            try:
                listener(message)
            except Exception as exc:
                self.tap.note("error", f"notification listener failed: {exc!r}")

    def _start_answer(self, message: dict[str, Any]) -> None:
        """Answer a server request in a task of its own, in the context of the request that caused
        it when there is one (so the page can thread it under its call); that request's timeout
        stops until the answer is sent."""
        caused_by = self._caused_by(message) if message["method"] != "ping" else []
        for pending in caused_by:
            self._pause(pending)
        context = caused_by[0].context if len(caused_by) == 1 else None
        self._spawn(self._answer_server_request(message, caused_by), context=context.copy() if context else None)

    def _caused_by(self, message: dict[str, Any]) -> list[_Pending]:
        """The requests in flight a server request belongs to: those about the task it names
        (`related-task`), else the one on whose stream it came (Streamable HTTP), else, where the
        transport cannot tell (stdio, HTTP+SSE), every request in flight that has a timeout."""
        live = [p for p in self._pending.values() if not p.future.done()]
        meta = jsonrpc.member(jsonrpc.member(message, "params"), "_meta")
        task_id = jsonrpc.member(meta, META_RELATED_TASK).get("taskId")
        if isinstance(task_id, str):
            about = [p for p in live if p.task_id == task_id]
            results = [p for p in about if p.method == "tasks/result"]  # (not a tasks/get poll meanwhile)
            if results or about:
                return results or about
        sending = self._pending.get(_SENDING.get() or "")
        if sending is not None and not sending.future.done():
            return [sending]
        return [p for p in live if p.timeout != float("inf")]

    def _pause(self, pending: _Pending) -> None:
        pending.paused += 1
        if pending.resumed is None:
            pending.resumed = asyncio.get_running_loop().create_future()

    def _resume(self, pending: _Pending, method: str) -> None:
        pending.paused -= 1
        if pending.paused > 0:
            return
        now = asyncio.get_running_loop().time()
        if now > pending.deadline and not pending.future.done():
            self.tap.note(
                "info",
                f"{pending.method} waited past its {pending.timeout:g} s timeout for the answer to "
                f"the server's {method}, which stops the clock; it starts afresh now",
                method=pending.method,
            )
        pending.deadline = now + pending.timeout
        if pending.resumed is not None and not pending.resumed.done():
            pending.resumed.set_result(None)
        pending.resumed = None

    async def _answer_server_request(self, message: dict[str, Any], caused_by: Sequence[_Pending] = ()) -> None:
        method = message["method"]
        params = jsonrpc.member(message, "params")
        try:
            try:
                if method == "ping":
                    result: Any = {}
                else:
                    result = await self.responder.answer(method, params)
                reply = jsonrpc.result_response(message["id"], result)
            except JsonRpcError as exc:
                reply = {"jsonrpc": jsonrpc.JSONRPC, "id": message["id"], "error": exc.to_error()}
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                reply = jsonrpc.error_response(message["id"], jsonrpc.INTERNAL_ERROR, f"client error: {exc}")
            if not self.closed:
                with contextlib.suppress(TransportError):
                    await self.transport.send(reply)
        finally:
            for pending in caused_by:
                self._resume(pending, method)

    def _on_failed(self, request_id: Any, exc: Exception) -> None:
        pending = self._pending.get(jsonrpc.id_key(request_id))
        if pending is not None and not pending.future.done():
            pending.future.set_exception(exc)

    def _on_closed(self, reason: str | None) -> None:
        if not self.closed:
            self.closed = True
            self.close_reason = reason or "connection closed"
        self._fail_all(TransportError(f"connection closed: {self.close_reason}"))
        for listener in list(self._close_listeners):
            with contextlib.suppress(Exception):
                listener(self.close_reason)

    def _fail_all(self, exc: Exception) -> None:
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(exc)

    def _spawn(self, coro: Any, context: contextvars.Context | None = None) -> None:
        task = asyncio.get_running_loop().create_task(coro, context=context)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # The protocol's requests ------------------------------------------------------

    async def list_page(self, method: str, cursor: str | None = None) -> dict[str, Any]:
        """One page of a */list method."""
        return await self.request(method, {"cursor": cursor} if cursor else None)

    async def list_all(self, method: str, key: str, *, max_pages: int = 1000) -> list[Any]:
        """Follow `nextCursor` until the end (bounded, and a repeated cursor stops it)."""
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(max_pages):
            page = await self.list_page(method, cursor)
            batch = page.get(key) if isinstance(page, dict) else None
            if isinstance(batch, list):
                items.extend(batch)
            cursor = page.get("nextCursor") if isinstance(page, dict) else None
            if not isinstance(cursor, str) or not cursor:
                break
            if cursor in seen:
                self.tap.note("warning", f"{method}: server repeated cursor {cursor!r}; stopped paging")
                break
            seen.add(cursor)
        return items

    async def list_tools(self) -> list[dict[str, Any]]:
        tools = [t for t in await self.list_all("tools/list", "tools") if isinstance(t, dict)]
        if self.era == "modern" and self.transport.name == "streamable-http":
            from .transports.http_common import validate_x_mcp_header

            kept = []
            for tool in tools:
                reason = validate_x_mcp_header(tool.get("inputSchema") or {})
                if reason:
                    self.tap.note(
                        "warning",
                        f"tool {tool.get('name')!r} excluded: invalid x-mcp-header ({reason})",
                        tool=tool.get("name"),
                    )
                else:
                    kept.append(tool)
            tools = kept
        self._tool_schemas = {t["name"]: t.get("inputSchema") or {} for t in tools if isinstance(t.get("name"), str)}
        return tools

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self.list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self.list_all("resources/templates/list", "resourceTemplates")

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self.list_all("prompts/list", "prompts")

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request("tools/call", params, on_progress=on_progress, timeout=timeout)

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> dict[str, Any]:
        return await self.request("resources/read", {"uri": uri}, timeout=timeout)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self.request("prompts/get", params)

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, str], context_arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context_arguments:
            params["context"] = {"arguments": context_arguments}
        return await self.request("completion/complete", params)

    async def ping(self) -> Any:
        return await self.request("ping")

    async def set_logging_level(self, level: str) -> None:
        """Legacy: `logging/setLevel`; modern: remembered and sent in every request's `_meta`."""
        if self.era == "modern":
            self.log_level = level
            self.tap.note("info", f"log level {level} will be sent in _meta of every request")
        else:
            await self.request("logging/setLevel", {"level": level})

    async def subscribe(self, uri: str) -> Any:
        return await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> Any:
        return await self.request("resources/unsubscribe", {"uri": uri})

    async def listen(self, notifications: dict[str, Any]) -> tuple[Any, asyncio.Task[Any]]:
        """Modern `subscriptions/listen`: returns (the request id, the task awaiting its final
        response). Tagged notifications reach `on_notification` listeners; cancel with `cancel(id)`."""
        request_id = self._ids.next()
        task = asyncio.get_running_loop().create_task(
            self._roundtrip(
                "subscriptions/listen",
                {"notifications": notifications},
                timeout=float("inf"),
                on_progress=None,
                request_id=request_id,
            )
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return request_id, task
