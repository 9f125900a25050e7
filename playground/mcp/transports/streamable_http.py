"""The Streamable HTTP transport, in both eras.

Legacy (2025-03-26 … 2025-11-25): every frame is a POST; the answer is JSON or an SSE
stream; `Mcp-Session-Id` from the initialize response is echoed; after
`notifications/initialized` a standalone GET stream carries server→client traffic; a stream
that drops after an event id is resumed by GET with `Last-Event-ID` after the server's
`retry:` delay; close sends DELETE.
Modern (2026-07-28): no session, no GET stream, no DELETE; request metadata headers
(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); closing a request's
response stream cancels it.

Error contract (the client's era detection and the HTTP+SSE fallback rely on it): when a
POSTed request gets a non-2xx status, its body is recorded as a `recv` event (or a note when
empty) carrying the HTTP facts, and `on_failed(request_id, HttpStatusError(status, body,
parsed_or_None))` is called; the body is *not* delivered to `on_message`. A 404 to a request
that carried our session id is a `SessionExpired` (the session id is forgotten, so a new
`initialize` starts a new session).

Requests are sent from their own task (a response stream may last as long as the call);
notifications and responses are POSTed inline, so `send()` keeps their order with what follows.
`timeout` bounds connecting, a notification's exchange, silence on a request's response, and
how long one SSE event or JSON body may take to arrive (a slow trickle ends with a note).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from .. import jsonrpc
from ..auth import OAuth
from ..auth.httpx_auth import auth_failure
from ..events import Tap
from ..netguard import NetGuard
from .base import HttpStatusError, SessionExpired, TransportError
from .http_base import HttpTransportBase, StreamOutcome, TooLarge, Trickle, describe_http_error, later, set_header
from .http_common import ACCEPT_POST, ACCEPT_SSE, DEFAULT_RETRY_MS, MAX_RECONNECTS, modern_headers


class StreamableHttpTransport(HttpTransportBase):
    name = "streamable-http"

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
        super().__init__(tap, url, headers, timeout=timeout, client=client, guard=guard, auth=auth)
        self.session_id: str | None = None
        self._streams: dict[str, asyncio.Task[Any]] = {}  # id key -> the task reading that request's answer
        self._listen_task: asyncio.Task[Any] | None = None

    async def start(self) -> None:
        self._ensure_client()
        self.tap.note(
            "transport",
            f"Streamable HTTP endpoint {self._shown_url} (nothing is sent before the first frame)",
            url=self._shown_url,
        )

    # sending -------------------------------------------------------------------------------

    def _headers_for(self, parsed: Any, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"Accept": ACCEPT_POST, "Content-Type": "application/json"}
        for name, value in self.headers.items():
            set_header(headers, name, value)
        if self.era == "modern":
            for name, value in modern_headers(parsed, self.protocol_version).items():
                set_header(headers, name, value)
        else:
            is_initialize = isinstance(parsed, dict) and parsed.get("method") == "initialize"
            if self.session_id and not is_initialize:
                set_header(headers, "Mcp-Session-Id", self.session_id)
            if self.protocol_version:
                set_header(headers, "MCP-Protocol-Version", self.protocol_version)
        for name, value in (extra or {}).items():
            set_header(headers, name, value)
        return headers

    async def send(self, frame: dict[str, Any] | str, *, headers: dict[str, str] | None = None) -> None:
        self._ensure_client()
        if isinstance(frame, str):
            text = frame
            try:
                parsed: Any = json.loads(frame)
            except ValueError:
                parsed = None
        else:
            text, parsed = jsonrpc.encode(frame), frame
        kind = jsonrpc.classify(parsed)
        request_id = parsed["id"] if kind == "request" and isinstance(parsed["id"], (str, int)) else None
        request_headers = self._headers_for(parsed, headers)
        exchange = self.tap.exchange()
        self.tap.send(text, http=await self._request_facts("POST", self.url, request_headers, exchange))
        body = text.encode("utf-8")
        if request_id is not None:
            key = jsonrpc.id_key(request_id)
            task = self._spawn(
                self._post(body, parsed, request_headers, request_id, exchange), f"request {request_id!r}"
            )
            self._streams[key] = task

            def forget(t: asyncio.Task[Any], key: str = key) -> None:
                if self._streams.get(key) is t:
                    del self._streams[key]

            task.add_done_callback(forget)
        else:
            try:
                async with asyncio.timeout(self.timeout):
                    await self._post(body, parsed, request_headers, None, exchange)
            except TimeoutError:
                self.tap.note("timeout", f"no HTTP answer to a POSTed {kind} within {self.timeout:g} s")

    async def _post(self, body: bytes, parsed: Any, headers: dict[str, str], request_id: Any, exchange: int) -> None:
        client = self._ensure_client()
        started = self.tap.clock()
        try:
            async with client.stream("POST", self.url, content=body, headers=headers) as response:
                facts = self._response_facts("POST", self.url, response, exchange, started)
                await self._answer(response, facts, parsed, headers, request_id)
        except asyncio.CancelledError:
            raise
        except Trickle as exc:
            self._fail(request_id, TransportError(str(exc)), kind="timeout")
        except httpx.HTTPError as exc:
            self._fail(
                request_id,
                TransportError(f"POST {self._shown_url}: {describe_http_error(exc)}"),
                kind="timeout" if isinstance(exc, httpx.TimeoutException) else "error",
            )
        except Exception as exc:  # never let a task die unhandled
            self._fail(request_id, TransportError(f"POST {self._shown_url}: {exc!r}"))

    async def _answer(
        self, response: httpx.Response, facts: dict[str, Any], parsed: Any, headers: dict[str, str], request_id: Any
    ) -> None:
        status = response.status_code
        method = parsed.get("method") if isinstance(parsed, dict) else None
        if self.era != "modern" and method == "initialize" and 200 <= status < 300:
            session_id = response.headers.get("mcp-session-id")
            if session_id:
                self.session_id = session_id
                self.tap.note("http", f"server assigned session {session_id}", http=facts, session_id=session_id)
        if not 200 <= status < 300:
            await self._error_status(response, facts, headers, request_id)
            return
        ctype = facts["content_type"]
        if ctype == "text/event-stream":
            out = await self._read_sse(response, facts, request_id)
            if request_id is not None and not out.answered:
                await self._after_cut(request_id, out, facts)
            return
        try:
            raw = await self._read_body(response)
        except TooLarge as exc:
            self.tap.recv(exc.head, http=facts, problems=[str(exc)])
            self._fail(request_id, TransportError(str(exc)))
            return
        if not raw.strip():
            self.tap.note("http", f"POST → HTTP {status}" + (" Accepted" if status == 202 else ""), http=facts)
            if request_id is not None:
                self._fail(request_id, TransportError(f"server answered HTTP {status} with no body to a request"))
            elif self.era != "modern" and method == "notifications/initialized":
                self._listen_task = self._spawn(self._listen(), "standalone GET stream")
            return
        _, message = self.tap.recv(raw, http=facts)
        if ctype != "application/json":
            self._fail(
                request_id,
                TransportError(
                    f"unexpected Content-Type {ctype or '(none)'!r} (expected application/json or text/event-stream)"
                ),
            )
            return
        if message is None:
            self._fail(request_id, TransportError("response body is not valid JSON"))
            return
        self._deliver(message)
        if request_id is not None and not (
            isinstance(message, dict) and jsonrpc.id_key(message.get("id")) == jsonrpc.id_key(request_id)
        ):
            self._fail(request_id, TransportError("the JSON response does not answer this request's id"))

    async def _error_status(
        self, response: httpx.Response, facts: dict[str, Any], headers: dict[str, str], request_id: Any
    ) -> None:
        status = response.status_code
        try:
            raw = await self._read_body(response)
        except (Trickle, httpx.HTTPError) as exc:
            raw = b""
            self.tap.note("error", f"reading the HTTP {status} body failed: {exc}", http=facts)
        body = raw.decode("utf-8", errors="replace")
        message = None
        if raw.strip():
            _, message = self.tap.recv(raw, http=facts)
        else:
            self.tap.note("http", f"POST → HTTP {status} {response.reason_phrase}".rstrip(), http=facts)
        sent_session = next((v for k, v in headers.items() if k.lower() == "mcp-session-id"), None)
        if status == 404 and sent_session is not None:
            if self.session_id == sent_session:
                self.session_id = None
            expired = SessionExpired(
                status,
                body,
                message,
                f"session {sent_session} expired: the server answered HTTP 404 to a request carrying it; "
                "a new initialize starts a new session",
            )
            self._stop_listening()
            self._fail(request_id, expired, kind="session-expired", session_id=sent_session)
            return
        self._fail(request_id, HttpStatusError(status, body, message, auth_failure(response)), http=facts)

    # resumption and the standalone stream (legacy) ---------------------------------------------

    async def _after_cut(self, request_id: Any, out: StreamOutcome, facts: dict[str, Any]) -> None:
        """A request's stream ended without its response: resume it (legacy, with an event id) or fail."""
        if self.era == "modern" or out.last_id is None:
            why = "modern streams are not resumable" if self.era == "modern" else "no event id to resume from"
            self._fail(request_id, TransportError(f"SSE stream ended before the response ({why})"), http=facts)
            return
        last_id, retry, attempts = out.last_id, out.retry, 0
        while attempts < MAX_RECONNECTS:
            attempts += 1
            delay = (retry if retry is not None else DEFAULT_RETRY_MS) / 1000
            self.tap.note(
                "reconnect",
                f"stream for request {request_id!r} ended before its response; GET with "
                f"Last-Event-ID {last_id} in {delay * 1000:.0f} ms",
                last_event_id=last_id,
                retry_ms=retry,
                attempt=attempts,
            )
            await asyncio.sleep(delay)
            result = await self._get_stream(last_id, request_id, "resume")
            if isinstance(result, Exception):
                self._fail(request_id, result)
                return
            if result.answered:
                return
            if result.frames:
                attempts = 0
            last_id = result.last_id or last_id
            retry = result.retry if result.retry is not None else retry
        self._fail(request_id, TransportError(f"gave up resuming the stream after {MAX_RECONNECTS} attempts"))

    def _get_headers(self, last_event_id: str | None) -> dict[str, str]:
        headers = {"Accept": ACCEPT_SSE}
        for name, value in self.headers.items():
            set_header(headers, name, value)
        if self.session_id:
            set_header(headers, "Mcp-Session-Id", self.session_id)
        if self.protocol_version:
            set_header(headers, "MCP-Protocol-Version", self.protocol_version)
        if last_event_id is not None:
            set_header(headers, "Last-Event-ID", last_event_id)
        return headers

    async def _get_stream(self, last_event_id: str | None, request_id: Any, purpose: str) -> StreamOutcome | Exception:
        """One GET of the SSE stream; returns the outcome, or the error that stopped it (after noting it)."""
        client = self._ensure_client()
        headers = self._get_headers(last_event_id)
        exchange, started = self.tap.exchange(), self.tap.clock()
        try:
            async with client.stream(
                "GET", self.url, headers=headers, timeout=httpx.Timeout(self.timeout, read=None)
            ) as response:
                facts = self._response_facts("GET", self.url, response, exchange, started)
                status = response.status_code
                if status == 405:
                    self.tap.note("http", "GET → HTTP 405: the server offers no standalone SSE stream", http=facts)
                    return HttpStatusError(405, "", None, "the server does not allow GET on the MCP endpoint (405)")
                if not 200 <= status < 300 or facts["content_type"] != "text/event-stream":
                    raw = await self._read_body(response)
                    body = raw.decode("utf-8", errors="replace")
                    parsed = None
                    if raw.strip():
                        _, parsed = self.tap.recv(raw, http=facts)
                    if status == 404 and self.session_id:
                        self.session_id = None
                        return SessionExpired(
                            404,
                            body,
                            parsed,
                            "session expired: the server answered HTTP 404 to GET with our session id",
                        )
                    if 200 <= status < 300:
                        return TransportError(
                            f"GET answered {facts['content_type'] or 'no content type'}, not text/event-stream"
                        )
                    return HttpStatusError(status, body, parsed, auth_failure(response))
                self.tap.note("http", f"GET ({purpose}) → HTTP {status}: SSE stream open", http=facts)
                out = await self._read_sse(response, later(facts), request_id)
                return out
        except asyncio.CancelledError:
            raise
        except (Trickle, httpx.HTTPError) as exc:
            return TransportError(f"GET {self._shown_url}: {describe_http_error(exc)}")
        except Exception as exc:
            return TransportError(f"GET {self._shown_url}: {exc!r}")

    async def _listen(self) -> None:
        """The standalone GET stream: server→client requests and notifications (legacy only)."""
        last_id: str | None = None
        retry: int | None = None
        attempts = 0
        while not self._closed:
            result = await self._get_stream(last_id, None, "standalone" if last_id is None else "reconnect")
            if isinstance(result, Exception):
                if not (isinstance(result, HttpStatusError) and result.status == 405):
                    self.tap.note(
                        "session-expired" if isinstance(result, SessionExpired) else "error",
                        f"standalone SSE stream: {result}",
                    )
                return
            if result.error is None and result.last_id is None and result.retry is None and last_id is None:
                self.tap.note("http", "the server closed the standalone SSE stream")
                return
            attempts = 0 if result.frames else attempts + 1
            if attempts >= MAX_RECONNECTS:
                self.tap.note("error", f"standalone SSE stream: gave up after {MAX_RECONNECTS} reconnections")
                return
            last_id = result.last_id or last_id
            retry = result.retry if result.retry is not None else retry
            delay = (retry if retry is not None else DEFAULT_RETRY_MS) / 1000
            self.tap.note(
                "reconnect",
                f"standalone SSE stream ended; reconnecting in {delay * 1000:.0f} ms",
                last_event_id=last_id,
                retry_ms=retry,
            )
            await asyncio.sleep(delay)

    def _stop_listening(self) -> None:
        task = self._listen_task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()

    # cancel and close ----------------------------------------------------------------------------

    async def cancel(self, request_id: Any) -> bool:
        """Modern era: close the request's response stream (that is the cancellation).
        Legacy: False, the client sends `notifications/cancelled`."""
        if self.era != "modern":
            return False
        task = self._streams.pop(jsonrpc.id_key(request_id), None)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            self.tap.note(
                "cancelled",
                f"closed the response stream of request {request_id!r} (cancellation)",
                request_id=request_id,
            )
        return True

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        cancelled = await self._cancel_tasks()
        client = self._client
        if client is not None and self.session_id and self.era != "modern":
            await self._delete(client)
        if client is not None and self._own_client:
            await client.aclose()
        self.tap.note("closed", f"Streamable HTTP transport closed ({cancelled} open stream(s) cancelled)")

    async def _delete(self, client: httpx.AsyncClient) -> None:
        headers = self._get_headers(None)
        del headers["Accept"]
        exchange, started = self.tap.exchange(), self.tap.clock()
        try:
            response = await client.request("DELETE", self.url, headers=headers, timeout=min(self.timeout, 5.0))
        except httpx.HTTPError as exc:
            self.tap.note("error", f"DELETE (end session) failed: {describe_http_error(exc)}")
            return
        facts = self._response_facts("DELETE", self.url, response, exchange, started)
        if response.status_code == 405:
            self.tap.note("http", "DELETE → HTTP 405: the server does not let clients end sessions", http=facts)
        else:
            self.tap.note("http", f"DELETE (end session {self.session_id}) → HTTP {response.status_code}", http=facts)
        self.session_id = None
