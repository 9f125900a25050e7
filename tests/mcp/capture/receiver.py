"""A small receiver of capture uploads that implements the contract the playground's server half
implements (docs/capture.md): `POST /capture/v1/frames`, a bearer token, NDJSON records, answers
200 {"session", "acked"}, 401, 403, 400, 413; dedupe by (capture, i). An asyncio HTTP/1.1 server
(keep-alive, Content-Length bodies) on 127.0.0.1 in a thread of its own, which the tests (and
bench/capture.py) can stop and start again on the same port, or make answer a status.

Run alone (`python tests/mcp/capture/receiver.py PORT TOKEN SERVER`) it serves until killed and
prints a summary line on SIGTERM (the bench runs it in a process of its own).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_BODY = 4 * 1024 * 1024
KINDS = {"start", "frame", "part", "stderr", "heartbeat", "dropped", "end"}


@dataclass
class Capture:
    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    acked: int = -1
    duplicates: int = 0
    session: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # records of each kind, kept as they come
    dropped: int = 0  # the sum of the `dropped` records' counts

    def ordered(self) -> list[dict[str, Any]]:
        return [self.records[i] for i in sorted(self.records)]


def problem(record: Any) -> str | None:
    """Why a record breaks the contract, or None."""
    if not isinstance(record, dict):
        return "not an object"
    if not isinstance(record.get("capture"), str) or len(record["capture"]) != 32:
        return "capture"
    for key, kind in (("server", int), ("i", int), ("t", float)):
        if not isinstance(record.get(key), kind):
            return key
    kind = record.get("kind")
    if kind not in KINDS:
        return "kind"
    if kind == "frame":
        if record.get("dir") not in ("send", "recv") or ("text" in record) == ("b64" in record):
            return "frame"
        if not isinstance(record.get("parts", 0), int) or not isinstance(record.get("cut", False), bool):
            return "frame"
    if kind == "part" and (record.get("dir") not in ("send", "recv") or not isinstance(record.get("b64"), str)):
        return "part"
    if kind == "stderr" and not isinstance(record.get("text"), str):
        return "stderr"
    if kind == "dropped" and not (isinstance(record.get("count"), int) and record["count"] > 0):
        return "dropped"
    if kind == "start" and not ({"argv", "pid", "cwd"} <= record.keys()):
        return "start"
    if kind == "end" and not ({"code", "reason"} <= record.keys()):
        return "end"
    return None


class Receiver:
    def __init__(self, tokens: dict[str, set[int]], port: int = 0) -> None:
        self.tokens = tokens  # token -> the server ids its owner has
        self.port = port
        self.captures: dict[str, Capture] = {}
        self.statuses: list[int] = []
        self.answer_status: int | None = None  # answer this to every request (e.g. 503)
        self.fail_after_store = 0  # store the next N batches, then answer 500 (the client resends)
        self.changed = threading.Condition()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    # --- control (from the test's thread) -----------------------------------------------------

    def __enter__(self) -> Receiver:
        self._thread.start()
        self.up()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.down()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        asyncio.run_coroutine_threadsafe(self._up(), self._loop).result(5)

    def down(self) -> None:
        """Stop listening and cut every connection: the playground is down."""
        asyncio.run_coroutine_threadsafe(self._down(), self._loop).result(5)

    def wait(self, predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not (value := predicate()):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the receiver did not see it in time")
                self.changed.wait(left)
        return value

    def only(self) -> Capture:
        assert len(self.captures) == 1, list(self.captures)
        return next(iter(self.captures.values()))

    def ended(self) -> bool:
        return any(r["kind"] == "end" for c in self.captures.values() for r in c.records.values())

    # --- the server ---------------------------------------------------------------------------

    async def _up(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _down(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
                length = int(headers.get("content-length", "0"))
                if length > MAX_BODY:
                    await self._answer(writer, 413, {"error": "too large"}, close=True)
                    return
                body = await reader.readexactly(length)
                status, answer = self.handle(method, path, headers, body)
                await self._answer(writer, status, answer)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(
        self, writer: asyncio.StreamWriter, status: int, answer: dict[str, Any], close: bool = False
    ) -> None:
        body = json.dumps(answer).encode()
        extra = "Connection: close\r\n" if close else ""
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode()
            + body
        )
        await writer.drain()

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        with self.changed:
            status, answer = self._handle(method, path, headers, body)
            self.statuses.append(status)
            self.changed.notify_all()
        return status, answer

    def stats(self) -> dict[str, Any]:
        return {
            "captures": {
                cid: {
                    "records": len(c.records),
                    "acked": c.acked,
                    "duplicates": c.duplicates,
                    "kinds": dict(c.kinds),
                    "dropped": c.dropped,
                }
                for cid, c in self.captures.items()
            }
        }

    def _handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        if self.answer_status is not None:
            return self.answer_status, {"error": "told to"}
        if method == "GET" and path == "/stats":  # (not the contract's: bench/capture.py reads it)
            return 200, self.stats()
        if method != "POST" or path != "/capture/v1/frames":
            return 404, {"error": "not found"}
        token = headers.get("authorization", "").removeprefix("Bearer ")
        if token not in self.tokens:
            return 401, {"error": "unknown token"}
        if headers.get("content-type") != "application/x-ndjson":
            return 400, {"error": "content type"}
        try:
            records = [json.loads(line) for line in body.split(b"\n") if line]
        except ValueError:
            return 400, {"error": "not JSON lines"}
        for record in records:
            if (why := problem(record)) is not None:
                return 400, {"error": f"malformed record: {why}"}
            if record["server"] not in self.tokens[token]:
                return 403, {"error": "not your server"}
        capture = None
        for record in records:
            capture = self.captures.setdefault(record["capture"], Capture(session=len(self.captures) + 1))
            if record["i"] in capture.records:
                capture.duplicates += 1
            else:
                capture.kinds[record["kind"]] = capture.kinds.get(record["kind"], 0) + 1
                capture.dropped += record["count"] if record["kind"] == "dropped" else 0
            capture.records[record["i"]] = record
            while capture.acked + 1 in capture.records:
                capture.acked += 1
        if capture is None:
            return 400, {"error": "no records"}
        if self.fail_after_store:
            self.fail_after_store -= 1
            return 500, {"error": "stored, but answering 500"}
        return 200, {"session": capture.session, "acked": capture.acked}


def _main() -> None:
    import signal
    import sys

    port, token, server = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    receiver = Receiver({token: {server}}, port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    with receiver:
        print("ready", flush=True)
        stop.wait()


if __name__ == "__main__":
    _main()
