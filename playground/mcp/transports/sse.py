"""The deprecated HTTP+SSE transport (2024-11-05), for servers that still only speak it.

GET the URL (Accept: text/event-stream) and wait for the `endpoint` event, resolved
against the URL and required to be same-origin (a server must not send our frames, and
our headers, elsewhere); then POST each frame there (202 expected) and read every
message from the one SSE stream. The stream ending is the connection ending: `on_closed`.
Failures of a POSTed request follow the Streamable HTTP contract: `on_failed(request_id,
HttpStatusError(status, body, parsed_or_None))`, the body recorded but not delivered.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urljoin

import httpx

from .. import jsonrpc
from ..auth import OAuth
from ..auth.httpx_auth import auth_failure
from ..events import INVALID_UTF8, Tap
from ..framing import MAX_FRAME, SseParser
from ..netguard import NetGuard
from .base import HttpStatusError, TransportError
from .http_base import HttpTransportBase, Trickle, describe_http_error, later, set_header
from .http_common import ACCEPT_SSE, same_origin, shown_url


class SseTransport(HttpTransportBase):
    name = "sse"

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
        self.endpoint: str | None = None
        self._endpoint_ready: asyncio.Future[str] | None = None
        self._reader: asyncio.Task[Any] | None = None

    async def start(self) -> None:
        """Open the stream and wait for the endpoint; raises HttpStatusError / TransportError."""
        self._ensure_client()
        self._endpoint_ready = asyncio.get_running_loop().create_future()
        self._reader = self._spawn(self._read_stream(), "SSE stream")
        try:
            endpoint = await self._wait_endpoint()
        except TimeoutError:
            await self.close()
            raise TransportError(f"no endpoint event from {self._shown_url} within {self.timeout:g} s") from None
        except Exception:
            await self.close()
            raise
        self.tap.note(
            "transport",
            f"HTTP+SSE stream open; POSTing frames to {shown_url(endpoint)}",
            url=self._shown_url,
            endpoint=shown_url(endpoint),
        )

    async def _wait_endpoint(self) -> str:
        """The endpoint within `timeout`, not counting time a person spends authorizing."""
        assert self._endpoint_ready is not None
        while True:
            try:
                async with asyncio.timeout(self.timeout):
                    return await asyncio.shield(self._endpoint_ready)
            except TimeoutError:
                if not self.waiting_on_user():
                    raise

    def _settle(self, exc: Exception) -> None:
        if self._endpoint_ready is not None and not self._endpoint_ready.done():
            self._endpoint_ready.set_exception(exc)
            self._endpoint_ready.exception()  # retrieved: start() may have gone already

    async def _read_stream(self) -> None:
        client = self._ensure_client()
        headers = {"Accept": ACCEPT_SSE}
        for name, value in self.headers.items():
            set_header(headers, name, value)
        reason = "the server closed the SSE stream"
        exchange, started = self.tap.exchange(), self.tap.clock()
        try:
            async with client.stream(
                "GET", self.url, headers=headers, timeout=httpx.Timeout(self.timeout, read=None)
            ) as response:
                facts = self._response_facts("GET", self.url, response, exchange, started)
                status = response.status_code
                if not 200 <= status < 300 or facts["content_type"] != "text/event-stream":
                    raw = await self._read_body(response)
                    parsed = self.tap.recv(raw, http=facts)[1] if raw.strip() else None
                    if not raw.strip():
                        self.tap.note("http", f"GET → HTTP {status}", http=facts)
                    error: Exception = (
                        HttpStatusError(status, raw.decode("utf-8", "replace"), parsed, auth_failure(response))
                        if not 200 <= status < 300
                        else TransportError(
                            f"GET answered {facts['content_type'] or 'no content type'}, not text/event-stream"
                        )
                    )
                    self._settle(error)
                    reason = str(error)
                    return
                self.tap.note("http", f"GET → HTTP {status}: SSE stream open", http=facts)
                reason = await self._events(response, later(facts))
        except asyncio.CancelledError:
            self._settle(TransportError("closed before the endpoint event"))
            raise
        except (Trickle, httpx.HTTPError) as exc:
            reason = f"SSE stream failed: {describe_http_error(exc)}"
        except Exception as exc:
            reason = f"SSE stream failed: {exc!r}"
        self._settle(TransportError(reason))
        if self.endpoint is not None and not self._closed:
            self.tap.note("closed", reason)
            try:
                self._on_closed(reason)
            except Exception as exc:
                self.tap.note("error", f"handling the closed connection failed: {exc!r}")

    async def _events(self, response: httpx.Response, facts: dict[str, Any]) -> str:
        """Read events until the stream ends; returns why it ended."""
        parser = SseParser()
        async for chunk in response.aiter_bytes():
            await self.tap.ready()  # paused while the tap's listener catches up (a flood)
            if parser.pending_bytes > MAX_FRAME:
                self.tap.note(
                    "error",
                    f"an SSE event grew past {MAX_FRAME} bytes; stopped reading the stream",
                    http=facts,
                    partial_size=parser.pending_bytes,
                )
                return f"an SSE event larger than {MAX_FRAME} bytes"
            for event in parser.feed(chunk):
                if event.event == "endpoint":
                    self._on_endpoint(event.data, facts)
                    continue
                if not event.has_data or not event.data.strip():
                    continue
                problems = [] if event.event == "message" else [f"SSE event type {event.event!r} (expected 'message')"]
                if event.invalid_utf8:
                    problems.append(INVALID_UTF8)
                _, parsed = self.tap.recv(
                    event.data,
                    http=facts,
                    sse_id=event.id,
                    problems=problems,
                    sse_event=event.event if event.named else None,
                )
                if parsed is not None:
                    self._deliver(parsed)
        if parser.in_event:
            partial = parser.partial()
            self.tap.note(
                "error",
                "SSE stream cut in the middle of an event; the partial event is dropped",
                http=facts,
                partial=partial[:2000],
                partial_size=len(partial),
            )
            return "the SSE stream was cut in the middle of an event"
        return "the server closed the SSE stream"

    def _on_endpoint(self, data: str, facts: dict[str, Any]) -> None:
        target = urljoin(self.url, data.strip())
        if self.endpoint is not None:
            self.tap.note("warning", f"ignored a second endpoint event ({shown_url(target)})", http=facts)
            return
        if not same_origin(target, self.url):
            error = TransportError(f"endpoint {shown_url(target)} is not on the origin of {self._shown_url}; refused")
            self.tap.note("error", str(error), http=facts)
            self._settle(error)
            return
        self.endpoint = target
        self.tap.note(
            "http",
            f"endpoint event: {shown_url(target)}",
            http=facts,
            endpoint=shown_url(target),
            sse_event="endpoint",
            sse_data=shown_url(data),
        )  # (the stream's text: HAR)
        if self._endpoint_ready is not None and not self._endpoint_ready.done():
            self._endpoint_ready.set_result(target)

    async def send(self, frame: dict[str, Any] | str, *, headers: dict[str, str] | None = None) -> None:
        """POST one frame to the endpoint and await the (immediate, 202) answer, so frames keep their order."""
        client = self._ensure_client()
        if self.endpoint is None:
            raise TransportError("the HTTP+SSE transport has no endpoint yet (start() first)")
        if isinstance(frame, str):
            text = frame
            try:
                parsed: Any = json.loads(frame)
            except ValueError:
                parsed = None
        else:
            text, parsed = jsonrpc.encode(frame), frame
        request_id = parsed.get("id") if jsonrpc.classify(parsed) == "request" else None
        request_headers = {"Content-Type": "application/json"}
        for name, value in {**self.headers, **(headers or {})}.items():
            set_header(request_headers, name, value)
        exchange = self.tap.exchange()
        self.tap.send(text, http=await self._request_facts("POST", self.endpoint, request_headers, exchange))
        started = self.tap.clock()
        try:
            async with client.stream(
                "POST", self.endpoint, content=text.encode("utf-8"), headers=request_headers
            ) as response:
                facts = self._response_facts("POST", self.endpoint, response, exchange, started)
                raw = await self._read_body(response)
        except (Trickle, httpx.HTTPError) as exc:
            self._fail(request_id, TransportError(f"POST {shown_url(self.endpoint)}: {describe_http_error(exc)}"))
            return
        status = response.status_code
        body = raw.decode("utf-8", errors="replace")
        if not 200 <= status < 300:
            parsed_body = self.tap.recv(raw, http=facts)[1] if raw.strip() else None
            if not raw.strip():
                self.tap.note("http", f"POST → HTTP {status}", http=facts)
            self._fail(request_id, HttpStatusError(status, body, parsed_body, auth_failure(response)), http=facts)
            return
        # The answer travels on the SSE stream; the POST body is only an acknowledgement ("Accepted").
        self.tap.note("http", f"POST → HTTP {status}" + (f": {body[:200]}" if body.strip() else ""), http=facts)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._cancel_tasks()
        if self._client is not None and self._own_client:
            await self._client.aclose()
        self.tap.note("closed", "HTTP+SSE transport closed")
