"""A session's frames checked against the MCP schema, in order: the version in use as the
frames negotiate it, the request each response answers, and — live — which frames there is
time to check (`LintBudget`).

Split in three so that the checking leaves the event loop: `pick` runs where the frames are
(the loop; a few dictionary lookups a frame), `check_all` wherever the work may go (a thread),
`apply` back where the frames are. The live path (features/schema_lint) and the CLI
(`cli_output`) both do so.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from playground.token_bucket import TokenBucket

from ..apps.meta import LANE
from ..client import LATEST_LEGACY, META_VERSION
from ..events import CONNECTION, ON_PURPOSE, TranscriptEvent
from ..secrets import NO_SECRETS, Redactor
from .bridge import check_bridge
from .definitions import Report, Request, check, known

MAX_BYTES = 1_000_000  # frames larger than this are not checked (a megabyte can take a second)
REQUESTS_KEPT = 10_000  # open requests remembered for their responses (a server may never answer)
OTHERS_KEPT = 100  # other connections whose version is followed (beyond: the session's is used)
# check_all lets the interpreter lock go after this much CPU time (a few frames), for this long
# (Linux rounds a sleep up to its ~50 us timer slack).
PAUSE_EVERY = 0.0003
PAUSE = 0.00001


class ProcessShare:
    """The process's share of a core for checking, split evenly among the sessions that had
    frames to check within the last RECENT seconds: however many sessions flood at once, their
    checking together stays within `share` (and `burst`). One object per process
    (`PROCESS_SHARE`), used from its event loop and from the threads that take capture uploads
    (hence the lock)."""

    RECENT = 2.0

    def __init__(self, share: float, burst: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.share, self.burst, self.clock = share, burst, clock
        self._asked_at: dict[int, float] = {}  # a session budget's id -> when it last had frames
        self._lock = threading.Lock()

    def split(self, by: int) -> tuple[float, float]:
        """`by` has frames to check now: its part of the share and of the burst."""
        with self._lock:
            self._asked_at[by] = now = self.clock()
            if len(self._asked_at) > 1 and any(t < now - self.RECENT for t in self._asked_at.values()):
                self._asked_at = {k: t for k, t in self._asked_at.items() if t >= now - self.RECENT}
            users = len(self._asked_at)
        return self.share / users, self.burst / users


# The process's checking, live sessions' and capture uploads' together, within a quarter of a core
# (each session within its own tenth): checks are CPU work under one GIL.
PROCESS_SHARE = ProcessShare(share=0.25, burst=1.0)


class LintBudget:
    """What a live session may spend on checking. A notification costs ~50 µs to check, a
    megabyte frame up to a second, and a flooding server sends tens of thousands a second: the
    flood must not slow down for it (bench/pipeline.py).

    Two buckets. Frames the server sends unasked (notifications, its own requests, responses to
    nothing) pass at most `rate` a second: the first `rate` of each second. (Refilled a second
    at a time, not continuously: during a flood one batch a second goes to the checker with its
    share, instead of every batch waiting for a few; each hand-over to the checker's thread waits
    for the busy loop to let go of the GIL, and the database idled meanwhile.) Every check draws
    on the checker's CPU time, `share` of a core, in bursts of `burst` seconds: frames we send
    and the answers to our requests (as many as the person asks for) are checked while it lasts.
    What is not checked is counted (`FrameLinter.skipped`).

    With `shared` (the process's `ProcessShare`), the CPU share and burst are at most the
    session's part of the process's: ten sessions flooding at once would otherwise take ten
    shares of the one GIL. Fairness stays simple: equal parts, so none starves the others. (A
    session with a few frames to check counts as one too: the process's share may then go
    partly unused.)"""

    def __init__(
        self,
        rate: float = 200.0,
        share: float = 0.1,
        burst: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        shared: ProcessShare | None = None,
    ) -> None:
        self.rate, self.share, self.burst, self.clock = rate, share, burst, clock
        self.frames: float = rate
        # A share of one core's time, `share` of each second in bursts of at most `burst` seconds;
        # it may go below zero after a long check: nothing more until time has paid it back.
        self.cpu = TokenBucket(share, burst, clock)
        self.shared = shared
        self._second = clock()

    def refill(self) -> None:
        now = self.clock()
        if now - self._second >= 1.0 and not math.isinf(self.frames):
            self.frames, self._second = self.rate, now
        if self.shared is not None:
            share, burst = self.shared.split(id(self))
            self.cpu.rate, self.cpu.burst = min(self.share, share), min(self.burst, burst)
        self.cpu.refill()

    @property
    def seconds(self) -> float:
        """CPU time left for checking (none at or below zero)."""
        return self.cpu.tokens

    def spend(self, seconds: float) -> None:
        self.cpu.tokens -= seconds

    def lift_rate(self) -> None:
        """Check every frame from now on while time lasts (a session's last batches, as it ends)."""
        self.frames = math.inf


@dataclass(slots=True)
class Pick:
    """One frame to check, with what it is checked against."""

    event: TranscriptEvent
    version: str
    request: Request | None
    lane: str | None = None  # the MCP Apps bridge (`apps.LANE`): checked against the extension's schema


class FrameLinter:
    """One session's frames, in order. The version starts as `version` (or the latest legacy
    one) and follows the frames: the version an `initialize` offers (for the request itself
    and what comes before its answer), the one its result chooses, the one each modern request
    names in `_meta`. Frames of another connection on the session's tap (marked
    `data["connection"]`: the server check's version probes) follow a version of their own."""

    def __init__(self, version: str | None = None, budget: LintBudget | None = None) -> None:
        self.version: str = version if known(version) else LATEST_LEGACY
        self.others: dict[Any, str] = {}  # another connection's label -> its version (as a new session's)
        self.budget = budget
        self._requests: dict[int, Request] = {}  # request event seq -> what it asked
        self._last_seq = 0
        self.seen = 0  # frames that could be checked (parsed JSON, sent or received)
        self.checked = 0
        self.skipped = 0  # not checked: over the budget (a frame over MAX_BYTES says so itself)

    def pick(self, events: Iterable[TranscriptEvent]) -> list[Pick]:
        """The frames of `events` to check now; every frame is observed (version, requests),
        once: events seen before (a batch saved again) are passed over."""
        budget = self.budget
        if budget is not None:
            budget.refill()
            timely, unasked = budget.seconds > 0, -1 if math.isinf(budget.frames) else int(budget.frames)
        else:
            timely, unasked = True, -1  # -1: no limit
        picks: list[Pick] = []
        seen = skipped = 0
        last = self._last_seq
        # (Once a frame, on the flood's path: a notification costs a few lookups here.)
        for event in events:
            if event.seq <= last:
                continue
            last = event.seq
            message = event.message
            if message is None:
                continue  # notes, stderr, frames that are not JSON or were cut at the cap
            seen += 1
            request = None
            other = event.data.get(CONNECTION) if event.data is not None else None
            if type(message) is dict and "id" in message:
                request = self._observe(event, message, other)
            # (The app bridge's lane speaks the session's MCP version for its standard messages.)
            version = self.version if other is None or other == LANE else self.others.get(other, LATEST_LEGACY)
            if (event.size or 0) > MAX_BYTES:
                event.schema_lint = {"version": version, "unchecked": f"larger than {MAX_BYTES:,} bytes"}
                continue
            if not timely:
                skipped += 1
                continue
            if event.dir == "recv" and event.reply_to is None and unasked >= 0:
                if not unasked:
                    skipped += 1
                    continue
                unasked -= 1
            picks.append(Pick(event, version, request, LANE if other == LANE else None))
        if budget is not None and unasked >= 0:
            budget.frames = unasked
        self._last_seq = last
        self.seen += seen
        self.skipped += skipped
        self.checked += len(picks)
        return picks

    def expect(self, seq: int, method: str) -> None:
        """A request seen before this linter was made (a recording checked in parts: a capture's
        uploads): its response is checked as its answer."""
        if len(self._requests) < REQUESTS_KEPT:
            self._requests[seq] = Request(method)
        self._last_seq = max(self._last_seq, seq)

    def _observe(self, event: TranscriptEvent, message: dict[str, Any], other: Any = None) -> Request | None:
        """Remember a request; for a response, the request it answers. Follow the version (of
        the connection `other`, when the frame is another connection's)."""
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if event.dir == "send":
                meta = params.get("_meta")
                offered = (
                    params.get("protocolVersion")
                    if method == "initialize"
                    else (meta.get(META_VERSION) if isinstance(meta, dict) else None)
                )
                if known(offered):
                    self._follow(other, offered)
            if len(self._requests) >= REQUESTS_KEPT:
                del self._requests[next(iter(self._requests))]
            self._requests[event.seq] = Request(method, task=isinstance(params.get("task"), dict))
            return None
        request = self._requests.pop(event.reply_to, None) if event.reply_to is not None else None
        if request is not None and request.method == "initialize" and event.dir == "recv":
            result = message.get("result")
            chosen = result.get("protocolVersion") if isinstance(result, dict) else None
            if known(chosen):
                self._follow(other, chosen)
        return request

    def _follow(self, other: Any, version: str) -> None:
        if other is None:
            self.version = version
        elif other in self.others or len(self.others) < OTHERS_KEPT:
            self.others[other] = version


def check_all(picks: list[Pick], *, pause_every: float = PAUSE_EVERY) -> tuple[list[Report], float]:
    """Check the picked frames; with the CPU time it took (of this thread).

    Every `pause_every` seconds of CPU it sleeps a moment between two frames. Checking is pure
    Python under the interpreter lock: an event loop that wants the lock meanwhile (a live
    session's next call) waited until the switch interval (5 ms) forced a hand-over, so the calls
    that met a batch's check took ~4-6 ms instead of ~1.3 (bench/README.md, issue 28). The sleep
    hands the lock over at once; what waits is the check, not the call."""
    started = mark = time.thread_time()
    reports: list[Report] = []
    for p in picks:
        reports.append(
            check(p.event.message, version=p.version, direction=p.event.dir, request=p.request)  # type: ignore[arg-type]
            if p.lane is None
            else check_bridge(p.event.message, direction=p.event.dir, request=p.request, mcp_version=p.version)  # type: ignore[arg-type]
        )
        if pause_every and (now := time.thread_time()) - mark >= pause_every:
            time.sleep(PAUSE)
            mark = now
    return reports, time.thread_time() - started


def apply(pick: Pick, report: Report, secrets: Redactor = NO_SECRETS) -> int:
    """Put the outcome on the event (its row and line carry it); the number of problems that
    count: none for a frame sent invalid on purpose (its `schema_lint` says why). A message
    quotes the frame cut to length: a secret's head at a cut is masked by `secrets`."""
    event = pick.event
    if secrets:
        for problem in report.problems:
            problem["message"] = secrets.at_cuts(problem["message"])
    event.schema_problems = report.problems or None
    info = report.info() if report.problems or report.unchecked else None
    event.schema_lint = info
    if info is not None and report.problems and event.data is not None and ON_PURPOSE in event.data:
        info[ON_PURPOSE] = event.data[ON_PURPOSE]
        return 0
    return len(report.problems)
