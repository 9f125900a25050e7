#!/usr/bin/env python
"""The stdio capture (issue 25) beside no proxy and beside a plain logging proxy, in one run:

1. Round trip: the official SDK client's `tools/call echo` on bench/peer_sdk.py, directly, through
   the capture (recording into a receiver) and through bench/plain_proxy.py (three threads, each
   line to a file), in interleaved blocks after a warm-up. Goal: the capture adds no more than the
   plain proxy at the median.
2. Flood: 100,000 `notifications/message` from bench/peer_flood.py read by a raw client (the SDK
   client would be the bottleneck), the three arms alternating. Goal: the capture >= 90% of the
   direct throughput, and every frame recorded (the receiver's count, no `dropped`).
3. Playground down: the receiver stopped during a flood and for a while after; the capture's peak
   memory (VmHWM), the spill file's size, then the receiver started again and the time until
   every record has arrived. Goal: memory bounded (it does not grow with the flood).

The capture records into a running playground (daphne on a temporary SQLite database, as
bench/harness.py starts it: "playground live"), its captured sessions counted in the database;
`--receiver` records into tests/mcp/capture/receiver.py instead (the upload contract alone, in a
process of its own), to tell the capture's own cost from the playground's.

    python bench/capture.py [--quick] [--receiver] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
MANAGE = str(ROOT / "manage.py")
RECEIVER = str(ROOT / "tests" / "mcp" / "capture" / "receiver.py")
TOKEN = "bench-capture-token"
SERVER = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ReceiverProcess:
    """The upload contract's test receiver; `stats()`: per capture, its records' kinds, dropped
    count, acked and records."""

    token, server = TOKEN, SERVER

    def __init__(self) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None

    def up(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, RECEIVER, str(self.port), TOKEN, str(SERVER)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def down(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.base}/stats", timeout=10) as answer:
            return json.loads(answer.read())["captures"]


class PlaygroundReceiver:
    """A running playground as the capture's receiver: daphne (bench/harness.py), a registered
    server and a capture token of its user; `stats()` reads the captured sessions back from the
    database in the receiver's shape. `down()` stops daphne, `up()` starts it again on its port."""

    def __init__(self) -> None:
        import harness  # (sets Django up on the bench's own temporary database)

        from playground.capture.models import CaptureToken

        self.app = harness.App()
        self.app.start()
        self.base = self.app.base
        self.server = self.app.server("captured", BENCH / "peer_flood.py").pk
        _token, self.token = CaptureToken.issue(self.app.user, "bench")
        self._up = True

    def up(self) -> None:
        if not self._up:
            self.app.start()
            self._up = True

    def down(self) -> None:
        if self._up:
            self.app.stop()
            self._up = False

    def stats(self) -> dict[str, Any]:
        from django.db.models import Count, Q

        from playground.capture.models import Capture

        captures = Capture.objects.order_by("pk").select_related("session")
        counted = captures.annotate(
            frames=Count("session__events", filter=Q(session__events__dir__in=["send", "recv"]))
        )
        return {
            c.uuid: {
                "kinds": {"frame": c.frames, **({"end": 1} if c.ended else {})},
                "dropped": int((c.session.report or {}).get("dropped") or 0),
                "acked": c.next_i - 1,
                "records": c.next_i,  # (stored in order: what is acked is all there is)
            }
            for c in counted
        }


Receiver = ReceiverProcess | PlaygroundReceiver


def arms(spill: Path, receiver: Receiver, log: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The command and environment each arm uses to start `server`."""
    env = {
        **os.environ,
        "PLAYGROUND_CAPTURE_TOKEN": receiver.token,
        "PLAYGROUND_CAPTURE_SPILL_DIR": str(spill),
    }
    capture = [
        sys.executable,
        MANAGE,
        "mcp",
        "--capture",
        receiver.base,
        "--capture-server",
        str(receiver.server),
        "--",
    ]
    plain = [sys.executable, str(BENCH / "plain_proxy.py"), str(log), "--"]
    return {"direct": ([], env), "capture": (capture, env), "plain": (plain, env)}


def q(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


# 1. Round trip -------------------------------------------------------------------------------


async def round_trip(arm_cmds: dict[str, tuple[list[str], dict[str, str]]], calls: int, block: int) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = [sys.executable, str(BENCH / "peer_sdk.py")]
    times: dict[str, list[float]] = {name: [] for name in arm_cmds}
    async with contextlib.AsyncExitStack() as stack:
        devnull = stack.enter_context(open(os.devnull, "w"))
        sessions = {}
        for name, (prefix, env) in arm_cmds.items():
            argv = [*prefix, *server]
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=devnull))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            for i in range(20):  # warm-up
                await session.call_tool("echo", {"x": f"warm {i}"})
            sessions[name] = session
        done = 0
        while done < calls:
            for name, session in sessions.items():
                for i in range(done, min(calls, done + block)):
                    t0 = time.perf_counter()
                    result = await session.call_tool("echo", {"x": f"hello {i}"})
                    times[name].append((time.perf_counter() - t0) * 1000)
                    assert result.content[0].text == f"hello {i}"  # type: ignore[union-attr]
            done += block
    median = {name: statistics.median(t) for name, t in times.items()}
    return {
        "rt_calls": calls,
        **{f"rt_{name}_median_ms": round(m, 3) for name, m in median.items()},
        **{f"rt_{name}_p95_ms": round(q(t, 0.95), 3) for name, t in times.items()},
        "rt_capture_added_ms": round(median["capture"] - median["direct"], 3),
        "rt_plain_added_ms": round(median["plain"] - median["direct"], 3),
    }


# 2. Flood ------------------------------------------------------------------------------------


def _request(rid: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n"


class RawHost:
    """Starts an arm on the flood peer, handshakes, asks for a flood and reads it to the result."""

    def __init__(self, prefix: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, str(BENCH / "peer_flood.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout.fileno()
        self._send(
            _request(
                1,
                "initialize",
                {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
            )
        )
        self._lines(1)
        self._send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def _send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def _lines(self, count: int) -> None:
        seen = 0
        while seen < count:
            chunk = os.read(self.stdout, 1 << 20)
            assert chunk, "the arm's stdout ended"
            seen += chunk.count(b"\n")

    def flood(self, count: int) -> float:
        t0 = time.perf_counter()
        self._send(_request(2, "tools/call", {"name": "flood", "arguments": {"count": count}}))
        self._lines(count + 1)
        return time.perf_counter() - t0

    def peak_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def close(self) -> int:
        self.stdin.close()
        return self.proc.wait(60)


def recorded(receiver: Receiver, count: int, earlier: set[str], timeout: float = 120) -> dict[str, Any]:
    """The stats of the capture not in `earlier` once it holds a flood of `count`: the handshake
    (2 lines each way), the call, the notifications and the result. (A playground keeps every
    capture: the newest one listed may be a previous round's until this one's first upload.)"""
    deadline = time.monotonic() + timeout
    while True:
        new = [c for key, c in receiver.stats().items() if key not in earlier]
        newest = new[-1] if new else {"kinds": {}, "dropped": 0, "acked": -1, "records": 0}
        if newest["kinds"].get("frame", 0) >= count + 5 or time.monotonic() > deadline:
            return newest
        time.sleep(0.25)


def flood(
    arm_cmds: dict[str, tuple[list[str], dict[str, str]]], receiver: Receiver, count: int, rounds: int
) -> dict[str, Any]:
    """Raw host: the arms alternate; a capture's host keeps the session open until the receiver has
    every frame (so the receiver's work does not land on the next arm), timed apart."""
    seconds: dict[str, list[float]] = {name: [] for name in arm_cmds}
    recorded_after: list[float] = []
    complete = []
    for _ in range(rounds):
        for name, (prefix, env) in arm_cmds.items():
            earlier = set(receiver.stats())
            host = RawHost(prefix, env)
            seconds[name].append(host.flood(count))
            if name == "capture":
                t0 = time.perf_counter()
                stats = recorded(receiver, count, earlier)
                recorded_after.append(time.perf_counter() - t0)
                complete.append(
                    stats["kinds"].get("frame") == count + 5
                    and stats["dropped"] == 0
                    and stats["acked"] + 1 == stats["records"]
                )
            assert host.close() == 0
    rate = {name: count / statistics.median(s) for name, s in seconds.items()}
    return {
        "flood_count": count,
        "flood_rounds": rounds,
        **{f"flood_{name}_msgs_per_s": round(r) for name, r in rate.items()},
        "flood_capture_vs_direct": round(rate["capture"] / rate["direct"], 3),
        "flood_plain_vs_direct": round(rate["plain"] / rate["direct"], 3),
        "flood_every_frame_recorded": all(complete),
        "flood_all_recorded_after_s": round(statistics.median(recorded_after), 2),
    }


async def sdk_flood(arm_cmds: dict[str, tuple[list[str], dict[str, str]]], count: int) -> dict[str, Any]:
    """The same flood as the official SDK client sees it (a host's client), one round an arm."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    rate = {}
    for name, (prefix, env) in arm_cmds.items():
        got = 0

        async def on_log(params: Any) -> None:
            nonlocal got
            got += 1

        argv = [*prefix, sys.executable, str(BENCH / "peer_flood.py")]
        async with contextlib.AsyncExitStack() as stack:
            devnull = stack.enter_context(open(os.devnull, "w"))
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=devnull))
            session = await stack.enter_async_context(ClientSession(read, write, logging_callback=on_log))
            await session.initialize()
            t0 = time.perf_counter()
            await session.call_tool("flood", {"count": count})
            rate[name] = count / (time.perf_counter() - t0)
            assert got == count, (name, got)
    return {
        **{f"sdk_flood_{name}_msgs_per_s": round(r) for name, r in rate.items()},
        "sdk_flood_capture_vs_direct": round(rate["capture"] / rate["direct"], 3),
        "sdk_flood_plain_vs_direct": round(rate["plain"] / rate["direct"], 3),
    }


# 3. Playground down --------------------------------------------------------------------------


def down(
    arm_cmds: dict[str, tuple[list[str], dict[str, str]]],
    receiver: Receiver,
    spill: Path,
    count: int,
    pause: float,
) -> dict[str, Any]:
    prefix, env = arm_cmds["capture"]
    before = set(receiver.stats())
    baseline = RawHost(prefix, env)  # receiver up: the capture's memory for the same flood
    baseline.flood(count)
    recorded(receiver, count, before)  # (closed once delivered: else its last records go to a spill file)
    up_mb = baseline.peak_mb()
    baseline.close()
    earlier = set(receiver.stats())  # (a playground keeps its captures: only the new one counts)

    def new() -> list[dict[str, Any]]:
        return [c for key, c in receiver.stats().items() if key not in earlier]

    receiver.down()
    host = RawHost(prefix, env)
    elapsed = host.flood(count)
    time.sleep(pause)  # the playground stays down a while after the flood
    down_mb = host.peak_mb()
    spilled = sum(f.stat().st_size for f in spill.glob("*.part"))
    receiver.up()
    t0 = time.perf_counter()
    while True:  # until every frame of the flood has arrived (the end comes once the host closes)
        found = [c for c in new() if c["kinds"].get("frame", 0) + c["dropped"] >= count + 5]
        if found or time.perf_counter() - t0 > 120:
            break
        time.sleep(0.25)
    delivered_s = time.perf_counter() - t0
    host.close()
    deadline = time.monotonic() + 10
    while not any(c["kinds"].get("end") for c in new()) and time.monotonic() < deadline:
        time.sleep(0.25)  # (the end record, sent as the capture ends)
    final = [c for c in new() if c["kinds"].get("end")]
    return {
        "down_flood_count": count,
        "down_pause_s": pause,
        "down_flood_msgs_per_s": round(count / elapsed),
        "down_capture_peak_mb": round(down_mb, 1),
        "up_capture_peak_mb": round(up_mb, 1),
        "down_spill_mb": round(spilled / 1e6, 1),
        "down_delivered_after_up_s": round(delivered_s, 2),
        # Every line recorded or counted in a `dropped` record (the recorder keeps up to 32 MB of
        # chunks waiting; a raw reader's flood can outrun it), no gap in the numbers:
        "down_frames_recorded": final[0]["kinds"].get("frame", 0) if final else 0,
        "down_dropped_counted": final[0]["dropped"] if final else 0,
        "down_complete": bool(final)
        and final[0]["kinds"].get("frame", 0) + final[0]["dropped"] == count + 5
        and final[0]["acked"] + 1 == final[0]["records"],
        "down_left_in_spill": len(list(spill.glob("*"))),
    }


def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument(
        "--receiver", action="store_true", help="record into the contract's test receiver, not a playground"
    )
    parser.add_argument("--json", default="", metavar="PATH", help="also write the figures to PATH")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    spill = tmp / "spill"
    receiver: Receiver = ReceiverProcess() if args.receiver else PlaygroundReceiver()
    receiver.up()
    arm_cmds = arms(spill, receiver, tmp / "plain.log")
    results: dict[str, Any] = {
        "load_before": os.getloadavg()[0],
        "recorded_into": "receiver" if args.receiver else "playground",
    }
    try:
        started = time.perf_counter()
        results.update(asyncio.run(round_trip(arm_cmds, 60 if args.quick else 1500, 20 if args.quick else 50)))
        print(f"round trip: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        started = time.perf_counter()
        results.update(flood(arm_cmds, receiver, 5_000 if args.quick else 100_000, 1 if args.quick else 3))
        results.update(asyncio.run(sdk_flood(arm_cmds, 2_000 if args.quick else 100_000)))
        print(f"flood: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        started = time.perf_counter()
        results.update(down(arm_cmds, receiver, spill, 20_000 if args.quick else 300_000, 1.0 if args.quick else 20.0))
        print(f"down: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    finally:
        receiver.down()
        shutil.rmtree(tmp, ignore_errors=True)
    results["load_after"] = os.getloadavg()[0]
    for key, value in results.items():
        print(f"{key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return results


if __name__ == "__main__":
    main()
