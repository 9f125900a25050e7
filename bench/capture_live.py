"""How long a captured frame takes to reach an open session page: a capture's upload (one frame,
as a capture posts each line it forwards when it is not batching) until the page's socket has the
transcript line. The goal (issue 25): within 0.5 s. Prints the median, p95 and max of N uploads.

    .venv/bin/python bench/capture_live.py [N] [--flood]        (default 200)

--flood: then 100,000 notifications uploaded 1,000 a request, one request after another (a
capture's backlog delivered): the records a second the playground stores.
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


def flood(app: App, total: int = 100_000, per_upload: int = 1_000) -> float:
    """`total` notifications uploaded `per_upload` a request, one after another: records a second."""
    server = app.server("flooded", __import__("harness").PEER_SDK)
    _token, plain = CaptureToken.issue(app.user, "flood")
    capture = uuid.uuid4().hex
    assert app.http is not None
    headers = {"Authorization": f"Bearer {plain}", "Content-Type": "application/x-ndjson", "Origin": app.base}
    text = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
    )
    began = time.perf_counter()
    for start in range(0, total, per_upload):
        lines = [
            json.dumps(
                {
                    "capture": capture,
                    "server": server.pk,
                    "i": i,
                    "t": time.time(),
                    "kind": "frame",
                    "dir": "recv",
                    "text": text,
                }
            )
            for i in range(start, start + per_upload)
        ]
        answer = app.http.post("/capture/v1/frames", content="\n".join(lines) + "\n", headers=headers)
        assert answer.status_code == 200 and answer.json()["acked"] == start + per_upload - 1, answer.text
    return total / (time.perf_counter() - began)


def main() -> None:
    count = int(next((a for a in sys.argv[1:] if a.isdigit()), "200"))
    app = App()
    app.start()
    try:
        times = asyncio.run(measure(app, count))
        rate = flood(app) if "--flood" in sys.argv else None
    finally:
        app.stop()
    if rate is not None:
        print(f"capture flood: 100,000 notifications in uploads of 1,000: {rate:,.0f} records/s stored")
    times.sort()
    print(
        f"capture upload → page line, {count} frames: median {statistics.median(times):.1f} ms, "
        f"p95 {times[int(len(times) * 0.95) - 1]:.1f} ms, max {times[-1]:.1f} ms (goal: 500 ms)"
    )


if __name__ == "__main__":
    main()
