#!/usr/bin/env python
"""`make bench`: the playground measured against the official mcp SDK client, side by side.

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

import harness  # noqa: E402  (sets Django up on a temporary database)
from harness import App, call_frame, count_events, wait_for  # noqa: E402

# Under a flood a page may be sent a marker for lines it was not sent (the database has them).
SKIPPED = re.compile(r'data-skipped="(\d+)"')
# The end of the big text, or the note where the page cuts a long text (the export has it all).
END = re.compile(r"THE END|cut here: \d+ characters")
PARTS = ("relay", "flood", "sessions", "transcript", "payload")


SETTLE = 1.0      # --quick shortens the pauses that let the server settle before a measurement


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
        stdio_client(StdioServerParameters(command=sys.executable, args=[str(script)]), errlog=devnull))
    session = await stack.enter_async_context(ClientSession(read, write, **kw))
    await session.initialize()
    return stack, session


async def relay(app: App, calls: int) -> dict[str, Any]:
    """`calls` sequential tools/call echo, in alternating blocks on the two sides (load hits both)."""
    session_id = app.connect(app.server("bench-sdk", harness.PEER_SDK))
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="catalogue"')
    stack, sdk = await sdk_client(harness.PEER_SDK)
    pg: list[float] = []
    base: list[float] = []
    block = max(10, calls // 10)
    try:
        for warm in range(20):   # both sides warm: imports, caches, first catalogue lookups
            await sdk.call_tool("echo", {"x": f"warm {warm}"})
            await ws.send(call_frame("echo", x=f"warm {warm}"))
            await wait_for(ws, '<section id="result"')
        done = 0
        spent = 0.0
        while done < calls:
            n = min(block, calls - done)
            for i in range(done, done + n):
                t0 = time.perf_counter()
                result = await sdk.call_tool("echo", {"x": f"hello {i}"})
                base.append((time.perf_counter() - t0) * 1000)
                assert result.content[0].text == f"hello {i}"
            cpu_before = harness.cpu_seconds(app.pid)
            for i in range(done, done + n):
                t0 = time.perf_counter()
                await ws.send(call_frame("echo", x=f"hello {i}"))
                frame = await wait_for(ws, '<section id="result"')
                pg.append((time.perf_counter() - t0) * 1000)
                assert f"hello {i}<" in frame, frame[:300]
            spent += harness.cpu_seconds(app.pid) - cpu_before
            done += n
    finally:
        await ws.send(json.dumps({"action": "disconnect"}))
        await ws.close()
        await stack.aclose()
    med_pg, med_sdk = statistics.median(pg), statistics.median(base)
    p95_pg, p95_sdk = pct(pg, 0.95), pct(base, 0.95)
    # Where a call's time goes: the tap's latency of each tools/call (request written -> response
    # read: the server and its pipe) against the websocket client's time for the same call. The
    # rest is the relay: the client's websocket, daphne, Channels, the consumer, the worker and
    # our core on both ways. The SDK client's own share is its time minus the same server time.
    async with asyncio.timeout(30):
        while await asyncio.to_thread(harness.session_status, session_id) not in ("ended", "failed"):
            await asyncio.sleep(0.05)
    server = (await asyncio.to_thread(harness.call_latencies, session_id))[-len(pg):]
    assert len(server) == len(pg), (len(server), len(pg))
    med_server = statistics.median(server)
    relay_own = statistics.median(total - inner for total, inner in zip(pg, server))
    return {"relay_server_ms_median": round(med_server, 3), "relay_own_ms_median": round(relay_own, 3),
            "sdk_own_ms_median": round(med_sdk - med_server, 3),
            "relay_ratio": round(med_pg / med_sdk, 3), "relay_p95_ratio": round(p95_pg / p95_sdk, 3),
            "relay_added_ms_median": round(med_pg - med_sdk, 3), "relay_median_ms": round(med_pg, 3),
            "relay_p95_ms": round(p95_pg, 3), "sdk_median_ms": round(med_sdk, 3), "sdk_p95_ms": round(p95_sdk, 3),
            "relay_calls": calls, "relay_daphne_cpu_ms_per_call": round(spent / calls * 1000, 3)}


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
        await stack.aclose()


async def flood(app: App, count: int) -> dict[str, Any]:
    marker = 'data-method="notifications/message"'
    server = app.server("bench-flood", harness.PEER_FLOOD)
    session_id = app.connect(server)
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="catalogue"')
    await settle(0.5)                           # let the connect's own events settle before the baseline
    base = harness.rss_mb(app.pid)
    harness.reset_peak(app.pid)
    cpu0 = harness.cpu_seconds(app.pid)
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
    cpu = harness.cpu_seconds(app.pid) - cpu0
    peak = harness.peak_mb(app.pid) - base
    persisted = await asyncio.to_thread(count_events, session_id, "notifications/message")
    await ws.send(json.dumps({"action": "disconnect"}))
    await ws.close()

    # The same flood with a viewer that stops reading: the server must not queue it all up.
    session_id = app.connect(server)
    slow = await app.socket(session_id, max_queue=1, close_timeout=0.5)   # a stalled client: no clean close
    await wait_for(slow, 'id="catalogue"')
    await settle(0.5)
    slow_base = harness.rss_mb(app.pid)
    harness.reset_peak(app.pid)
    t1 = time.perf_counter()
    await slow.send(call_frame("flood", count=count))
    async with asyncio.timeout(180):        # not reading: wait for the database to have it all
        while await asyncio.to_thread(count_events, session_id, "notifications/message") < count:
            await asyncio.sleep(0.05)
    slow_persist_s = time.perf_counter() - t1
    await settle(1.0)                       # what the server would queue for this viewer, it has queued now
    slow_peak = harness.peak_mb(app.pid) - slow_base
    await slow.send(json.dumps({"action": "disconnect"}))
    await slow.close()
    sdk_rate = await flood_sdk(count)
    return {"flood_msgs_per_s": round(count / elapsed), "flood_lost": count - min(delivered, persisted),
            "flood_delivered": delivered, "flood_persisted": persisted, "flood_s": round(elapsed, 3),
            "flood_daphne_cpu_percent": round(cpu / elapsed * 100),
            "flood_peak_mb": round(peak, 1), "flood_slow_viewer_peak_mb": round(slow_peak, 1),
            "flood_slow_viewer_persist_s": round(slow_persist_s, 3),
            "flood_persist_msgs_per_s": round(count / slow_persist_s),
            "sdk_flood_msgs_per_s": round(sdk_rate), "flood_count": count}


# 3. Many idle sessions --------------------------------------------------------------------

async def sessions(app: App, count: int, idle_seconds: float) -> dict[str, Any]:
    server = app.server("bench-idle", harness.PEER_FLOOD)
    await settle(0.5)
    before = harness.rss_mb(app.pid)
    ids = [app.connect(server) for _ in range(count)]
    async with asyncio.timeout(120):
        while True:
            statuses = await asyncio.to_thread(
                lambda: list(harness.Session.objects.filter(pk__in=ids).values_list("status", flat=True)))
            if all(s == "connected" for s in statuses):
                break
            await asyncio.sleep(0.1)
    await settle(2.0)                           # catalogues saved, transcripts flushed
    after = harness.rss_mb(app.pid)
    cpu0, t0 = harness.cpu_seconds(app.pid), time.monotonic()
    await asyncio.sleep(idle_seconds)
    cpu = (harness.cpu_seconds(app.pid) - cpu0) / (time.monotonic() - t0) * 100
    for sid in ids:
        ws = await app.socket(sid)
        await ws.send(json.dumps({"action": "disconnect"}))
        await ws.close()
    return {"session_mb": round((after - before) / count, 2), "idle_cpu_percent": round(cpu, 2),
            "sessions_count": count}


# 4. Big transcript ------------------------------------------------------------------------

def seed_transcript(app: App, events: int) -> tuple[int, str]:
    from playground.transcripts.recorder import save_events
    from playground.transcripts.models import Session, ShareLink

    session = Session.objects.create(server_name="bench-big", owner=app.user, status="ended", transport="stdio")
    rows = []
    for seq in range(1, events + 1):
        if seq % 2:
            msg = {"jsonrpc": "2.0", "id": seq, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"x": f"hello {seq} <b>&"}}}
            row = {"seq": seq, "t": seq / 1000, "dir": "send", "message": msg}
        else:
            msg = {"jsonrpc": "2.0", "id": seq - 1,
                   "result": {"content": [{"type": "text", "text": f"hello {seq - 1} <b>&"}], "isError": False}}
            row = {"seq": seq, "t": seq / 1000, "dir": "recv", "message": msg, "reply_to": seq - 1,
                   "latency_ms": 1.2}
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
    await asyncio.to_thread(ttfb, app, f"/share/{token}/")         # warm the templates
    share = [await asyncio.to_thread(ttfb, app, f"/share/{token}/") for _ in range(5)]
    harness.reset_peak(app.pid)
    base = harness.rss_mb(app.pid)
    export = [await asyncio.to_thread(ttfb, app, f"/sessions/{session_id}/export.jsonl") for _ in range(3)]
    export_peak = harness.peak_mb(app.pid) - base
    return {"transcript_ttfb_ms": round(statistics.median(s[0] for s in share), 1),
            "export_ttfb_ms": round(statistics.median(e[0] for e in export), 1),
            "export_total_ms": round(statistics.median(e[1] for e in export), 1),
            "export_mb": round(export[0][2] / 1e6, 1), "export_peak_mb": round(export_peak, 1),
            "transcript_events": events}


# 5. Large payload -------------------------------------------------------------------------

async def payload(app: App, megabytes: float, browser: bool) -> dict[str, Any]:
    session_id = app.connect(app.server("bench-sdk", harness.PEER_SDK))
    ws = await app.socket(session_id)
    await wait_for(ws, 'id="catalogue"')
    t0 = time.perf_counter()
    await ws.send(call_frame("big", megabytes=megabytes))
    frames = [await wait_for(ws, '<section id="result"', timeout=120)]
    while not END.search(frames[-1]):               # the last piece of the text (or where the page cuts it)
        frames.append(await wait_for(ws, 'hx-swap-oob="beforeend"', timeout=120))
    relay_s = time.perf_counter() - t0
    out: dict[str, Any] = {"large_payload_s": round(relay_s, 3), "large_payload_frames": len(frames),
                           "payload_mb": megabytes}
    stack, sdk = await sdk_client(harness.PEER_SDK)
    try:
        t0 = time.perf_counter()
        await sdk.call_tool("big", {"megabytes": megabytes})
        out["sdk_large_payload_s"] = round(time.perf_counter() - t0, 3)
    finally:
        await stack.aclose()
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
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
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
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=harness.ROOT, capture_output=True,
                            text=True).stdout.strip()
    import channels
    import daphne
    import django
    from importlib.metadata import version
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem, 1), "speed_index_us": speed_index(),
            "python": platform.python_version(),
            "django": django.get_version(), "channels": channels.__version__, "daphne": daphne.__version__,
            "mcp": version("mcp"), "commit": commit, "load_before": os.getloadavg()}


ROWS = [  # key, label, target (text), unit
    ("relay_median_ms", "relay: playground median", "", "ms"),
    ("sdk_median_ms", "relay: SDK client median", "", "ms"),
    ("relay_ratio", "relay: ratio at the median", "<= 1.1", "x"),
    ("relay_p95_ms", "relay: playground p95", "", "ms"),
    ("sdk_p95_ms", "relay: SDK client p95", "", "ms"),
    ("relay_p95_ratio", "relay: ratio at p95", "<= 1.1", "x"),
    ("relay_added_ms_median", "relay: added at the median", "", "ms"),
    ("relay_daphne_cpu_ms_per_call", "relay: daphne CPU per call", "", "ms"),
    ("relay_server_ms_median", "relay: the server (request written -> response read)", "", "ms"),
    ("relay_own_ms_median", "relay: the playground's own share of a call", "", "ms"),
    ("sdk_own_ms_median", "relay: the SDK client's own share (median minus the server's)", "", "ms"),
    ("flood_msgs_per_s", "flood: persisted + delivered", ">= 35000", "msg/s"),
    ("flood_persist_msgs_per_s", "flood: persisted (viewer stalled)", "", "msg/s"),
    ("sdk_flood_msgs_per_s", "flood: SDK client", "", "msg/s"),
    ("flood_daphne_cpu_percent", "flood: daphne CPU while flooding", "", "%"),
    ("flood_lost", "flood: lost", "0", ""),
    ("flood_peak_mb", "flood: memory growth", "< 20", "MB"),
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
    (out / "RESULTS.md").write_text(f"""# Benchmark results{' (quick run: small counts)' if quick else ''}

Measured by `make bench` (`bench/run.py`) on {time.strftime('%Y-%m-%d %H:%M %Z')}. Ratios between the
two sides of one run are the headline; absolute times move with the machine's load (other
sessions run tests on this 2-core machine at the same time: see the load averages).

{table(results)}

What the profiles showed and what changed: `bench/README.md`.

## Machine

{facts_md}

## How

- Relay: {results.get('relay_calls', '?')} sequential `tools/call echo` through a `websockets` client →
  SessionConsumer → SessionWorker → the official SDK's MCPServer over stdio (`bench/peer_sdk.py`) and back,
  until the Result fragment arrives; against the SDK's own `ClientSession` calling the same server
  directly. Alternating blocks, after 20 warm-up calls on each side.
- Flood: `bench/peer_flood.py` (hand-written, writes pre-built lines as fast as the pipe takes them)
  sends {results.get('flood_count', '?')} `notifications/message`; timed until every one was delivered
  to a websocket viewer (persisted before broadcast; the count in the database is checked).
  Memory growth is daphne's peak RSS (VmHWM, reset before) minus its RSS before. The stalled viewer
  stops reading while the same flood runs.
- Sessions: {results.get('sessions_count', '?')} stdio sessions to `peer_flood.py`, daphne's RSS before and
  after (the servers are separate processes), then daphne's CPU over an idle window.
- Transcript: {results.get('transcript_events', '?')} events seeded through the worker's `save_events`;
  share page and JSONL export timed to their first body byte (median of 5 and 3).
- Large payload: a {results.get('payload_mb', '?')} MB text result, relayed to the Result fragment; in
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
    spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--format", "raw", "--rate", "500",
                            "-o", str(Path(folder) / f"{part}.txt"), "-p", str(app.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(30)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    global SETTLE
    quick = args.quick
    SETTLE = 0.2 if quick else 1.0
    parts = args.only.split(",") if args.only else list(PARTS)
    facts = machine()
    app = App()
    app.start()
    results: dict[str, Any] = {}
    runs = {
        "relay": lambda: relay(app, 30 if quick else 1000),
        "flood": lambda: flood(app, 2000 if quick else 20_000),
        "transcript": lambda: transcript(app, 2000 if quick else 50_000),
        "payload": lambda: payload(app, 1.0 if quick else 10.0, browser=not quick and not args.no_browser),
        "sessions": lambda: sessions(app, 5 if quick else 100, 0.3 if quick else 10.0),
    }
    try:
        for part in PARTS:
            if part in parts:
                started = time.perf_counter()
                with profiled(app, part, args.profile):
                    results.update(await runs[part]())
                print(f"{part}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    except BaseException:
        print(f"bench failed; daphne's log and any screenshot are in {harness.TMP}", file=sys.stderr)
        raise
    finally:
        app.stop()
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
    parser.add_argument("--profile", default="", metavar="DIR", help="py-spy daphne per part into DIR (needs py-spy)")
    parser.add_argument("--no-write", action="store_true", help="print only; keep results.json/RESULTS.md")
    parser.add_argument("--json", default="", metavar="PATH", help="also write the figures to PATH")
    asyncio.run(main(parser.parse_args()))
