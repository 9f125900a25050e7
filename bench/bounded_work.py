#!/usr/bin/env python
"""What an unrelated request sees while a server's structures drive the work issue 30 found
unbounded: GET /login/ back to back from another thread, alone, then while

- sessions of bench/peer_bombs.py connect, each sending six elicitation requests whose schema is
  a doubling allOf chain 26 deep (cards built on the event loop, within budget.ELICITATION);
- share-link viewers download the Model view of its catalogue (Gemini's inlining of five
  doubling chains ending in an enum, within budget.MODEL_VIEW), several at once;
- the owner opens the tool form of a 2^26-merge schema (within budget.FORM).

Prints p50, p99 and max of /login/ in each phase, the work done, and daphne's peak memory.
The goal (issue 30): p99 < 100 ms. A benchmark, not a test: `python bench/bounded_work.py [ROUNDS]`.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import App, peak_mb, reset_peak, wait_for
from hostile_schema import LoginProbe, line, probe

from playground.transcripts.models import Session, ShareLink

PEER = Path(__file__).resolve().parent / "peer_bombs.py"


def during(app: App, work) -> tuple[list[float], float, object]:
    p = LoginProbe(app.base)
    p.start()
    started = time.perf_counter()
    try:
        done = work()
    finally:
        p.stop.set()
        p.join()
    return p.ms, time.perf_counter() - started, done


def elicitations(app: App, rounds: int) -> int:
    async def one() -> None:
        session_id = app.connect(app.server("bench-bombs", PEER))
        ws = await app.socket(session_id)
        for i in range(6):
            await wait_for(ws, f"bomb {i}", timeout=120)
        await ws.close()

    async def all_rounds() -> None:
        for _ in range(rounds):
            await one()

    asyncio.run(all_rounds())
    return rounds * 6


def downloads(app: App, token: str, viewers: int, rounds: int) -> int:
    """`viewers` share viewers at once, each a curl process (the benchmark's own threads would
    take this process's GIL from the probe), `rounds` downloads each."""
    url = f"{app.base}/share/{token}/model-view.json"
    script = f'for i in $(seq {rounds}); do curl -s -o /dev/null -w "%{{size_download}}\\n" {url}; done'
    procs = [subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(viewers)]
    sizes = [int(n) for p in procs for n in p.communicate()[0].split()]
    assert len(sizes) == viewers * rounds
    return max(sizes)


def forms(app: App, session_id: int, rounds: int) -> int:
    assert app.http is not None
    size = 0
    for _ in range(rounds):
        r = app.http.get(f"/sessions/{session_id}/tool/", params={"name": "form"})
        assert r.status_code == 200 and "too large to turn into a form" in r.text, r.status_code
        size = len(r.text)
    return size


def main(rounds: int) -> None:
    app = App()
    app.start()
    try:
        alone = probe(app.base, 3.0)
        print(line("GET /login/ alone", alone))
        reset_peak(app.pid)
        ms, seconds, cards = during(app, lambda: elicitations(app, rounds))
        print(line(f"during {cards} elicitation bombs", ms) + f"   ({seconds:.1f} s)")
        session = Session.objects.filter(server__name="bench-bombs").order_by("-pk").first()
        assert session is not None and session.catalogue
        token = ShareLink.objects.create(session=session, created_by=app.user).token
        ms, seconds, biggest = during(app, lambda: downloads(app, token, 3, rounds))
        print(line(f"during {3 * rounds} model-view.json", ms) + f"   ({seconds:.1f} s, {biggest / 1e6:.1f} MB each)")
        ms, seconds, size = during(app, lambda: forms(app, session.pk, rounds * 5))
        print(line(f"during {rounds * 5} tool forms", ms) + f"   ({seconds:.1f} s, {size} bytes each)")
        print(f"daphne's peak memory over the three: {peak_mb(app.pid):.0f} MB")
    finally:
        app.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
