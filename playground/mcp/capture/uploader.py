"""Posts the outbox's records to the playground (`POST <base>/capture/v1/frames`), in order, in
batches of at most 4 MB, on its own thread: the forwarding never waits for it.

A batch is forgotten once the playground answered 200 (it dedupes by (capture, i), so sending a
batch again after a timeout is safe). Down, slow or restarting (no connection, a timeout, a 5xx):
retried with back-off while the records wait in the outbox (memory, then the spill file). 401,
403, 400 or 404: the playground will never take them: one line on stderr, recording stops, the
forwarding goes on. `http.client` is imported on this thread, after the server has started.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from . import say
from .outbox import Outbox

MAX_BATCH = 4_000_000  # the request limit of the contract (4 MB)
LINGER = 0.02  # seconds gathered before a post: fewer, larger requests during traffic
BACKOFF = (0.25, 0.5, 1.0, 2.0, 5.0)
TIMEOUT = 10.0
FATAL = {400: "the upload was malformed", 401: "the capture token was refused", 403: "not your server", 404: None}


class Refused(Exception):
    """The playground will not take these records (401, 403, 400, 404): stop recording."""


def frames_url(base: str) -> str:
    return base.rstrip("/") + "/capture/v1/frames"


class Poster:
    """One keep-alive connection to the playground; `post` answers (status, JSON body)."""

    def __init__(self, base: str, token: str, timeout: float = TIMEOUT) -> None:
        url = urlsplit(frames_url(base))
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"the playground's URL must be http(s)://HOST[:PORT]: {base!r}")
        self.url = url
        self.path = url.path
        self.token = token
        self.timeout = timeout
        self._conn: Any = None

    def post(self, body: bytes) -> tuple[int, dict[str, Any]]:
        import http.client  # (~50 ms to import: not before the server has started)

        if self._conn is None:
            kind = http.client.HTTPSConnection if self.url.scheme == "https" else http.client.HTTPConnection
            self._conn = kind(self.url.hostname or "", self.url.port, timeout=self.timeout)
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/x-ndjson",
            "Content-Length": str(len(body)),
        }
        try:
            self._conn.request("POST", self.path, body=body, headers=headers)
            response = self._conn.getresponse()
            data = response.read()
        except Exception:
            self.close()
            raise
        if response.will_close:
            self.close()
        try:
            answer = json.loads(data) if data else {}
        except ValueError:
            answer = {}
        return response.status, answer if isinstance(answer, dict) else {}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def refusal(status: int, answer: dict[str, Any], url: str) -> str | None:
    """The stderr line for an answer that means "never", or None (retry or success)."""
    if status == 404:
        return f"{url} answered 404: this playground does not take captures (is it the right URL?)"
    if status in FATAL:
        error = answer.get("error")
        detail = f": {error}" if isinstance(error, str) and error else ""
        return f"{FATAL[status]} ({status}{detail})"
    return None


class Uploader:
    def __init__(
        self,
        outbox: Outbox,
        poster: Poster,
        on_refused: Callable[[], None],
        linger: float = LINGER,
    ) -> None:
        self.outbox = outbox
        self.poster = poster
        self.on_refused = on_refused
        self.linger = linger
        self.rejected = 0  # records given up on (a 413 for a single record)
        self.delivered = 0  # outbox entries the playground took (a record, or a chunk's records)
        self.session: Any = None
        self.online = True  # the last post reached the playground
        self.refused = False
        self.reached = threading.Event()  # set once a post was taken (the playground is there)
        self._stopping = threading.Event()
        self._deadline = 0.0
        self._max_batch = MAX_BATCH
        self._thread = threading.Thread(target=self._run, name="capture-uploader", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def finish(self, within: float) -> None:
        """Deliver what is left within `within` seconds, then stop: one more try at once if the
        playground was not answering (it may be back), none after a failed one."""
        self._deadline = time.monotonic() + within
        self._stopping.set()
        with self.outbox.ready:
            self.outbox.ready.notify()
        self._thread.join(within + 1.0)

    def _run(self) -> None:
        failures = 0
        while not self.refused:
            with self.outbox.ready:
                while not self.outbox.pending() and not self._stopping.is_set():
                    self.outbox.ready.wait()
            if not self.outbox.pending():
                break
            if self._stopping.is_set() and time.monotonic() >= self._deadline:
                break
            if self.linger and not self._stopping.is_set():
                time.sleep(self.linger)
            if self._send_one():
                failures = 0
                continue
            if self.refused or self._stopping.is_set():  # at the end: one more try, not a wait
                break
            failures += 1
            self._stopping.wait(BACKOFF[min(failures, len(BACKOFF)) - 1])  # (cut short by finish)
        self.poster.close()

    def _send_one(self) -> bool:
        """Post the oldest batch: True when it was delivered (or given up on)."""
        lines, from_memory, file_bytes = self.outbox.peek(self._max_batch)
        if not lines:
            return True
        try:
            status, answer = self.poster.post(b"".join(lines))
        except Exception:  # refused, reset, timed out; http.client's own (IncompleteRead, BadStatusLine)
            self.online = False
            return False
        self.online = status < 500
        if status == 200:
            self.outbox.commit(from_memory, file_bytes)
            self.delivered += len(lines)
            self.session = answer.get("session", self.session)
            self.reached.set()
            return True
        if status == 413:
            if len(lines) == 1:  # one record the playground will not take: counted, not kept
                self.outbox.commit(from_memory, file_bytes)
                self.rejected += 1
                return True
            self._max_batch = max(1, sum(map(len, lines)) // 2)
            return True
        message = refusal(status, answer, self.poster.url.geturl())
        if message is not None:
            self.refused = True
            say(f"{message}: not recording; the server keeps running for the host.")
            self.outbox.discard()
            self.on_refused()
            return False
        return False  # 5xx, 429 …: later
