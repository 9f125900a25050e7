"""What both HTTP transports (Streamable HTTP and the older HTTP+SSE) share: the guarded httpx
client, their tasks, the HTTP facts recorded with each frame, a body or an SSE stream read
within the time and size limits, and delivery that a failing listener cannot break."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx

from .. import jsonrpc
from ..auth import OAuth, OAuthHttpxAuth
from ..events import INVALID_UTF8, Tap
from ..framing import MAX_FRAME, SseParser
from ..netguard import NetGuard
from ..secrets import mask_value
from .base import Transport, TransportError
from .http_common import content_type, masked, shown_url

# Facts only the first event of an exchange carries (the rest of an SSE stream need not repeat them).
FIRST_ONLY = ("request_headers", "wait_ms")


def later(facts: dict[str, Any]) -> dict[str, Any]:
    """The facts for an exchange's events after its first."""
    return {k: v for k, v in facts.items() if k not in FIRST_ONLY}


def set_header(headers: dict[str, str], name: str, value: str) -> None:
    """Set a header, replacing any existing one whatever its case."""
    for key in [k for k in headers if k.lower() == name.lower()]:
        del headers[key]
    headers[name] = value


def describe_http_error(exc: BaseException) -> str:
    """A short human reason for an httpx failure."""
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect: {exc}" if str(exc) else "cannot connect (connection refused?)"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({type(exc).__name__})"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the server broke the HTTP exchange: {exc}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class Trickle(Exception):
    """An SSE event or JSON body did not complete in time, or grew past the size limit."""


class TooLarge(Trickle):
    """A JSON body over MAX_FRAME; `head` is what was read of it."""

    def __init__(self, message: str, head: bytes) -> None:
        super().__init__(message)
        self.head = head


@dataclass
class StreamOutcome:
    last_id: str | None = None
    retry: int | None = None
    frames: int = 0
    answered: bool = False
    error: str | None = None


class HttpTransportBase(Transport):
    """What both HTTP transports share: the httpx client, tasks, facts, guarded delivery."""

    def __init__(
        self,
        tap: Tap,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        timeout: float = 60.0,
        client: httpx.AsyncClient | None = None,
        guard: NetGuard | None = None,
        auth: OAuth | None = None,
    ) -> None:
        super().__init__(tap)
        self.guard = guard
        self.url = url
        self.auth = auth  # OAuth 2.1: a 401 runs the flow and the request is retried with the token
        self.headers = dict(headers or {})
        self.timeout = timeout
        self._client = client
        self._own_client = client is None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self._shown_url = shown_url(url)

    # helpers -------------------------------------------------------------------------------

    def _ensure_client(self) -> httpx.AsyncClient:
        if self._closed:
            raise TransportError(f"{self.name} transport is closed")
        if self._client is None:
            options: dict[str, Any] = {
                "timeout": httpx.Timeout(self.timeout),
                "follow_redirects": False,
                "auth": OAuthHttpxAuth(self.auth, lambda: self.protocol_version) if self.auth is not None else None,
            }
            self._client = self.guard.client(**options) if self.guard else httpx.AsyncClient(**options)
        return self._client

    def waiting_on_user(self) -> bool:
        return self.auth is not None and self.auth.waiting_on_user

    def _mask(self, headers: Any) -> dict[str, str]:
        items = headers.items() if hasattr(headers, "items") else headers
        return masked(items, self.headers.keys())

    async def _request_facts(self, method: str, url: str, headers: dict[str, str], exchange: int) -> dict[str, Any]:
        """A POST's facts, recorded with its frame before it is sent: the headers this transport
        sets, and the OAuth token's header the request will carry (masked), if there is one.
        `exchange` ties the request to its response's events (the HAR export groups by it)."""
        shown = dict(headers)
        if self.auth is not None and not any(k.lower() == "authorization" for k in headers):
            token = await self.auth.authorization_header()
            if token:
                shown["Authorization"] = mask_value(token)
        return {"method": method, "url": shown_url(url), "headers": self._mask(shown), "exchange": exchange}

    def _response_facts(
        self, method: str, url: str, response: httpx.Response, exchange: int, started: float | None = None
    ) -> dict[str, Any]:
        """A response's facts. `request_headers` are the headers as sent, httpx's own and the
        OAuth token's included (masked), and `wait_ms` the time from the request to the
        response's headers: the first event of the exchange carries them (`later()` for the rest)."""
        facts: dict[str, Any] = {
            "method": method,
            "url": shown_url(url),
            "status": response.status_code,
            "headers": self._mask(response.headers.multi_items()),
            "content_type": content_type(response.headers),
            "exchange": exchange,
            "request_headers": self._mask(
                [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.request.headers.raw]
            ),
        }
        if started is not None:
            facts["wait_ms"] = round((self.tap.clock() - started) * 1000, 3)
        return facts

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.name}:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:  # our tasks catch everything; belt and braces
            self.tap.note("error", f"{self.name} task {task.get_name()} failed: {task.exception()!r}")

    async def _cancel_tasks(self) -> int:
        """Cancel and await every task this transport started (but the caller's own)."""
        current = asyncio.current_task()
        tasks = [t for t in self._tasks if t is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return len(tasks)

    def _deliver(self, message: Any) -> None:
        try:
            self._on_message(message)
        except Exception as exc:
            self.tap.note("error", f"handling a message from the server failed: {exc!r}")

    def _fail(self, request_id: Any, exc: Exception, kind: str = "error", **data: Any) -> None:
        """Note a failure; when it belongs to a request, tell the client it will get no response."""
        where = f" (request {request_id!r})" if request_id is not None else ""
        self.tap.note(kind, f"{exc}{where}", **data)
        if request_id is not None:
            try:
                self._on_failed(request_id, exc)
            except Exception as handler_exc:
                self.tap.note("error", f"handling a failed request failed: {handler_exc!r}")

    async def _read_body(self, response: httpx.Response) -> bytes:
        """The whole body, within `timeout` and MAX_FRAME (a trickle or a flood ends with Trickle)."""
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.timeout):
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    chunks.append(chunk)
                    if size > MAX_FRAME:
                        raise TooLarge(
                            f"body longer than {MAX_FRAME} bytes: recorded cut at that size, the rest was not read",
                            b"".join(chunks)[:MAX_FRAME],
                        )
        except TimeoutError:
            raise Trickle(f"body not complete after {self.timeout:g} s (slow trickle); {size} bytes received") from None
        return b"".join(chunks)

    async def _read_sse(
        self, response: httpx.Response, facts: dict[str, Any], request_id: Any, stop_when_answered: bool = True
    ) -> StreamOutcome:
        """Record and deliver every event of an SSE stream until it ends; never raises for
        stream trouble (the outcome says what happened)."""
        parser = SseParser()
        out = StreamOutcome()
        loop = asyncio.get_running_loop()
        started: float | None = None
        shown, rest = facts, later(facts)
        try:
            async for chunk in response.aiter_bytes():
                await self.tap.ready()  # paused while the tap's listener catches up (a flood)
                for event in parser.feed(chunk):
                    if event.retry is not None:
                        out.retry = event.retry
                    if not event.has_data or not event.data.strip():
                        continue  # priming event (id/retry only) or empty: not a frame
                    problems = (
                        [] if event.event == "message" else [f"SSE event type {event.event!r} (expected 'message')"]
                    )
                    if event.invalid_utf8:
                        problems.append(INVALID_UTF8)
                    _, parsed = self.tap.recv(
                        event.data,
                        http=shown,
                        sse_id=event.id,
                        problems=problems,
                        sse_event=event.event if event.named else None,
                    )
                    shown = rest
                    out.frames += 1
                    if parsed is not None:
                        self._deliver(parsed)
                    if (
                        request_id is not None
                        and isinstance(parsed, dict)
                        and jsonrpc.classify(parsed) in ("response", "error")
                        and jsonrpc.id_key(parsed.get("id")) == jsonrpc.id_key(request_id)
                    ):
                        out.answered = True
                out.last_id = parser.last_id
                if out.answered and stop_when_answered:
                    return out
                if parser.in_event:
                    started = started if started is not None else loop.time()
                    if parser.pending_bytes > MAX_FRAME:
                        raise Trickle(f"SSE event larger than {MAX_FRAME} bytes; stopped reading")
                    if loop.time() - started > self.timeout:
                        raise Trickle(f"SSE event not complete after {self.timeout:g} s (slow trickle)")
                else:
                    started = None
        except Trickle as exc:
            out.error = str(exc)
        except httpx.HTTPError as exc:
            out.error = describe_http_error(exc)
        out.last_id = parser.last_id
        if parser.in_event:
            partial = parser.partial()
            self.tap.note(
                "error",
                "SSE stream cut in the middle of an event; the partial event is dropped",
                http=shown,
                partial=partial[:2000],
                partial_size=len(partial),
            )
        if out.error:
            self.tap.note("error", f"SSE stream ended: {out.error}", http=shown)
        return out
