"""The worker's flood pipeline in one process, without daphne or a viewer: the flood peer over
stdio -> tap -> client -> notification feed -> batches saved to a SQLite file. For finding where
a flood's time goes (`run.py --only flood` measures the whole path, noisier).

Prints, per round: messages per second until every event is saved, CPU a message of the whole
process and of the event loop's thread alone (the rest is mostly the database thread), how long
the reader was paused waiting for saves, and how long the database thread spent saving and
sat idle between saves.

    .venv/bin/python bench/pipeline.py [COUNT] [ROUNDS]
"""
from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "playground.settings"
os.environ["PLAYGROUND_SQLITE_PATH"] = str(Path(tempfile.mkdtemp(prefix="playground-pipeline-")) / "db.sqlite3")
os.environ["PLAYGROUND_LOG_LEVEL"] = "WARNING"
os.environ.pop("DATABASE_URL", None)

import django  # noqa: E402

django.setup()

from channels.db import database_sync_to_async  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

import playground.asgi  # noqa: E402,F401  (the server's start-up: preloads, gc settings)
from playground.mcp.events import Tap  # noqa: E402
from playground.registry.models import Server  # noqa: E402
from playground.sessions import live, worker as worker_module  # noqa: E402
from playground.transcripts import recorder as recorder_module  # noqa: E402
from playground.transcripts.models import Session  # noqa: E402


class Meter:
    """Reader pauses (loop thread) and saves (database thread), summed per round."""

    def __init__(self) -> None:
        self.reset()
        ready, save = Tap.ready, recorder_module.save_events
        meter = self

        async def timed_ready(tap: Tap) -> None:
            if tap.paused:
                started = time.perf_counter()
                await ready(tap)
                meter.paused += time.perf_counter() - started

        def timed_save(session_id: int, rows: list) -> None:
            started = time.perf_counter()
            if meter.last_end is not None:
                meter.idle += started - meter.last_end
            save(session_id, rows)
            meter.last_end = time.perf_counter()
            meter.saving += meter.last_end - started

        Tap.ready = timed_ready                         # type: ignore[method-assign]
        recorder_module.save_events = timed_save

    def reset(self) -> None:
        self.paused = self.saving = self.idle = 0.0
        self.last_end: float | None = None


def setup() -> tuple[Server, object]:
    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="pipeline")
    server = Server.objects.create(name="flood", owner=user, transport="stdio", command=sys.executable,
                                   args=[str(ROOT / "bench" / "peer_flood.py")])
    return server, user


async def main(server: Server, user: object, count: int, rounds: int) -> None:
    meter = Meter()
    session = await worker_module.start_session(server, user)
    worker = live.WORKERS[session.pk]
    while worker.client is None or not worker.catalogue:
        await asyncio.sleep(0.05)

    def saved() -> int:
        return Session.objects.get(pk=session.pk).event_count

    for _ in range(rounds):
        base = await database_sync_to_async(saved)()
        meter.reset()
        wall, cpu, loop_cpu = time.perf_counter(), time.process_time(), time.thread_time()
        await worker.client.request("tools/call", {"name": "flood", "arguments": {"count": count}})
        while await database_sync_to_async(saved)() < base + count + 2:     # + the request and result
            await asyncio.sleep(0.005)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        loop_cpu = time.thread_time() - loop_cpu
        lint = worker.feature("schema_lint")
        checked = f"   schema lint checked {lint.linter.checked:,} of {lint.linter.seen:,} frames" if lint else ""
        print(f"{count / wall:8.0f} msg/s   cpu {cpu / count * 1e6:5.1f} us/msg (loop thread {loop_cpu / count * 1e6:5.1f})"
              f"   reader paused {meter.paused:.2f} s   saving {meter.saving:.2f} s, idle between saves "
              f"{meter.idle:.2f} s   ({wall:.2f} s){checked}")
    await worker.stop()


if __name__ == "__main__":
    server, user = setup()
    gc.collect()
    asyncio.run(main(server, user, int(sys.argv[1]) if len(sys.argv) > 1 else 20_000,
                     int(sys.argv[2]) if len(sys.argv) > 2 else 3))
