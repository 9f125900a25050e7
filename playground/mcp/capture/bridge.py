"""`manage.py mcp --capture BASE --capture-server ID --url URL`: a stdio <-> Streamable HTTP bridge,
for hosts whose config takes only a command (Claude Desktop's file) and a server that is reached over
HTTP. The URL is the playground's HTTP capture of that server (`<base>/capture/v1/http/<id>/<token>/`),
which records the session: the bridge itself records nothing.

Each line the host writes is POSTed as it is (its bytes, without the newline); the answer, a JSON
body or an SSE stream (read by the client's own SSE parser), comes back as one line per message, in
the order the server sent them: a message the server spread over several lines (pretty-printed
JSON, an SSE event of several `data:` lines) has its line breaks turned into spaces, which JSON
allows between tokens only. Requests are sent concurrently after the first (the handshake), as a
host's would be; what has no answer to wait for (notifications, responses to the server's
requests) goes out on one sender thread, in the host's order, and a request goes out only once
what the host wrote before it on that thread has (`notifications/initialized` before the first
`tools/list`, a server request's answer before the next request). The session id and protocol
version the server gives are sent back on every request; a GET stream carries what the server
sends unasked; the session is DELETEd when the host closes stdin.
"""

from __future__ import annotations

import json
import os
import queue
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..framing import MAX_FRAME, SseParser
from . import say

WORKERS = 16  # requests in flight at once


class Bridge:
    def __init__(self, url: str, host_in: int = 0, host_out: int = 1) -> None:
        import httpx  # (only on this path)

        self.url = url
        self.host_in, self.host_out = host_in, host_out
        self.client = httpx.Client(timeout=httpx.Timeout(30.0, read=None), follow_redirects=False)
        self.session_id: str | None = None
        self.version: str | None = None
        self._out = threading.Lock()
        self._listening = False

    def headers(self, message: Any = None) -> dict[str, str]:
        """A legacy request's: the session and version the server gave; a modern one's (2026-07-28:
        its `_meta` names the version): the request metadata headers, no session."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        meta = message.get("params", {}).get("_meta") if isinstance(message, dict) else None
        if isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta:
            from ..transports.http_common import modern_headers

            return {**headers, **modern_headers(message, None)}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    def write(self, payload: bytes) -> None:
        with self._out:
            data = _one_line(payload) + b"\n"
            view = memoryview(data)
            while view:
                view = view[os.write(self.host_out, view) :]

    def run(self) -> int:
        pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="bridge")
        # What has no answer to wait for is posted in the host's order, one after the other: in
        # the pool, two notifications could reach the server reversed.
        unanswered: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        posted = _Count()  # of the lines put in `unanswered`, how many the sender has posted
        sender = threading.Thread(target=self._send, args=(unanswered, posted), name="bridge-send", daemon=True)
        sender.start()
        queued = 0
        first = True
        buffer = b""
        try:
            while chunk := os.read(self.host_in, 65536):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    if first:  # the handshake: its answer gives the session id the others need
                        self.post(line)
                        first = False
                    elif _is_request(_parsed(line)):
                        pool.submit(self._post_after, line, posted, queued)
                    else:
                        unanswered.put(line)
                        queued += 1
            if buffer.strip():
                unanswered.put(buffer)
        except OSError:
            pass
        unanswered.put(None)
        sender.join()
        pool.shutdown(wait=True)
        if self.session_id:
            try:
                self.client.delete(self.url, headers=self.headers())
            except Exception:
                pass
        self.client.close()
        return 0

    def _send(self, lines: queue.SimpleQueue[bytes | None], posted: _Count) -> None:
        while (line := lines.get()) is not None:
            try:
                self.post(line)
            finally:
                posted.add()  # (the requests waiting for it go on, whatever came of it)

    def _post_after(self, line: bytes, posted: _Count, before: int) -> None:
        """A request, once the sender has posted the `before` lines the host wrote ahead of it."""
        posted.reach(before)
        self.post(line)

    def post(self, line: bytes) -> None:
        message = _parsed(line)
        request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
        try:
            with self.client.stream("POST", self.url, content=line, headers=self.headers(message)) as response:
                if response.headers.get("mcp-session-id"):
                    self.session_id = response.headers["mcp-session-id"]
                kind = response.headers.get("content-type", "").split(";")[0].strip()
                if response.status_code == 202:
                    self._listen()
                    return
                if kind == "text/event-stream":
                    self._events(response)
                elif response.status_code < 300 or kind == "application/json":
                    body = response.read()
                    if body.strip():
                        self._seen(body)
                        self.write(body)
                    elif request_id is not None:
                        self._error(request_id, f"HTTP {response.status_code} without a body")
                else:
                    self._error(request_id, f"HTTP {response.status_code}: {response.read()[:200]!r}")
        except Exception as exc:
            self._error(request_id, f"the server could not be reached: {exc}")

    def _seen(self, message: bytes) -> None:
        """The protocol version an initialize result agreed on."""
        if self.version is None and b"protocolVersion" in message:
            try:
                parsed = json.loads(message)
                self.version = parsed["result"]["protocolVersion"]
            except (ValueError, KeyError, TypeError):
                pass

    def _events(self, response: Any) -> None:
        parser = SseParser()
        for chunk in response.iter_bytes():
            for event in parser.feed(chunk):
                if event.has_data:
                    message = event.data.encode()
                    self._seen(message)
                    self.write(message)
            if parser.pending_bytes > MAX_FRAME:
                say(f"bridge: an SSE event larger than {MAX_FRAME} bytes; stopped reading the stream")
                return
        if parser.in_event:  # cut before its blank line: what came of it is still a message
            tail = parser.feed(b"\n\n")
            if tail and tail[-1].has_data:
                self.write(tail[-1].data.encode())

    def _listen(self) -> None:
        """Once the session is up (the first 202: `notifications/initialized`), what the server
        sends unasked arrives on a GET stream."""
        if self._listening or not self.session_id:
            return
        self._listening = True
        threading.Thread(target=self._get, name="bridge-get", daemon=True).start()

    def _get(self) -> None:
        headers = {**self.headers(), "Accept": "text/event-stream"}
        try:
            with self.client.stream("GET", self.url, headers=headers) as response:
                if response.status_code == 200:
                    self._events(response)
        except Exception:
            pass

    def _error(self, request_id: Any, text: str) -> None:
        if request_id is None:
            say(f"bridge: {text}")
            return
        error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": f"bridge: {text}"}}
        self.write(json.dumps(error).encode())


class _Count:
    """A count other threads wait to reach."""

    def __init__(self) -> None:
        self.value = 0
        self._changed = threading.Condition()

    def add(self) -> None:
        with self._changed:
            self.value += 1
            self._changed.notify_all()

    def reach(self, target: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self.value >= target)


def _parsed(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _is_request(message: Any) -> bool:
    """Whether the message (or one of a batch) waits for an answer: it may take long, so it is
    sent on its own thread."""
    if isinstance(message, list):
        return any(_is_request(m) for m in message)
    return isinstance(message, dict) and "method" in message and "id" in message


_BREAKS = re.compile(rb"[\r\n]+")


def _one_line(payload: bytes) -> bytes:
    """The message on one line for the host's newline-delimited framing. JSON allows a line break
    only between tokens (never raw inside a string), so a space there leaves the message unchanged."""
    return _BREAKS.sub(b" ", payload.strip(b"\r\n"))
