"""The stdio <-> Streamable HTTP bridge (`--capture … --url URL`): the official SDK client over stdio
through it gets from the SDK's HTTP peer what it gets over HTTP directly, progress notifications
(an SSE answer) included."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tests.mcp.capture.conftest import MANAGE, SERVER, inspector, session_of


async def test_the_sdk_client_through_the_bridge(sdk_http: str) -> None:
    direct = await session_of(sdk_http)
    args = [MANAGE, "mcp", "--capture", "http://127.0.0.1:9", "--capture-server", str(SERVER), "--url", sdk_http]
    bridged = await session_of(StdioServerParameters(command=sys.executable, args=args))
    assert bridged == direct
    assert direct[1] == [1, 2, 3]


def test_the_inspector_cli_through_the_bridge(sdk_http: str, tmp_path: Path) -> None:
    """The legacy handshake (the Inspector's): the session id and version come back on each request."""
    bridged = {
        "command": sys.executable,
        "args": [MANAGE, "mcp", "--capture", "http://127.0.0.1:9", "--capture-server", str(SERVER), "--url", sdk_http],
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"bridged": bridged}}))
    call = ["--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=40"]
    through = inspector(["--cli", "--config", str(config), "--server", "bridged", *call], tmp_path)
    direct = inspector(["--cli", sdk_http, "--transport", "http", *call], tmp_path)
    assert through == direct and direct["structuredContent"] == {"result": 42}


class Peer(ThreadingHTTPServer):
    """A Streamable HTTP peer on 127.0.0.1 with what the SDK servers never send: answers spread
    over several lines (an SSE event of several `data:` lines, a pretty-printed JSON body). It
    keeps the notifications in the order they arrived; a `slow` request is answered only once
    `notified` notifications have come (or after 30 s, answering that they had not)."""

    daemon_threads = True

    def __init__(self, notified: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.notified = notified
        self.arrived: list[int] = []
        self.notified_before: dict[object, int] = {}  # request id -> notifications arrived before it
        self.changed = threading.Condition()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/mcp"


class _Handler(BaseHTTPRequestHandler):
    server: Peer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        peer = self.server
        if "id" not in message:
            with peer.changed:
                peer.arrived.append(message["params"]["n"])
                peer.changed.notify_all()
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with peer.changed:
            peer.notified_before[message["id"]] = len(peer.arrived)
        result: dict[str, object] = {"protocolVersion": "2025-06-18", "said": "one\ntwo"}
        if message["method"] == "slow":
            with peer.changed:
                in_time = peer.changed.wait_for(lambda: len(peer.arrived) >= peer.notified, timeout=30)
            result = {"notified_first": in_time}
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}, indent=2).encode()
        if message["method"] == "pretty":
            self._send("application/json", answer)
        else:  # one SSE event, a `data:` line per line of the pretty-printed JSON
            self._send("text/event-stream", b"".join(b"data: %s\n" % line for line in answer.split(b"\n")) + b"\n")

    def _send(self, kind: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def peer(notified: int = 0) -> Iterator[Peer]:
    server = Peer(notified)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def bridged(url: str, lines: list[dict[str, object]]) -> list[bytes]:
    """The host's stdout when it writes `lines` to the bridge and closes stdin."""
    argv = [sys.executable, MANAGE, "mcp", "--capture", "http://127.0.0.1:9", "--capture-server", str(SERVER)]
    proc = subprocess.run(
        [*argv, "--url", url],
        input=b"".join(json.dumps(m).encode() + b"\n" for m in lines),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines(keepends=True)


def request(i: int, method: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": {}}


def notification(n: int) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"n": n}}


def test_an_answer_over_several_lines_reaches_the_host_as_one_line() -> None:
    """The host reads one JSON message a line: an SSE event of several `data:` lines (joined by
    newlines, per the SSE rules) and a pretty-printed JSON body each come out as one line."""
    with peer() as server:
        out = bridged(server.url, [request(1, "initialize"), request(2, "pretty")])
    assert [line.endswith(b"\n") and b"\n" not in line[:-1] for line in out] == [True, True]
    answers = sorted((json.loads(line) for line in out), key=lambda m: m["id"])
    said = {"protocolVersion": "2025-06-18", "said": "one\ntwo"}  # (a newline escaped in a string stays)
    assert answers == [{"jsonrpc": "2.0", "id": i, "result": said} for i in (1, 2)]


def test_notifications_reach_the_server_in_the_hosts_order_past_a_long_request() -> None:
    """Notifications have no answer to wait for: they go out one after the other, in order. A
    request the server holds until they have all arrived does not hold them up."""
    count = 200
    with peer(notified=count) as server:
        out = bridged(server.url, [request(1, "initialize"), request(2, "slow"), *map(notification, range(count))])
    assert server.arrived == list(range(count))
    slow = next(m for m in map(json.loads, out) if m["id"] == 2)
    assert slow["result"] == {"notified_first": True}


def test_a_request_reaches_the_server_after_the_notifications_the_host_wrote_before_it() -> None:
    """`notifications/initialized`, then `tools/list`: a request does not overtake what the host
    wrote before it on the one-by-one sender (it was sent at once, in the pool)."""
    count = 30
    with peer() as server:
        out = bridged(server.url, [request(1, "initialize"), *map(notification, range(count)), request(2, "pretty")])
    assert server.arrived == list(range(count))
    assert server.notified_before[2] == count
    assert sorted(json.loads(line)["id"] for line in out) == [1, 2]
