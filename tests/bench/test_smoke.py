"""`bench/run.py --quick` runs every part end to end (small counts). No assertion on speed:
benchmarks are not tests; this only keeps the harness working."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEYS = (
    "relay_ratio",
    "relay_added_ms_median",
    "relay_p95_ms",
    "flood_msgs_per_s",
    "flood_lost",
    "flood_peak_mb",
    "session_mb",
    "idle_cpu_percent",
    "transcript_ttfb_ms",
    "export_ttfb_ms",
    "large_payload_s",
    "relay_server_ms_median",
    "relay_own_ms_median",
)
# The official Inspector's arm (bench/inspector.py) of the relay and the flood.
INSPECTOR_KEYS = (
    "inspector_median_ms",
    "inspector_p95_ms",
    "relay_vs_inspector_ratio",
    "inspector_sdk_ratio",
    "inspector_flood_s",
    "flood_vs_inspector_ratio",
    "inspector_flood_lost",
)
# The relay's floor (floor_asgi.py: daphne, and Channels, relaying the JSON-RPC text alone).
FLOOR_KEYS = (
    "floor_daphne_median_ms",
    "floor_channels_median_ms",
    "floor_daphne_vs_inspector_ratio",
    "floor_channels_vs_inspector_ratio",
    "relay_vs_floor_channels_ratio",
    "floor_flood_relay_s",
    "floor_flood_keep_s",
    "flood_vs_floor_keep_ratio",
)


@pytest.mark.timeout(300)  # (~20 s alone; several times that beside the suite's other workers)
def test_quick_bench_runs_every_part(tmp_path):
    out = tmp_path / "results.json"
    bench = subprocess.Popen(
        [sys.executable, "bench/run.py", "--quick", "--no-write", "--no-browser", "--json", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # (its daphnes, the Inspector and the servers: stopped with it on a timeout)
    )
    try:
        _, stderr = bench.communicate(timeout=280)
    except subprocess.TimeoutExpired:
        os.killpg(bench.pid, signal.SIGKILL)
        stdout, stderr = bench.communicate()  # (what it said before: each part prints as it ends)
        pytest.fail(f"the quick bench did not end in 280 s; it printed:\n{stdout[-2000:]}\n{stderr[-3000:]}")
    run = subprocess.CompletedProcess(bench.args, bench.returncode, "", stderr)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert all(isinstance(results[key], (int, float)) for key in KEYS), results
    # The relay's time splits into the server's (the tap's latency of each call) and ours.
    assert 0 < results["relay_server_ms_median"] < results["relay_median_ms"]
    assert results["flood_lost"] == 0 and results["flood_persisted"] == results["flood_count"]
    # The Inspector ran beside us: every notification through its event stream, it (and the
    # server it spawned) listened on loopback only, and its process tree was stopped.
    assert all(isinstance(results[key], (int, float)) for key in INSPECTOR_KEYS), results
    assert results["inspector_flood_lost"] == 0
    assert results["inspector_listeners"] >= 1 and results["inspector_listen_hosts"] == ["127.0.0.1"]
    assert results["inspector_stopped"] is True
    assert all(isinstance(results[key], (int, float)) for key in FLOOR_KEYS), results
    assert results["floor_daphne_median_ms"] > 0 and results["floor_channels_median_ms"] > 0
    # (The floors relayed every call and every flood's line: run.py asserts each answer.)


def test_pipeline_bench_runs_with_a_share_viewer():
    """`bench/pipeline.py` (the flood path in one process) with its options: one small round."""
    run = subprocess.run(
        [sys.executable, "bench/pipeline.py", "2000", "1", "--share-viewer", "--share-secret"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "msg/s" in run.stdout and "share frames" in run.stdout and "search index afterwards" in run.stdout


def test_http_flood_bench_runs():
    """`bench/http_flood.py` (an SSE flood through the Streamable HTTP transport and the tap): one
    small round, every notification and the answer through the tap."""
    count = 500
    run = subprocess.run(
        [sys.executable, "bench/http_flood.py", str(count), "1"], cwd=ROOT, capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (line,) = run.stdout.splitlines()
    match = re.fullmatch(r"\s*\d+ msg/s\s+cpu\s+[\d.]+ us/msg\s+[\d.]+ bytes a row \((\d+) events\)", line)
    assert match and int(match.group(1)) >= count + 2, line  # the call, each notification, its answer
