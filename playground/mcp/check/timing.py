"""Timing: how quickly the server answered the check's requests (median and 95th percentile,
nearest rank), and whether any went unanswered."""

from __future__ import annotations

import math

from .context import CheckContext
from .result import FAIL, PASS, SKIP, WARN, CheckResult

SLOW_P95_MS = 1000.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


# A handshake's time includes a stdio server's start-up: not a request's latency.
HANDSHAKES = ("initialize", "server/discover")


def row(ctx: CheckContext) -> CheckResult:
    frames = [f for f in ctx.trace.frames if f.seq > ctx.start]
    handshakes = {f.seq for f in frames if f.dir == "send" and f.method in HANDSHAKES}
    answered = [
        (f.latency_ms, f.seq)
        for f in frames
        if f.dir == "recv" and f.latency_ms is not None and f.reply_to not in handshakes
    ]
    if not answered:
        return CheckResult(
            "timing",
            SKIP if not ctx.timeouts else FAIL,
            f"{ctx.timeouts} request(s) got no answer" if ctx.timeouts else "no request was answered",
        )
    latencies = [ms for ms, _ in answered]
    median, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
    slowest = sorted(answered, reverse=True)[:3]
    reason = f"{len(latencies)} answers (handshakes left out): median {median:.1f} ms, p95 {p95:.1f} ms, slowest {slowest[0][0]:.1f} ms"
    if ctx.timeouts:
        return CheckResult(
            "timing", FAIL, f"{ctx.timeouts} request(s) got no answer in time; " + reason, [s for _, s in slowest]
        )
    return CheckResult("timing", WARN if p95 > SLOW_P95_MS else PASS, reason, [s for _, s in slowest])
