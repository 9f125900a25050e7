"""The HTTP capture: a URL on the playground (per server and token) that a host uses as its
server's URL. Each request goes on to the registered URL as the host sent it (its headers, its
`Authorization` included; the server's configured headers are NOT added), through the address
guard; the answer comes back as the server sent it (status, headers, body), streamed: an SSE
event reaches the host as it arrives, nothing is held whole (a JSON answer's last chunk waits
for the body's end). A copy of each frame is recorded just before it goes on, into a captured
session (ingest.append): a reply is never recorded before what it answers.

- Streamable HTTP: POST, the GET stream, DELETE, `Mcp-Session-Id`, `MCP-Protocol-Version`,
  `Last-Event-ID` pass as headers do. A connection is one captured session: the one its
  `Mcp-Session-Id` names once the server assigned it (or, without one, the last one opened).
- HTTP+SSE (2024-11-05): the GET stream's `endpoint` event names where to POST; its URL is
  rewritten to come back through this capture (`.../<path>` below the capture's URL).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import logging
import time
import uuid
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from playground import security
from playground.mcp import jsontext
from playground.mcp.framing import SseParser
from playground.mcp.netguard import AddressRefused
from playground.mcp.transports.http_common import masked, shown_url
from playground.registry.models import Server
from playground.transcripts.models import Session

from .ingest import Forbidden, append
from .models import Capture, CaptureToken
from .publish import publish
from .records import LIMITS
from .views import foreign_origin

log = logging.getLogger(__name__)

# Not forwarded either way: they describe one hop, not the message (RFC 9110 §7.6.1), and the
# framing each side's server sets itself.
HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host"}
    | {"content-length", "proxy-authorization", "proxy-authenticate"}
)
RECORDED_BODY = 4 * 1024 * 1024  # a JSON response body recorded up to this (it is forwarded whole)


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def _client() -> httpx.AsyncClient:
    """The process's guarded client (one per event loop): its connections are reused, and a
    client's making (its TLS context) cost ~0.1 s a request when each request made one."""
    loop = asyncio.get_running_loop()
    client = _CLIENTS.get(loop)
    if client is None or client.is_closed:
        client = _CLIENTS[loop] = security.net_guard().client(timeout=httpx.Timeout(30.0, read=None))
    return client


def _error(status: int, text: str) -> JsonResponse:
    return JsonResponse({"error": text}, status=status)


def _authorize(plain: str, server_id: int) -> tuple[CaptureToken, Server] | JsonResponse:
    token = CaptureToken.authenticate(plain)
    if token is None:
        return _error(401, "missing, wrong or revoked capture token")
    server = Server.objects.filter(pk=server_id, owner_id=token.owner_id).first()
    if server is None:
        return _error(403, "the server is not one of the token owner's registered servers")
    if server.is_stdio or not server.url:
        return _error(400, "the server is a stdio server: use its stdio entry")
    return token, server


# Connection keys -> their capture, as soon as the server names a connection: its recording reaches
# the database off the forwarding path, so the host's next request (with the key) could come before
# the Capture row had it, and open a second captured session for the same connection. This
# process's; another process finds the key in the database, once recorded.
_KEYS: collections.OrderedDict[tuple[int, str], str] = collections.OrderedDict()
KEYS_KEPT = 10_000


def _named(token: CaptureToken, key: str, capture: str) -> None:
    _KEYS[(token.pk, key)] = capture
    _KEYS.move_to_end((token.pk, key))
    while len(_KEYS) > KEYS_KEPT:
        _KEYS.popitem(last=False)


def _capture_for(token: CaptureToken, server: Server, key: str, opens: bool) -> str:
    """The capture a request belongs to: the one its connection's key names, a new one for a
    connection opening (initialize, the SSE stream), else the last one opened without a key."""
    named = _KEYS.get((token.pk, key)) if key else None  # (one lookup: another thread may evict it)
    if named is not None:
        return named
    captures = Capture.objects.filter(server=server, token=token).order_by("-pk")
    if key:
        found = captures.filter(http_key=key).values_list("uuid", flat=True).first()
        if found:
            return found
    if not opens:
        found = captures.filter(http_key="", ended=False).values_list("uuid", flat=True).first()
        if found:
            return found
    return uuid.uuid4().hex


def _frame(direction: str, data: bytes, http: dict[str, Any] | None = None, **facts: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "frame", "dir": direction, **facts}
    try:
        record["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        record["b64"] = base64.b64encode(data).decode()
    if http is not None:
        record["http"] = http
    return record


QUEUED = 10_000  # records of one capture waiting to be saved; beyond, they are counted as dropped


@dataclass
class _Queue:
    """A capture's records, in the order they were forwarded, saved by one task at a time."""

    items: list[tuple[list[dict[str, Any]], str]] = field(default_factory=list)  # (records, key)
    size: int = 0
    dropped: int = 0
    task: asyncio.Task[None] | None = None


_QUEUES: dict[str, _Queue] = {}


class _Recorder:
    """Records this request's frames into its capture, off the forwarding path: `add` only
    queues them (with their time); a task per capture saves them in that order."""

    def __init__(self, token: CaptureToken, plain: str, server: Server, capture: str, key: str) -> None:
        self.token, self.plain, self.server, self.capture, self.key = token, plain, server, capture, key
        self.secret_names = list((server.headers or {}).keys())

    def add(self, *records: dict[str, Any]) -> None:
        queue = _QUEUES.setdefault(self.capture, _Queue())
        now = time.time()
        if queue.size + len(records) > QUEUED:
            queue.dropped += sum(1 for r in records if r["kind"] == "frame")
        else:
            queue.items.append(([{"t": now, **r} for r in records], self.key))
            queue.size += len(records)
        if queue.task is None or queue.task.done():
            queue.task = asyncio.get_running_loop().create_task(self._save(queue))

    async def _save(self, queue: _Queue) -> None:
        while queue.items or queue.dropped:
            items, queue.items, queue.size = queue.items, [], 0
            records = [record for batch, _key in items for record in batch]
            if queue.dropped:
                records.append({"kind": "dropped", "count": queue.dropped, "t": time.time()})
                queue.dropped = 0
            key = next((key for _batch, key in reversed(items) if key), "")
            try:
                await sync_to_async(append)(self.token, self.plain, self.server, self.capture, records, publish, key)
            except Forbidden:
                pass
            except Exception:  # recording never breaks the host's connection
                log.exception("recording an HTTP capture's frames failed")
        if _QUEUES.get(self.capture) is queue:
            del _QUEUES[self.capture]

    def facts(self, method: str, url: str, headers: Any, **more: Any) -> dict[str, Any]:
        items = headers.items() if hasattr(headers, "items") else headers
        return {"method": method, "url": shown_url(url), "headers": masked(items, self.secret_names), **more}


def _initializes(body: bytes) -> bool:
    """Whether a POSTed frame is an `initialize` request: a new connection."""
    if b'"initialize"' not in body:
        return False
    try:
        message = jsontext.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


def _target(server: Server, rest: str, query: str) -> str:
    """Where the request goes: the registered URL, or a path below its origin (HTTP+SSE's
    message endpoint, as the rewritten `endpoint` event named it)."""
    if rest:
        parts = urlsplit(server.url)
        url = f"{parts.scheme}://{parts.netloc}/{rest}"
    else:
        url = server.url
    return f"{url}{'&' if '?' in url else '?'}{query}" if query else url


def _rewrite_endpoint(data: str, server: Server, base: str) -> str:
    """An `endpoint` event's URL, made to come back through the capture (`base`, ending in /):
    only one on the server's own origin (another is left as it is, and not captured)."""
    absolute = urljoin(server.url, data.strip())
    target, registered = urlsplit(absolute), urlsplit(server.url)
    if (target.scheme, target.netloc) != (registered.scheme, registered.netloc):
        return data
    return base + target.path.lstrip("/") + (f"?{target.query}" if target.query else "")


@csrf_exempt
async def http_capture(request: HttpRequest, server_id: int, token: str, rest: str = "") -> HttpResponseBase:
    if foreign_origin(request):
        return _error(403, "requests from another site's page are refused")
    allowed = await sync_to_async(_authorize)(token, server_id)
    if isinstance(allowed, JsonResponse):
        return allowed
    capture_token, server = allowed
    method = request.method or "GET"
    # (read from the stream: `request.body` refuses what exceeds DATA_UPLOAD_MAX_MEMORY_SIZE)
    body = request.read(LIMITS.request_bytes + 1) if method == "POST" else b""
    if len(body) > LIMITS.request_bytes:
        return _error(413, f"a request is at most {LIMITS.request_bytes} bytes here")
    query = request.META.get("QUERY_STRING", "")
    target = _target(server, rest, query)
    session_id = request.headers.get("Mcp-Session-Id", "")
    legacy_id = next((p.split("=", 1)[1] for p in query.split("&") if p.startswith("session_id=")), "")
    key = f"mcp:{session_id}" if session_id else f"sse:{legacy_id}" if legacy_id else ""
    opens = (method == "POST" and _initializes(body)) or (method == "GET" and server.transport == "sse")
    capture = await sync_to_async(_capture_for)(capture_token, server, key, opens)
    recorder = _Recorder(capture_token, token, server, capture, key)
    headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP]
    # The exchange's events carry its number, as a live session's tap numbers them (the HAR
    # export groups by it): unique in the session without a shared counter.
    exchange = uuid.uuid4().int >> 76
    sent = recorder.facts(method, target, headers, exchange=exchange)
    # Recorded before it goes on: what the server sends meanwhile on another stream (a request
    # this call makes, while its JSON answer is not there yet) comes after it in the recording.
    if body:
        recorder.add(_frame("send", body, sent))
    else:
        recorder.add({"kind": "http_note", "text": f"{method} {shown_url(target)}", "http": sent})
    client = _client()
    try:
        upstream = await client.send(client.build_request(method, target, headers=headers, content=body), stream=True)
    except (AddressRefused, httpx.HTTPError) as exc:
        text = f"{method} {shown_url(target)}: {exc}"
        recorder.add({"kind": "http_note", "text": f"the capture could not reach the server: {text}"})
        return _error(502, text)
    answer = recorder.facts(
        method,
        target,
        upstream.headers.multi_items(),
        status=upstream.status_code,
        exchange=exchange,
        content_type=upstream.headers.get("content-type", ""),
        request_headers=recorder.facts(method, target, headers)["headers"],
    )
    if not recorder.key and upstream.headers.get("mcp-session-id"):
        recorder.key = f"mcp:{upstream.headers['mcp-session-id']}"
        _named(capture_token, recorder.key, recorder.capture)
    if method == "DELETE":
        recorder.add(
            {"kind": "end", "code": None, "reason": f"the host ended the session (DELETE → {upstream.status_code})"}
        )
    kind = upstream.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    base = request.build_absolute_uri(f"/capture/v1/http/{server_id}/{token}/")
    stream = (
        _sse(upstream, recorder, answer, server, base)
        if kind == "text/event-stream"
        else _body(upstream, recorder, answer, kind)
    )
    response = StreamingHttpResponse(_closing(stream, upstream, capture), status=upstream.status_code)
    for name, value in upstream.headers.multi_items():
        if name.lower() not in HOP and name.lower() != "content-encoding":
            response.headers[name] = value
    if upstream.headers.get("content-encoding"):
        response.headers["Content-Encoding"] = upstream.headers["content-encoding"]
    return response


async def _closing(chunks: AsyncIterator[bytes], upstream: httpx.Response, capture: str) -> AsyncIterator[bytes]:
    """The body; while it streams, the captured session is live (an idle SSE stream included)."""
    beating = asyncio.get_running_loop().create_task(_beat(capture))
    try:
        async for chunk in chunks:
            yield chunk
    finally:
        beating.cancel()
        await upstream.aclose()


async def _beat(capture: str) -> None:
    """The heartbeat a stdio capture sends, for an open HTTP response: the session does not end
    for silence (sessions.live.durability) while the host holds a stream open."""

    def touch() -> None:
        Session.objects.filter(capture__uuid=capture, status=Session.Status.CONNECTED).update(
            heartbeat_at=timezone.now()
        )

    while True:
        await asyncio.sleep(settings.PLAYGROUND_HEARTBEAT_SECONDS)
        with contextlib.suppress(Exception):
            await sync_to_async(touch)()


async def _body(upstream: httpx.Response, recorder: _Recorder, http: dict[str, Any], kind: str) -> AsyncIterator[bytes]:
    """A plain body, forwarded as it comes; recorded once whole (a JSON-RPC answer is one frame),
    before its last chunk goes on: the host's next request (sent once it has this answer) is then
    recorded after it."""
    kept = bytearray()
    held = b""
    async for chunk in upstream.aiter_raw():
        if held:
            yield held
        held = chunk
        if len(kept) < RECORDED_BODY:
            kept += chunk[: RECORDED_BODY - len(kept)]
    _record_body(upstream, recorder, http, kind, kept)
    if held:
        yield held


def _record_body(
    upstream: httpx.Response, recorder: _Recorder, http: dict[str, Any], kind: str, kept: bytearray
) -> None:
    if upstream.headers.get("content-encoding"):
        recorder.add(
            {"kind": "http_note", "text": f"HTTP {upstream.status_code}: an encoded body (not recorded)", "http": http}
        )
    elif kind == "application/json" and kept.strip():
        recorder.add(_frame("recv", bytes(kept), http))
    else:
        text = bytes(kept[:300]).decode("utf-8", "replace").strip()
        recorder.add(
            {"kind": "http_note", "text": f"HTTP {upstream.status_code}" + (f": {text}" if text else ""), "http": http}
        )


async def _sse(
    upstream: httpx.Response, recorder: _Recorder, http: dict[str, Any], server: Server, base: str
) -> AsyncIterator[bytes]:
    """An event stream, forwarded line by line as it comes (the `endpoint` event's URL rewritten);
    each event with data recorded as a frame just before it goes on (a host's answer to a server's
    request is then recorded after that request)."""
    parser = SseParser()
    pending = b""
    in_endpoint = False
    recorder.add({"kind": "http_note", "text": f"HTTP {upstream.status_code}: SSE stream open", "http": http})
    async for chunk in upstream.aiter_raw():
        pending += chunk
        lines = pending.split(b"\n")
        pending = lines.pop()
        out = bytearray()
        for line in lines:
            text = line.rstrip(b"\r")
            if text in (b"event: endpoint", b"event:endpoint"):
                in_endpoint = True
            elif not text:
                in_endpoint = False
            elif in_endpoint and text.startswith(b"data:"):
                value = text[5:].decode("utf-8", "replace").lstrip(" ")
                line = b"data: " + _rewrite_endpoint(value, server, base).encode() + line[len(text) :]
            out += line + b"\n"
        if out:
            for event in parser.feed(bytes(out)):
                if event.has_data and event.event != "endpoint":
                    recorder.add(_frame("recv", event.data.encode(), http, sse_id=event.id))
                elif event.has_data:
                    # The connection's key: the host's POSTs name its session_id.
                    query = urlsplit(event.data.strip()).query
                    session = next((p.split("=", 1)[1] for p in query.split("&") if p.startswith("session_id=")), "")
                    if session and not recorder.key:
                        recorder.key = f"sse:{session}"
                        _named(recorder.token, recorder.key, recorder.capture)
                    recorder.add({"kind": "http_note", "text": f"endpoint: {event.data}", "http": http})
            yield bytes(out)
    if pending:
        yield pending
