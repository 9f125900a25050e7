#!/usr/bin/env python
"""`make bench`: the playground measured against the official mcp SDK client and, on the relay and
flood paths, the official MCP Inspector v2 (`bench/inspector.py`), side by side in one run.

Prints a table, writes bench/results.json (stable keys) and bench/RESULTS.md (figures with
the machine's facts and load). `--quick` runs every part with small counts (a smoke run);
`--only relay,flood,...` picks parts. Ratios between the two sides of one run are the
headline: absolute times move with the load of a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

if "--scaleout" in sys.argv:  # (read by harness as it sets Django up: before the import)
    os.environ["PLAYGROUND_BENCH_SCALEOUT"] = "1"

import harness
import inspector as inspector_mod
from harness import App, Floor, call_frame, count_events, wait_for
from inspector import Inspector
from inspector import Session as InspectorSession

# Under a flood a page may be sent a marker for lines it was not sent (the database has them).
SKIPPED = re.compile(r'data-skipped="(\d+)"')
# The end of the big text, or the note where the page cuts a long text (the export has it all).
END = re.compile(r"THE END|cut here: \d+ characters")
PARTS = ("relay", "flood", "sessions", "transcript", "payload")
# The most one part of a --quick run may take (seconds alone: 2-10; beside the suite's other
# workers, several times that).
QUICK_PART_SECONDS = 150


SETTLE = 1.0  # --quick shortens the pauses that let the server settle before a measurement
SAMPLES = ""  # --samples PATH: the relay's per-call times of every arm, in call order (JSON)


async def settle(seconds: float) -> None:
    """A pause before a memory or CPU reading (benchmarks only: nothing here is a test)."""
    await asyncio.sleep(seconds * SETTLE)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# 1. Relay overhead ----------------------------------------------------------------------


async def sdk_client(script: Path, **kw: Any):
    """An official SDK ClientSession on a stdio server (the baseline), as an async context."""
    from contextlib import AsyncExitStack

    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    stack = AsyncExitStack()
    devnull = stack.enter_context(open(os.devnull, "w"))
    read, write = await stack.enter_async_context(
        stdio_client(StdioServerParameters(command=sys.executable, args=[str(script)]), errlog=devnull)
    )
    session = await stack.enter_async_context(ClientSession(read, write, **kw))
    await session.initialize()
    return stack, session


SDK_CLOSE_SECONDS = 20.0


def awaits(task: asyncio.Task[Any]) -> list[str]:
    """Where a task waits, outermost first: its await chain (a task's own stack stops at its
    first frame)."""
    out: list[str] = []
    coro: Any = task.get_coro()
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            out.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno} {frame.f_code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None) or getattr(coro, "gi_yieldfrom", None)
    return out


async def close_sdk(stack: contextlib.AsyncExitStack) -> None:
    """Close an SDK client from `sdk_client`, within SDK_CLOSE_SECONDS.

    Its close hung twice in the quick bench beside the suite (mcp 2.3.0: the session's task
    group did not join until cancelled a second time, from outside; not seen alone in 200
    runs under load). It comes after the measurements, so past the deadline the tasks still
    waiting are printed (what to report upstream), the close is cancelled (the stdio
    transport then stops the server) and the run goes on."""
    loop = asyncio.get_running_loop()
    waiting: list[str] = []
    try:
        async with asyncio.timeout(None) as deadline:

            def expire() -> None:
                waiting.extend(f"{task.get_name()}: {' > '.join(awaits(task))}" for task in asyncio.all_tasks(loop))
                deadline.reschedule(loop.time())

            handle = loop.call_later(SDK_CLOSE_SECONDS, expire)
            try:
                await stack.aclose()
            finally:
                handle.cancel()
    except TimeoutError:
        print(
            f"the SDK client did not close in {SDK_CLOSE_SECONDS:.0f} s (cancelled); its tasks then:\n"
            + "\n".join(waiting),
            file=sys.stderr,
        )


RELAY_BLOCK = 50  # calls an arm makes in turn before the next arm's block (--quick: 10)


async def relay(app: App, calls: int, inspector: Inspector | None, floor: Floor | None = None) -> dict[str, Any]:
    """`calls` sequential tools/call echo on each arm (the SDK client, the playground, the official
    Inspector's web relay, and the floor: daphne and Channels relaying the JSON-RPC text alone,
    `floor_asgi.py`), round-robin in blocks, so the machine's load hits every arm alike."""
    session_id = app.connect(app.server("bench-sdk", harness.PEER_SDK))
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="catalogue"')
    stack, sdk = await sdk_client(harness.PEER_SDK)
    insp = None
    out: dict[str, Any] = {}
    if inspector is not None:
        insp = InspectorSession(inspector)
        await insp.connect(sys.executable, [str(harness.PEER_SDK)])
        out.update(listeners(inspector))  # while its server runs: it listens on loopback only
    floors = {}
    if floor is not None:
        floors = {which: await floor.socket(which) for which in ("daphne", "channels")}
    pg: list[float] = []
    base: list[float] = []
    ins: list[float] = []
    ins_post: list[float] = []
    bare: dict[str, list[float]] = {which: [] for which in floors}
    block = 10 if calls < 10 * RELAY_BLOCK else RELAY_BLOCK

    async def sdk_arm(i: int) -> None:
        t0 = time.perf_counter()
        result = await sdk.call_tool("echo", {"x": f"hello {i}"})
        base.append((time.perf_counter() - t0) * 1000)
        assert result.content[0].text == f"hello {i}"

    async def pg_arm(i: int) -> None:
        t0 = time.perf_counter()
        await ws.send(call_frame("echo", x=f"hello {i}"))
        frame = await wait_for(ws, '<section id="result"')
        pg.append((time.perf_counter() - t0) * 1000)
        assert f"hello {i}<" in frame, frame[:300]

    async def insp_arm(i: int) -> None:
        assert insp is not None
        msg, t_result, t_post = await insp.call("echo", {"x": f"hello {i}"})
        ins.append(t_result * 1000)
        ins_post.append(t_post * 1000)
        assert msg["result"]["content"][0]["text"] == f"hello {i}", msg

    def floor_arm(which: str) -> Any:
        socket = floors[which]

        async def arm(i: int) -> None:
            t0 = time.perf_counter()
            await socket.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1000 + i,
                        "method": "tools/call",
                        "params": {"name": "echo", "arguments": {"x": f"hello {i}"}},
                    }
                )
            )
            answer = json.loads(await socket.recv())
            bare[which].append((time.perf_counter() - t0) * 1000)
            assert answer["id"] == 1000 + i and answer["result"]["content"][0]["text"] == f"hello {i}", answer

        return arm

    arms = [("sdk", sdk_arm, 0), ("playground", pg_arm, app.pid)]
    if insp is not None and inspector is not None:
        arms.append(("inspector", insp_arm, inspector.pid))
    for which in floors:
        assert floor is not None
        arms.append((f"floor_{which}", floor_arm(which), floor.pid))
    cpu = {name: 0.0 for name, _, _ in arms}
    client = {name: 0.0 for name, _, _ in arms}  # this process's CPU in each arm's blocks
    try:
        for warm in range(20 if calls >= 100 else 5):  # every arm warm: imports, caches, JIT, first lookups
            for _, arm, _ in arms:
                await arm(-1 - warm)
        for values in (pg, base, ins, ins_post, *bare.values()):
            values.clear()
        done = 0
        while done < calls:
            n = min(block, calls - done)
            for name, arm, pid in arms:
                cpu_before = harness.cpu_seconds(pid) if pid else 0.0
                client_before = time.process_time()
                for i in range(done, done + n):
                    await arm(i)
                client[name] += time.process_time() - client_before
                if pid:
                    cpu[name] += harness.cpu_seconds(pid) - cpu_before
            done += n
    finally:
        await ws.send(json.dumps({"action": "disconnect"}))
        await ws.close()
        await close_sdk(stack)
        if insp is not None:
            await insp.close()
        for socket in floors.values():
            await socket.close()
    if SAMPLES:
        Path(SAMPLES).write_text(
            json.dumps(
                {
                    "block": block,
                    "sdk": base,
                    "playground": pg,
                    "inspector": ins,
                    "inspector_post": ins_post,
                    **{f"floor_{which}": values for which, values in bare.items()},
                }
            )
            + "\n"
        )
    med_pg, med_sdk = statistics.median(pg), statistics.median(base)
    p95_pg, p95_sdk = pct(pg, 0.95), pct(base, 0.95)
    # Where a call's time goes: the tap's latency of each tools/call (request written -> response
    # read: the server and its pipe) against the websocket client's time for the same call. The
    # rest is the relay: the client's websocket, daphne, Channels, the consumer, the worker and
    # our core on both ways. The SDK client's own share is its time minus the same server time.
    async with asyncio.timeout(30):
        while await asyncio.to_thread(harness.session_status, session_id) not in ("ended", "failed"):
            await asyncio.sleep(0.05)
    server = (await asyncio.to_thread(harness.call_latencies, session_id))[-len(pg) :]
    assert len(server) == len(pg), (len(server), len(pg))
    med_server = statistics.median(server)
    relay_own = statistics.median(total - inner for total, inner in zip(pg, server))
    out.update(
        {
            "relay_server_ms_median": round(med_server, 3),
            "relay_own_ms_median": round(relay_own, 3),
            "sdk_own_ms_median": round(med_sdk - med_server, 3),
            "relay_ratio": round(med_pg / med_sdk, 3),
            "relay_p95_ratio": round(p95_pg / p95_sdk, 3),
            "relay_added_ms_median": round(med_pg - med_sdk, 3),
            "relay_median_ms": round(med_pg, 3),
            "relay_p95_ms": round(p95_pg, 3),
            "sdk_median_ms": round(med_sdk, 3),
            "sdk_p95_ms": round(p95_sdk, 3),
            "relay_calls": calls,
            "relay_block": block,
            "relay_daphne_cpu_ms_per_call": round(cpu["playground"] / calls * 1000, 3),
            # The bench process's CPU a call: the SDK client itself; our websockets client.
            "sdk_client_cpu_ms_per_call": round(client["sdk"] / calls * 1000, 3),
            "relay_client_cpu_ms_per_call": round(client["playground"] / calls * 1000, 3),
        }
    )
    if ins:
        med_ins, p95_ins = statistics.median(ins), pct(ins, 0.95)
        out.update(
            {
                "inspector_median_ms": round(med_ins, 3),
                "inspector_p95_ms": round(p95_ins, 3),
                "inspector_post_median_ms": round(statistics.median(ins_post), 3),
                "relay_vs_inspector_ratio": round(med_pg / med_ins, 3),
                "relay_vs_inspector_p95_ratio": round(p95_pg / p95_ins, 3),
                "inspector_sdk_ratio": round(med_ins / med_sdk, 3),
                "inspector_sdk_p95_ratio": round(p95_ins / p95_sdk, 3),
                # An estimate: the same server's time as our tap measured it on our session.
                "inspector_own_ms_median": round(med_ins - med_server, 3),
                "inspector_node_cpu_ms_per_call": round(cpu["inspector"] / calls * 1000, 3),
                "inspector_client_cpu_ms_per_call": round(client["inspector"] / calls * 1000, 3),
            }
        )
    for which, values in bare.items():
        med, p95 = statistics.median(values), pct(values, 0.95)
        out[f"floor_{which}_median_ms"] = round(med, 3)
        out[f"floor_{which}_p95_ms"] = round(p95, 3)
        out[f"floor_{which}_own_ms_median"] = round(med - med_server, 3)
        out[f"floor_{which}_cpu_ms_per_call"] = round(cpu[f"floor_{which}"] / calls * 1000, 3)
        out[f"relay_vs_floor_{which}_ratio"] = round(med_pg / med, 3)
        if ins:
            out[f"floor_{which}_vs_inspector_ratio"] = round(med / statistics.median(ins), 3)
            out[f"floor_{which}_vs_inspector_p95_ratio"] = round(p95 / pct(ins, 0.95), 3)
    return out


def listeners(inspector: Inspector) -> dict[str, Any]:
    """The Inspector's process tree's listening sockets; any beyond loopback stops the bench."""
    found = inspector.listeners()
    wide = [a for a in found if not inspector_mod.loopback(a)]
    if wide:
        raise RuntimeError(f"the Inspector listens beyond loopback: {wide}")
    return {"inspector_listeners": len(found), "inspector_listen_hosts": sorted({a.rsplit(":", 1)[0] for a in found})}


# 2. Flood ---------------------------------------------------------------------------------


async def flood_sdk(count: int) -> float:
    """The SDK client taking the same flood: messages per second until all were handed over."""
    got = 0
    all_in = asyncio.Event()

    async def on_log(params: Any) -> None:
        nonlocal got
        got += 1
        if got == count:
            all_in.set()

    stack, sdk = await sdk_client(harness.PEER_FLOOD, logging_callback=on_log)
    try:
        t0 = time.perf_counter()
        await sdk.call_tool("flood", {"count": count})
        await asyncio.wait_for(all_in.wait(), 120)
        return count / (time.perf_counter() - t0)
    finally:
        await close_sdk(stack)


async def index_caught_up(timeout: float = 120) -> None:
    """Until daphne has indexed every saved event for search (it starts once a flood's saves
    pause: playground/transcripts/search/indexer.py), so that no round, ours or the Inspector's,
    shares the machine with the previous round's indexing."""
    from playground.transcripts import search

    backend = search.engine()
    if backend is None:
        return
    async with asyncio.timeout(timeout):
        while await asyncio.to_thread(backend.pending):
            await asyncio.sleep(0.05)


async def flood_playground(app: App, server: Any, count: int) -> dict[str, Any]:
    """One flood through the playground to a websocket viewer that keeps up: until every
    notification was delivered (persisted before broadcast) and the result shown."""
    marker = 'data-method="notifications/message"'
    session_id = app.connect(server)
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="catalogue"')
    await settle(0.5)  # let the connect's own events settle before the baseline
    base = harness.rss_mb(app.pid)
    harness.reset_peak(app.pid)
    cpu0 = harness.cpu_seconds(app.pid)
    client0 = time.process_time()
    t0 = time.perf_counter()
    await ws.send(call_frame("flood", count=count))
    delivered, result_seen = 0, False
    try:
        async with asyncio.timeout(180):
            while delivered < count or not result_seen:
                frame = await ws.recv()
                delivered += frame.count(marker) + sum(int(n) for n in SKIPPED.findall(frame))
                result_seen = result_seen or '<section id="result"' in frame
    except TimeoutError:
        pass
    elapsed = time.perf_counter() - t0
    client = time.process_time() - client0
    cpu = harness.cpu_seconds(app.pid) - cpu0
    peak = harness.peak_mb(app.pid) - base
    persisted = await asyncio.to_thread(count_events, session_id, "notifications/message")
    await ws.send(json.dumps({"action": "disconnect"}))
    await ws.close()
    await index_caught_up()  # the search index of the flood, made after it (deferred work)
    indexed = time.perf_counter() - t0 - elapsed
    return {
        "s": elapsed,
        "cpu": cpu,
        "client_cpu": client,
        "peak": peak,
        "delivered": delivered,
        "persisted": persisted,
        "indexed": indexed,
    }


async def flood_inspector(inspector: Inspector, count: int) -> dict[str, Any]:
    """One flood through the official Inspector: its event stream read until the last
    notification and the result arrived (it keeps nothing: no database)."""
    session = InspectorSession(inspector)
    await session.connect(sys.executable, [str(harness.PEER_FLOOD)])
    found = listeners(inspector)
    await settle(0.5)
    base = harness.rss_mb(inspector.pid)
    harness.reset_peak(inspector.pid)
    cpu0 = harness.cpu_seconds(inspector.pid)
    client0 = time.process_time()
    delivered, result_seen = 0, False
    marker = b'"method":"notifications/message"'
    try:
        t0 = time.perf_counter()
        rid = session.send_request("tools/call", {"name": "flood", "arguments": {"count": count}})
        answer = b'"id":%d' % rid
        try:
            async with asyncio.timeout(180):
                while delivered < count or not result_seen:
                    for event in await session.events.batch():
                        if marker in event:
                            delivered += 1
                        elif answer in event:
                            msg = json.loads(event.split(b"data: ", 1)[1])["data"]
                            result_seen = msg.get("id") == rid and "result" in msg
        except TimeoutError:
            pass
        elapsed = time.perf_counter() - t0
        client = time.process_time() - client0
        cpu = harness.cpu_seconds(inspector.pid) - cpu0
        peak = harness.peak_mb(inspector.pid) - base
        if result_seen:
            status, ok = await session.api.answer()
            assert status == 200 and ok.get("ok"), (status, ok)
    finally:
        await session.close()
    return {"s": elapsed, "cpu": cpu, "client_cpu": client, "peak": peak, "delivered": delivered, **found}


async def flood_floor(floor: Floor, count: int, keep: bool) -> float:
    """One flood through the floor (`floor_asgi.py`): every line sent on (keep=False), or every
    line parsed and saved in SQLite, the count sent at the end (keep=True); its time."""
    socket = await floor.socket("flood")
    try:
        await settle(0.2)
        t0 = time.perf_counter()
        await socket.send(json.dumps({"count": count, "keep": keep}))
        lines = 0
        async with asyncio.timeout(180):
            while True:
                frame = await socket.recv()
                if frame.startswith('{"done"'):
                    done = json.loads(frame)
                    break
                lines += 1
        elapsed = time.perf_counter() - t0
        assert (done["kept"] if keep else lines) == count + 1, (done, lines)  # (and the result)
    finally:
        await socket.close()
    return elapsed


async def flood(
    app: App, count: int, inspector: Inspector | None, rounds: int, floor: Floor | None = None
) -> dict[str, Any]:
    """`rounds` floods through the playground, the Inspector and the floor (sent on; kept),
    rotating which goes first, after a warm-up flood of a tenth of the count on each (node's JIT,
    our first batches); medians. Then the stalled viewer and the SDK client, as before."""
    server = app.server("bench-flood", harness.PEER_FLOOD)
    await flood_playground(app, server, max(100, count // 10))
    if inspector is not None:
        await flood_inspector(inspector, max(100, count // 10))
    if floor is not None:
        for keep in (False, True):
            await flood_floor(floor, max(100, count // 10), keep)
    pg: list[dict[str, Any]] = []
    ins: list[dict[str, Any]] = []
    floors: dict[str, list[float]] = {"relay": [], "keep": []}
    arms = ["pg", "ins"] + (["relay", "keep"] if floor is not None else [])
    for r in range(rounds):
        order = arms[r % len(arms) :] + arms[: r % len(arms)]
        for arm in order:
            await index_caught_up()
            if arm == "pg":
                pg.append(await flood_playground(app, server, count))
            elif arm == "ins" and inspector is not None:
                ins.append(await flood_inspector(inspector, count))
            elif arm in floors and floor is not None:
                floors[arm].append(await flood_floor(floor, count, keep=arm == "keep"))
    elapsed = statistics.median(r["s"] for r in pg)
    delivered = min(r["delivered"] for r in pg)
    persisted = min(r["persisted"] for r in pg)
    out: dict[str, Any] = {
        "flood_msgs_per_s": round(count / elapsed),
        "flood_lost": count - min(delivered, persisted),
        "flood_delivered": delivered,
        "flood_persisted": persisted,
        "flood_s": round(elapsed, 3),
        "flood_daphne_cpu_percent": round(statistics.median(r["cpu"] / r["s"] for r in pg) * 100),
        "flood_client_cpu_percent": round(statistics.median(r["client_cpu"] / r["s"] for r in pg) * 100),
        "flood_peak_mb": round(max(r["peak"] for r in pg), 1),
        "flood_rounds": rounds,
        "flood_indexed_after_s": round(statistics.median(r["indexed"] for r in pg), 3),
        "flood_s_rounds": [round(r["s"], 3) for r in pg],
    }
    if ins:
        ins_s = statistics.median(r["s"] for r in ins)
        out.update(
            {
                "inspector_flood_s": round(ins_s, 3),
                "inspector_flood_msgs_per_s": round(count / ins_s),
                "inspector_flood_lost": count - min(r["delivered"] for r in ins),
                "inspector_flood_node_cpu_percent": round(statistics.median(r["cpu"] / r["s"] for r in ins) * 100),
                "inspector_flood_client_cpu_percent": round(
                    statistics.median(r["client_cpu"] / r["s"] for r in ins) * 100
                ),
                "inspector_flood_peak_mb": round(max(r["peak"] for r in ins), 1),
                "inspector_flood_s_rounds": [round(r["s"], 3) for r in ins],
                "flood_vs_inspector_ratio": round(elapsed / ins_s, 3),
                "inspector_listeners": max(r["inspector_listeners"] for r in ins),
                "inspector_listen_hosts": sorted({h for r in ins for h in r["inspector_listen_hosts"]}),
            }
        )
    for arm, times in floors.items():
        if times:
            floor_s = statistics.median(times)
            out[f"floor_flood_{arm}_s"] = round(floor_s, 3)
            out[f"flood_vs_floor_{arm}_ratio"] = round(elapsed / floor_s, 3)
            if ins:
                out[f"floor_flood_{arm}_vs_inspector_ratio"] = round(
                    floor_s / statistics.median(r["s"] for r in ins), 3
                )

    # The same flood with a viewer that stops reading: the server must not queue it all up.
    await index_caught_up()
    session_id = app.connect(server)
    slow = await app.socket(session_id, max_queue=1, close_timeout=0.5)  # a stalled client: no clean close
    await wait_for(slow, 'id="catalogue"')
    await settle(0.5)
    slow_base = harness.rss_mb(app.pid)
    harness.reset_peak(app.pid)
    t1 = time.perf_counter()
    await slow.send(call_frame("flood", count=count))
    async with asyncio.timeout(180):  # not reading: wait for the database to have it all
        while await asyncio.to_thread(count_events, session_id, "notifications/message") < count:
            await asyncio.sleep(0.05)
    slow_persist_s = time.perf_counter() - t1
    await settle(1.0)  # what the server would queue for this viewer, it has queued now
    slow_peak = harness.peak_mb(app.pid) - slow_base
    await slow.send(json.dumps({"action": "disconnect"}))
    await slow.close()
    sdk_rate = await flood_sdk(count)
    out.update(
        {
            "flood_slow_viewer_peak_mb": round(slow_peak, 1),
            "flood_slow_viewer_persist_s": round(slow_persist_s, 3),
            "flood_persist_msgs_per_s": round(count / slow_persist_s),
            "sdk_flood_msgs_per_s": round(sdk_rate),
            "flood_count": count,
        }
    )
    return out


# 3. Many idle sessions --------------------------------------------------------------------


async def sessions(app: App, count: int, idle_seconds: float) -> dict[str, Any]:
    server = app.server("bench-idle", harness.PEER_FLOOD)
    await settle(0.5)
    before = harness.rss_mb(app.pid)
    ids = [app.connect(server) for _ in range(count)]
    async with asyncio.timeout(120):
        while True:
            statuses = await asyncio.to_thread(
                lambda: list(harness.Session.objects.filter(pk__in=ids).values_list("status", flat=True))
            )
            if all(s == "connected" for s in statuses):
                break
            await asyncio.sleep(0.1)
    await settle(2.0)  # catalogues saved, transcripts flushed
    after = harness.rss_mb(app.pid)
    cpu0, t0 = harness.cpu_seconds(app.pid), time.monotonic()
    await asyncio.sleep(idle_seconds)
    cpu = (harness.cpu_seconds(app.pid) - cpu0) / (time.monotonic() - t0) * 100
    for sid in ids:
        ws = await app.socket(sid)
        await ws.send(json.dumps({"action": "disconnect"}))
        await ws.close()
    return {
        "session_mb": round((after - before) / count, 2),
        "idle_cpu_percent": round(cpu, 2),
        "sessions_count": count,
    }


# 4. Big transcript ------------------------------------------------------------------------


def seed_transcript(app: App, events: int) -> tuple[int, str]:
    from playground.transcripts.models import Session, ShareLink
    from playground.transcripts.recorder import save_events

    session = Session.objects.create(server_name="bench-big", owner=app.user, status="ended", transport="stdio")
    rows = []
    for seq in range(1, events + 1):
        if seq % 2:
            msg = {
                "jsonrpc": "2.0",
                "id": seq,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"x": f"hello {seq} <b>&"}},
            }
            row = {"seq": seq, "t": seq / 1000, "dir": "send", "message": msg}
        else:
            msg = {
                "jsonrpc": "2.0",
                "id": seq - 1,
                "result": {"content": [{"type": "text", "text": f"hello {seq - 1} <b>&"}], "isError": False},
            }
            row = {"seq": seq, "t": seq / 1000, "dir": "recv", "message": msg, "reply_to": seq - 1, "latency_ms": 1.2}
        row["raw"] = json.dumps(msg)
        row["size"] = len(row["raw"])
        rows.append(row)
        if len(rows) == 5000:
            save_events(session.pk, rows)
            rows = []
    if rows:
        save_events(session.pk, rows)
    return session.pk, ShareLink.objects.create(session=session).token


def ttfb(app: App, path: str) -> tuple[float, float, int]:
    """Time to the first body byte, total time and size of GET `path` (streamed)."""
    assert app.http is not None
    t0 = time.perf_counter()
    first, size = None, 0
    with app.http.stream("GET", path) as r:
        assert r.status_code == 200, r.status_code
        for chunk in r.iter_raw():
            if first is None:
                first = time.perf_counter() - t0
            size += len(chunk)
    return (first or 0) * 1000, (time.perf_counter() - t0) * 1000, size


async def transcript(app: App, events: int) -> dict[str, Any]:
    session_id, token = await asyncio.to_thread(seed_transcript, app, events)
    await asyncio.to_thread(ttfb, app, f"/share/{token}/")  # warm the templates
    share = [await asyncio.to_thread(ttfb, app, f"/share/{token}/") for _ in range(5)]
    harness.reset_peak(app.pid)
    base = harness.rss_mb(app.pid)
    export = [await asyncio.to_thread(ttfb, app, f"/sessions/{session_id}/export.jsonl") for _ in range(3)]
    export_peak = harness.peak_mb(app.pid) - base
    return {
        "transcript_ttfb_ms": round(statistics.median(s[0] for s in share), 1),
        "export_ttfb_ms": round(statistics.median(e[0] for e in export), 1),
        "export_total_ms": round(statistics.median(e[1] for e in export), 1),
        "export_mb": round(export[0][2] / 1e6, 1),
        "export_peak_mb": round(export_peak, 1),
        "transcript_events": events,
    }


# 5. Large payload -------------------------------------------------------------------------


async def payload(app: App, megabytes: float, browser: bool) -> dict[str, Any]:
    session_id = app.connect(app.server("bench-sdk", harness.PEER_SDK))
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="catalogue"')
    t0 = time.perf_counter()
    await ws.send(call_frame("big", megabytes=megabytes))
    frames = [await wait_for(ws, '<section id="result"', timeout=120)]
    while not END.search(frames[-1]):  # the last piece of the text (or where the page cuts it)
        frames.append(await wait_for(ws, 'hx-swap-oob="beforeend"', timeout=120))
    relay_s = time.perf_counter() - t0
    out: dict[str, Any] = {
        "large_payload_s": round(relay_s, 3),
        "large_payload_frames": len(frames),
        "payload_mb": megabytes,
    }
    stack, sdk = await sdk_client(harness.PEER_SDK)
    try:
        t0 = time.perf_counter()
        await sdk.call_tool("big", {"megabytes": megabytes})
        out["sdk_large_payload_s"] = round(time.perf_counter() - t0, 3)
    finally:
        await close_sdk(stack)
    await ws.send(json.dumps({"action": "disconnect"}))
    await ws.close()
    if browser and Path("/usr/bin/chromium").exists():
        fresh = app.connect(app.server("bench-sdk", harness.PEER_SDK))
        out.update(await asyncio.to_thread(payload_in_browser, app, fresh, megabytes))
        ws = await app.socket(fresh)
        await ws.send(json.dumps({"action": "disconnect"}))
        await ws.close()
    return out


def payload_in_browser(app: App, session_id: int, megabytes: float) -> dict[str, Any]:
    """Chromium: call `big` from the form; time until the Result region shows it; then a click
    on "Following" must be handled promptly (the page is not frozen)."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = browser.new_context()
            context.add_cookies([{"name": k, "value": v, "url": app.base} for k, v in app.http.cookies.items()])
            page = context.new_page()
            page.goto(f"{app.base}/sessions/{session_id}/")
            page.locator("#catalogue").get_by_role("button", name="big", exact=True).click()
            form = page.locator("#workspace form#tool-form")
            expect(form).to_have_attribute("data-tool", "big")
            form.get_by_label("megabytes").fill(str(megabytes))
            result = page.get_by_role("region", name="Result")
            t0 = time.perf_counter()
            try:
                form.get_by_role("button", name="Call tool").click()
                expect(result.locator("#result-text-0-more")).to_contain_text(END, timeout=120_000)
            except Exception:
                page.screenshot(path=str(harness.TMP / "payload-failure.png"))
                raise
            shown = time.perf_counter() - t0
            follow = page.locator("[data-follow]")
            before = follow.get_attribute("aria-pressed")
            t1 = time.perf_counter()
            follow.click()
            expect(follow).not_to_have_attribute("aria-pressed", before or "", timeout=30_000)
            click_ms = (time.perf_counter() - t1) * 1000
            return {"large_payload_browser_s": round(shown, 3), "large_payload_click_ms": round(click_ms, 1)}
        finally:
            browser.close()


# Report -----------------------------------------------------------------------------------


def speed_index() -> float:
    """Microseconds for a fixed pure-Python loop (best of 5): how fast this shared machine ran at
    the time. The same code read ~3x slower at some hours; compare runs by ratios, or by this."""
    import timeit

    return round(min(timeit.repeat("sum(range(10000))", number=200, repeat=5)) / 200 * 1e6, 1)


def machine() -> dict[str, Any]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=harness.ROOT, capture_output=True, text=True
    ).stdout.strip()
    from importlib.metadata import version

    import channels
    import daphne
    import django

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem, 1),
        "speed_index_us": speed_index(),
        "python": platform.python_version(),
        "django": django.get_version(),
        "channels": channels.__version__,
        "daphne": daphne.__version__,
        "mcp": version("mcp"),
        "commit": commit,
        "load_before": os.getloadavg(),
    }


ROWS = [  # key, label, target (text), unit
    ("relay_median_ms", "relay: playground median", "", "ms"),
    ("sdk_median_ms", "relay: SDK client median", "", "ms"),
    ("relay_ratio", "relay: ratio at the median", "<= 1.1", "x"),
    ("relay_p95_ms", "relay: playground p95", "", "ms"),
    ("sdk_p95_ms", "relay: SDK client p95", "", "ms"),
    ("relay_p95_ratio", "relay: ratio at p95", "<= 1.1", "x"),
    ("relay_added_ms_median", "relay: added at the median", "", "ms"),
    ("inspector_median_ms", "relay: official Inspector median", "", "ms"),
    ("inspector_p95_ms", "relay: official Inspector p95", "", "ms"),
    ("relay_vs_inspector_ratio", "relay: playground / Inspector at the median", "<= 1.0", "x"),
    ("relay_vs_inspector_p95_ratio", "relay: playground / Inspector at p95", "<= 1.2", "x"),
    ("inspector_sdk_ratio", "relay: Inspector / SDK client at the median", "", "x"),
    ("inspector_sdk_p95_ratio", "relay: Inspector / SDK client at p95", "", "x"),
    ("inspector_post_median_ms", "relay: Inspector, its POST /api/mcp/send answered (median)", "", "ms"),
    ("relay_daphne_cpu_ms_per_call", "relay: daphne CPU per call", "", "ms"),
    ("inspector_node_cpu_ms_per_call", "relay: the Inspector's node CPU per call", "", "ms"),
    ("sdk_client_cpu_ms_per_call", "relay: the SDK client's CPU per call", "", "ms"),
    ("relay_client_cpu_ms_per_call", "relay: the bench's websocket client's CPU per call (playground arm)", "", "ms"),
    ("inspector_client_cpu_ms_per_call", "relay: the bench's HTTP+SSE client's CPU per call (Inspector arm)", "", "ms"),
    ("relay_server_ms_median", "relay: the server (request written -> response read)", "", "ms"),
    ("relay_own_ms_median", "relay: the playground's own share of a call", "", "ms"),
    ("sdk_own_ms_median", "relay: the SDK client's own share (median minus the server's)", "", "ms"),
    (
        "inspector_own_ms_median",
        "relay: the Inspector's own share (median minus the server's, as our tap saw it)",
        "",
        "ms",
    ),
    ("floor_daphne_median_ms", "relay floor: daphne alone relaying the JSON-RPC text (median)", "", "ms"),
    ("floor_daphne_vs_inspector_ratio", "relay floor: daphne alone / Inspector at the median", "", "x"),
    ("floor_daphne_vs_inspector_p95_ratio", "relay floor: daphne alone / Inspector at p95", "", "x"),
    ("floor_channels_median_ms", "relay floor: daphne + a Channels consumer (median)", "", "ms"),
    ("floor_channels_vs_inspector_ratio", "relay floor: daphne + Channels / Inspector at the median", "", "x"),
    ("floor_channels_vs_inspector_p95_ratio", "relay floor: daphne + Channels / Inspector at p95", "", "x"),
    ("relay_vs_floor_channels_ratio", "relay: playground / its floor (daphne + Channels) at the median", "", "x"),
    ("floor_channels_own_ms_median", "relay floor: daphne + Channels' own share (median minus the server's)", "", "ms"),
    ("floor_daphne_cpu_ms_per_call", "relay floor: daphne alone, CPU per call", "", "ms"),
    ("floor_channels_cpu_ms_per_call", "relay floor: daphne + Channels, CPU per call", "", "ms"),
    ("flood_msgs_per_s", "flood: persisted + delivered", ">= 35000", "msg/s"),
    ("flood_s", "flood: playground, to the last notification and the result (median)", "", "s"),
    ("inspector_flood_s", "flood: official Inspector, to the last notification and the result (median)", "", "s"),
    ("flood_vs_inspector_ratio", "flood: playground / Inspector time", "<= 0.67", "x"),
    ("inspector_flood_msgs_per_s", "flood: official Inspector (event stream, nothing kept)", "", "msg/s"),
    ("floor_flood_relay_s", "flood floor: daphne + Channels sending every line on (median)", "", "s"),
    ("floor_flood_relay_vs_inspector_ratio", "flood floor: sending every line on / Inspector", "", "x"),
    ("floor_flood_keep_s", "flood floor: daphne + Channels parsing and saving every line (median)", "", "s"),
    ("floor_flood_keep_vs_inspector_ratio", "flood floor: parsing and saving every line / Inspector", "", "x"),
    ("flood_vs_floor_keep_ratio", "flood: playground / its floor (parsing and saving every line)", "", "x"),
    ("flood_indexed_after_s", "flood: playground, its search index done after the flood (median)", "", "s"),
    ("flood_persist_msgs_per_s", "flood: persisted (viewer stalled)", "", "msg/s"),
    ("sdk_flood_msgs_per_s", "flood: SDK client", "", "msg/s"),
    ("flood_daphne_cpu_percent", "flood: daphne CPU while flooding", "", "%"),
    ("inspector_flood_node_cpu_percent", "flood: the Inspector's node CPU while flooding", "", "%"),
    ("flood_client_cpu_percent", "flood: the bench client's CPU, playground arm", "", "%"),
    ("inspector_flood_client_cpu_percent", "flood: the bench client's CPU, Inspector arm", "", "%"),
    ("flood_lost", "flood: lost", "0", ""),
    ("inspector_flood_lost", "flood: lost by the Inspector", "0", ""),
    ("flood_peak_mb", "flood: memory growth", "< 20", "MB"),
    ("inspector_flood_peak_mb", "flood: the Inspector's memory growth (node)", "", "MB"),
    ("flood_slow_viewer_peak_mb", "flood: memory growth, stalled viewer", "< 20, flat", "MB"),
    ("session_mb", "100 idle sessions: memory each", "< 5", "MB"),
    ("idle_cpu_percent", "100 idle sessions: CPU", "~0", "%"),
    ("transcript_ttfb_ms", "50k events: share page TTFB", "< 300", "ms"),
    ("export_ttfb_ms", "50k events: JSONL export TTFB", "", "ms"),
    ("export_total_ms", "50k events: JSONL export total", "", "ms"),
    ("export_peak_mb", "50k events: export memory growth", "", "MB"),
    ("large_payload_s", "10 MB result: relayed to the Result fragment", "", "s"),
    ("sdk_large_payload_s", "10 MB result: SDK client", "", "s"),
    ("large_payload_browser_s", "10 MB result: shown in Chromium", "", "s"),
    ("large_payload_click_ms", "10 MB result: a click handled after", "", "ms"),
]


def table(results: dict[str, Any]) -> str:
    lines = ["| measure | value | target |", "| --- | --- | --- |"]
    for key, label, target, unit in ROWS:
        if key in results:
            lines.append(f"| {label} | {results[key]} {unit} | {target} |")
    return "\n".join(lines)


def write_report(results: dict[str, Any], facts: dict[str, Any], quick: bool) -> None:
    out = harness.BENCH
    (out / "results.json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    facts_md = "\n".join(f"- {k}: {v}" for k, v in facts.items())
    (out / "RESULTS.md").write_text(f"""# Benchmark results{" (quick run: small counts)" if quick else ""}

Measured by `make bench` (`bench/run.py`) on {time.strftime("%Y-%m-%d %H:%M %Z")}. Ratios between the
arms of one run (the playground, the SDK client, the official Inspector) are the headline; absolute
times move with the machine's load (other sessions run tests on this 2-core machine at the same
time: see the load averages).

{table(results)}

What the profiles showed and what changed: `bench/README.md`.

## Machine

{facts_md}

## How

- Relay: {results.get("relay_calls", "?")} sequential `tools/call echo` through a `websockets` client →
  SessionConsumer → SessionWorker → the official SDK's MCPServer over stdio (`bench/peer_sdk.py`) and back,
  until the Result fragment arrives; against the SDK's own `ClientSession` calling the same server
  directly, and the official Inspector {facts.get("inspector", "")} (`mcp-inspector --web` on 127.0.0.1) driven as
  its page drives it (`bench/inspector.py`: `POST /api/mcp/send`, the response read from its
  `/api/mcp/events` SSE stream). The arms take turns in blocks of {results.get("relay_block", "?")} calls, after 20
  warm-up calls each.
- Flood: `bench/peer_flood.py` (hand-written, writes pre-built lines as fast as the pipe takes them)
  sends {results.get("flood_count", "?")} `notifications/message`; timed until every one was delivered
  to a websocket viewer (persisted before broadcast; the count in the database is checked), and
  through the official Inspector until its event stream brought the last one and the result; the
  two alternate, {results.get("flood_rounds", "?")} rounds each after a warm-up flood of a tenth, medians.
  Memory growth is daphne's (or node's) peak RSS (VmHWM, reset before) minus its RSS before. The stalled viewer
  stops reading while the same flood runs.
- Sessions: {results.get("sessions_count", "?")} stdio sessions to `peer_flood.py`, daphne's RSS before and
  after (the servers are separate processes), then daphne's CPU over an idle window.
- Transcript: {results.get("transcript_events", "?")} events seeded through the worker's `save_events`;
  share page and JSONL export timed to their first body byte (median of 5 and 3).
- Large payload: a {results.get("payload_mb", "?")} MB text result, relayed to the Result fragment; in
  Chromium, from the click on "Call tool" until the Result region shows the text, then a click on
  "Following" timed until handled.
""")


@contextlib.contextmanager
def profiled(app: App, part: str, folder: str):
    """With --profile DIR: py-spy samples daphne during the part (collapsed stacks in DIR/part.txt)."""
    if not folder:
        yield
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    spy = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "py-spy"),
            "record",
            "--format",
            "raw",
            "--rate",
            "500",
            "-o",
            str(Path(folder) / f"{part}.txt"),
            "-p",
            str(app.pid),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(30)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    global SETTLE, SAMPLES
    SAMPLES = args.samples
    quick = args.quick
    SETTLE = 0.2 if quick else 1.0
    parts = args.only.split(",") if args.only else list(PARTS)
    facts = machine()
    app = App()
    app.start()
    results: dict[str, Any] = {}
    inspector = None
    floor = Floor() if {"relay", "flood"} & set(parts) else None
    if not args.no_inspector and {"relay", "flood"} & set(parts):
        inspector = Inspector(harness.TMP, profile=args.profile)
        facts.update(inspector=inspector_mod.version(), node=inspector_mod.node_version())
    runs = {
        "relay": lambda: relay(app, 30 if quick else 1000, inspector, floor),
        "flood": lambda: flood(app, 2000 if quick else 20_000, inspector, 1 if quick else 5, floor),
        "transcript": lambda: transcript(app, 2000 if quick else 50_000),
        "payload": lambda: payload(app, 1.0 if quick else 10.0, browser=not quick and not args.no_browser),
        "sessions": lambda: sessions(app, 5 if quick else 100, 0.3 if quick else 10.0),
    }
    try:
        if inspector is not None:
            inspector.start()
        if floor is not None:
            floor.start()
        for part in PARTS:
            if part in parts:
                started = time.perf_counter()
                # A quick run (tests/bench/test_smoke.py) fails with where a part waited, not
                # killed from outside without a word.
                async with asyncio.timeout(QUICK_PART_SECONDS if quick else None):
                    with profiled(app, part, args.profile):
                        results.update(await runs[part]())
                print(f"{part}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    except BaseException:
        print(
            f"bench failed; daphne's and the Inspector's logs and any screenshot are in {harness.TMP}", file=sys.stderr
        )
        raise
    finally:
        app.stop()
        if floor is not None:
            floor.stop()
        harness.drop_scaleout()
        if inspector is not None:
            # Its process group stopped and every process of its tree seen during the run gone.
            results["inspector_stopped"] = inspector.stop()
    if inspector is not None and not results["inspector_stopped"]:
        raise RuntimeError("the Inspector's process tree did not stop")
    shutil.rmtree(harness.TMP, ignore_errors=True)
    facts["load_after"] = os.getloadavg()
    facts["speed_index_us_after"] = speed_index()
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    if not args.no_write:
        write_report(results, facts, quick)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--only", default="", help=f"comma-separated parts of {','.join(PARTS)}")
    parser.add_argument("--no-browser", action="store_true", help="skip the Chromium part")
    parser.add_argument(
        "--no-inspector",
        action="store_true",
        help="relay and flood without the official Inspector's arm (it needs Node >= 22.19)",
    )
    parser.add_argument("--profile", default="", metavar="DIR", help="py-spy daphne per part into DIR (needs py-spy)")
    parser.add_argument(
        "--scaleout",
        action="store_true",
        help="daphne on PostgreSQL and Redis (127.0.0.1:5432 and :6379, as CI has): a database of its own, dropped after",
    )
    parser.add_argument("--no-write", action="store_true", help="print only; keep results.json/RESULTS.md")
    parser.add_argument("--json", default="", metavar="PATH", help="also write the figures to PATH")
    parser.add_argument(
        "--samples", default="", metavar="PATH", help="write the relay's per-call times of every arm to PATH (JSON)"
    )
    asyncio.run(main(parser.parse_args()))
