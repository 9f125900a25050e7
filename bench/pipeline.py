"""The worker's flood pipeline in one process, without daphne or a viewer: the flood peer over
stdio -> tap -> client -> notification feed -> batches saved to a SQLite file. For finding where
a flood's time goes (`run.py --only flood` measures the whole path, noisier).

Prints, per round: messages per second until every event is saved, CPU a message of the whole
process and of the event loop's thread alone (the rest is mostly the database thread), how long
the reader was paused waiting for saves, and how long the database thread spent saving and
sat idle between saves.

    .venv/bin/python bench/pipeline.py [COUNT] [ROUNDS] [--postgres] [--share-viewer] [--share-secret]

`--share-viewer` registers a live share viewer with the worker (a channel drained as a share
page's socket would be): the worker then sends every windowed piece of transcript to the share
group too, rendered for the share (without the owner's controls; `--share-secret` gives the
server an env secret, so the share's lines are also masked of it).
"""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "playground.settings"
WORK = Path(tempfile.mkdtemp(prefix="playground-pipeline-"))
os.environ["PLAYGROUND_SQLITE_PATH"] = str(WORK / "db.sqlite3")
os.environ["PLAYGROUND_LOG_LEVEL"] = "WARNING"
os.environ.pop("DATABASE_URL", None)
ARGS = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
POSTGRES = f"playground_pipeline_{os.getpid()}" if "--postgres" in sys.argv else None
if POSTGRES:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{POSTGRES}"')
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{POSTGRES}"

import django

django.setup()

from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.core.management import call_command

import playground.asgi  # noqa: F401  (the server's start-up: preloads, gc settings)
from playground.mcp.events import Tap
from playground.registry.models import Server
from playground.sessions.live import worker as worker_module
from playground.sessions.live import workers
from playground.sessions.protocol import share_group_name
from playground.transcripts import recorder as recorder_module
from playground.transcripts.models import Session
from playground.transcripts.search import catch_up, engine, indexer


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

        Tap.ready = timed_ready  # type: ignore[method-assign]
        recorder_module.save_events = timed_save
        for backend in indexer.ENGINES.values():
            backend.index_pending = self.counted(backend.index_pending)

    def counted(self, index_pending: Callable[..., bool]) -> Callable[..., bool]:
        def counted_index_pending(*args: object) -> bool:
            self.index_chunks += 1
            return index_pending(*args)

        return counted_index_pending

    def reset(self) -> None:
        self.paused = self.saving = self.idle = 0.0
        self.last_end: float | None = None
        self.index_chunks = 0


def setup(secret: bool) -> tuple[Server, object]:
    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="pipeline")
    server = Server.objects.create(
        name="flood",
        owner=user,
        transport="stdio",
        command=sys.executable,
        args=[str(ROOT / "bench" / "peer_flood.py")],
        env={"API_TOKEN": "bench-secret-value-123"} if secret else {},
    )
    return server, user


async def share_viewer(worker: object) -> tuple[asyncio.Task[None], list[int]]:
    """A live share viewer: registered with the worker, its channel drained; counts frames."""
    layer = worker.layer  # type: ignore[attr-defined]
    channel = await layer.new_channel()
    await layer.group_add(share_group_name(worker.session_id), channel)  # type: ignore[attr-defined]
    await worker.handle({"command": "share_join", "reply_channel": channel})  # type: ignore[attr-defined]
    frames = [0]

    async def drain() -> None:
        while True:
            message = await layer.receive(channel)
            frames[0] += len(message.get("frames", ()))

    return asyncio.create_task(drain()), frames


async def main(server: Server, user: object, count: int, rounds: int, viewer: bool) -> None:
    meter = Meter()
    session = await worker_module.start_session(server, user)
    worker = workers.WORKERS[session.pk]
    drained, frames = await share_viewer(worker) if viewer else (None, [0])
    while worker.client is None or not worker.catalogue:
        await asyncio.sleep(0.05)

    def saved() -> int:
        return Session.objects.get(pk=session.pk).event_count

    for _ in range(rounds):
        base = await database_sync_to_async(saved)()
        meter.reset()
        wall, cpu, loop_cpu = time.perf_counter(), time.process_time(), time.thread_time()
        await worker.client.request("tools/call", {"name": "flood", "arguments": {"count": count}})
        while await database_sync_to_async(saved)() < base + count + 2:  # + the request and result
            await asyncio.sleep(0.005)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        loop_cpu = time.thread_time() - loop_cpu
        lint = worker.feature("schema_lint")
        checked = f"   schema lint checked {lint.linter.checked:,} of {lint.linter.seen:,} frames" if lint else ""
        print(
            f"{count / wall:8.0f} msg/s   cpu {cpu / count * 1e6:5.1f} us/msg (loop thread {loop_cpu / count * 1e6:5.1f})"
            f"   reader paused {meter.paused:.2f} s   saving {meter.saving:.2f} s, idle between saves "
            f"{meter.idle:.2f} s   ({wall:.2f} s)   search chunks indexed meanwhile {meter.index_chunks}{checked}"
            + (f"   share frames {frames[0]}" if viewer else "")
        )
    await worker.stop()
    if drained is not None:
        drained.cancel()
    task = indexer.INDEXER.task()
    if task is not None:
        task.cancel()
    events = await database_sync_to_async(lambda: engine().pending())()
    wall, cpu = time.perf_counter(), time.process_time()
    await database_sync_to_async(catch_up)(3600)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"search index afterwards: {events} events in {wall:.2f} s, cpu {cpu / max(events, 1) * 1e6:.1f} us an event")


def drop_database() -> None:
    from django.db import connections

    connections.close_all()
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{POSTGRES}" WITH (FORCE)')


if __name__ == "__main__":
    try:
        server, user = setup("--share-secret" in sys.argv)
        gc.collect()
        asyncio.run(
            main(
                server,
                user,
                int(ARGS[0]) if ARGS else 20_000,
                int(ARGS[1]) if len(ARGS) > 1 else 3,
                "--share-viewer" in sys.argv,
            )
        )
    finally:
        if POSTGRES:
            drop_database()
        shutil.rmtree(WORK, ignore_errors=True)
