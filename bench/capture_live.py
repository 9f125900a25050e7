"""How long a captured frame takes to reach an open session page: a capture's upload (one frame,
as a capture posts each line it forwards when it is not batching) until the page's socket has the
transcript line. The goal (issue 25): within 0.5 s. Prints the median, p95 and max of N uploads.

    .venv/bin/python bench/capture_live.py [N]        (default 200)
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
import uuid

from harness import App, wait_for

from playground.capture.models import CaptureToken


async def measure(app: App, count: int) -> list[float]:
    server = app.server("captured", __import__("harness").PEER_SDK)
    _token, plain = CaptureToken.issue(app.user, "bench")
    capture = uuid.uuid4().hex
    assert app.http is not None
    headers = {"Authorization": f"Bearer {plain}", "Content-Type": "application/x-ndjson", "Origin": app.base}

    def record(i: int, kind: str, **fields: object) -> str:
        return json.dumps({"capture": capture, "server": server.pk, "i": i, "t": time.time(), "kind": kind, **fields})

    start = app.http.post("/capture/v1/frames", content=record(0, "start", argv=["x"], pid=1, cwd="/"), headers=headers)
    session_id = start.json()["session"]
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="transcript-lines"')
    times = []
    loop = asyncio.get_running_loop()
    for i in range(1, count + 1):
        marker = f"frame-{i:06d}-marker"
        text = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": marker}})
        began = time.perf_counter()
        await loop.run_in_executor(
            None,
            lambda i=i, text=text: app.http.post(
                "/capture/v1/frames", content=record(i, "frame", dir="recv", text=text), headers=headers
            ),
        )
        await wait_for(ws, marker)
        times.append((time.perf_counter() - began) * 1000)
    await ws.close()
    return times


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    app = App()
    app.start()
    try:
        times = asyncio.run(measure(app, count))
    finally:
        app.stop()
    times.sort()
    print(
        f"capture upload → page line, {count} frames: median {statistics.median(times):.1f} ms, "
        f"p95 {times[int(len(times) * 0.95) - 1]:.1f} ms, max {times[-1]:.1f} ms (goal: 500 ms)"
    )


if __name__ == "__main__":
    main()
