"""`bench/capture.py --quick` runs its three parts end to end (small counts). No assertion on speed:
benchmarks are not tests; this keeps the harness working, and its own checks (every frame at the
receiver, the spill delivered) true."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_capture_bench_runs(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    run = subprocess.run(
        [sys.executable, "bench/capture.py", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["recorded_into"] == "playground"  # a running playground, not the test receiver
    for arm in ("direct", "capture", "plain"):
        assert results[f"rt_{arm}_median_ms"] > 0 and results[f"flood_{arm}_msgs_per_s"] > 0
    assert results["flood_every_frame_recorded"] is True
    assert results["down_complete"] is True and results["down_left_in_spill"] == 0  # recorded or counted
