#!/usr/bin/env python
"""While results checked against a catastrophic outputSchema pattern (^(a+)+$ against "a"*40+"!")
are rendered for a page, how fast does the same process answer GET /login/? Prints p50, p99 and
max of /login/ alone and during the calls. (With Python's backtracking `re` each result stalled
the process for minutes; patterns now run in RE2.) A benchmark, not a test: `python bench/hostile_schema.py [CALLS]`."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from harness import App, call_frame, wait_for
from run import pct


class LoginProbe(threading.Thread):
    """GET /login/ back to back from another thread, latencies in ms."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base, self.stop, self.ms = base, threading.Event(), []

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=600) as client:
            while not self.stop.is_set():
                started = time.perf_counter()
                client.get("/login/")
                self.ms.append((time.perf_counter() - started) * 1000)


def probe(base: str, seconds: float) -> list[float]:
    p = LoginProbe(base)
    p.start()
    time.sleep(seconds)
    p.stop.set()
    p.join()
    return p.ms


async def during_calls(app: App, session_id: int, calls: int) -> tuple[list[float], float]:
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="catalogue"')
    p = LoginProbe(app.base)
    p.start()
    started = time.perf_counter()
    for _ in range(calls):
        await ws.send(call_frame("go"))
        await wait_for(ws, "does not match", timeout=600)
    elapsed = time.perf_counter() - started
    p.stop.set()
    p.join()
    await ws.close()
    return p.ms, elapsed


def line(label: str, ms: list[float]) -> str:
    return f"{label:<28} {len(ms):6d} requests   p50 {pct(ms, 0.5):6.1f} ms   p99 {pct(ms, 0.99):6.1f} ms   max {max(ms):6.1f} ms"


def main(calls: int) -> None:
    app = App()
    app.start()
    try:
        session_id = app.connect(app.server("bench-redos", Path(__file__).resolve().parent / "peer_redos.py"))
        alone = probe(app.base, 3.0)
        during, elapsed = asyncio.run(during_calls(app, session_id, calls))
        print(line("GET /login/ alone", alone))
        print(line(f"during {calls} hostile results", during))
        print(f"{calls} results checked and rendered in {elapsed:.2f} s ({elapsed / calls * 1000:.1f} ms each)")
    finally:
        app.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
