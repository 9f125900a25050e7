"""One budget for work whose size someone else controls.

A server's schemas, catalogues and results, and the rules a person types, drive work that can
grow much faster than their size: a 2 KB doubling `$ref`/`allOf` chain asks for 2^26 merges, a
$ref-inlining conversion for gigabytes of output, a pattern with many `**` for a product of
positions at every step. Each round of probing found another such path. So every consumer of
such structure takes a `Budget` made from one line of `LIMITS` and spends it as it goes:

- **steps**: units of its own work (a subschema visited, a field built, a value compared). Counted,
  so an outcome does not depend on how busy the machine is, and a test can say what it costs;
- **output**: characters it produces (HTML, JSON);
- **seconds**: a backstop on the clock, for steps whose cost varies (looked at every few hundred
  steps); where work cannot count its steps (jsonschema's validation), it runs in a child process
  that is killed at its `seconds` and may use `memory` bytes (`playground.schema`'s sandbox).

Past any of them the work raises `OverBudget`, and its consumer says so in its own words: "too
large to turn into a form", "not checked", "not compared further". It never answers "valid", or
"no difference", for work it did not do. `LIMITS` is the one table of what each consumer may
spend, read by the security model (docs/security.md) and by the property tests (tests/budget/), which
generate hostile structures for each consumer and check it stops and says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

CLOCK_EVERY = 256  # steps between looks at the clock


@dataclass(frozen=True)
class Limits:
    """What one kind of work may spend, and what it says when it runs out."""

    name: str
    steps: int
    output: int  # characters
    seconds: float
    says: str  # the outcome past the budget, e.g. "too large to turn into a form"
    memory: int = 0  # bytes, where the work runs in a child process (0: not set)

    def budget(self, clock: Callable[[], float] = time.monotonic) -> Budget:
        return Budget(self, clock)


class OverBudget(Exception):
    """The work stopped at its budget: the honest outcome, not a failure of the program."""

    def __init__(self, limits: Limits, spent: str) -> None:
        super().__init__(f"{limits.says}: {spent}")
        self.limits = limits
        self.spent = spent

    @property
    def reason(self) -> str:
        """What a person reads: the outcome and the limit it met."""
        return str(self)


class Budget:
    """What is left of one piece of work's `Limits`. Not thread-safe: one per piece of work."""

    __slots__ = ("limits", "steps", "output", "until", "clock", "parent", "_tick")

    def __init__(
        self, limits: Limits, clock: Callable[[], float] = time.monotonic, parent: Budget | None = None
    ) -> None:
        self.limits = limits
        self.steps = limits.steps
        self.output = limits.output
        self.clock = clock
        self.until = clock() + limits.seconds
        self.parent = parent
        self._tick = CLOCK_EVERY

    def part(self, limits: Limits) -> Budget:
        """A budget for one part of this work (a tool of a catalogue): it spends from both, so
        one part cannot take the whole, nor all parts together more than the whole."""
        child = Budget(limits, self.clock, self)
        child.until = min(child.until, self.until)
        return child

    def spend(self, n: int = 1) -> None:
        """Take `n` steps of work; OverBudget past the steps or the clock."""
        if self.parent is not None:
            self.parent.spend(n)
        self.steps -= n
        if self.steps < 0:
            raise OverBudget(self.limits, f"more than {self.limits.steps:,} steps of work")
        self._tick -= n
        if self._tick <= 0:
            self._tick = CLOCK_EVERY
            if self.clock() > self.until:
                raise OverBudget(self.limits, f"more than {self.limits.seconds:g} s")

    def emit(self, chars: int) -> None:
        """Produce `chars` characters of output; OverBudget past the output."""
        if self.parent is not None:
            self.parent.emit(chars)
        self.output -= chars
        if self.output < 0:
            raise OverBudget(self.limits, f"more than {_size(self.limits.output)} of output")

    def seconds_left(self) -> float:
        return max(0.0, self.until - self.clock())

    @property
    def spent_steps(self) -> int:
        return self.limits.steps - self.steps

    @property
    def emitted(self) -> int:
        return self.limits.output - self.output


def _size(chars: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if chars >= scale and chars % scale == 0:
            return f"{chars // scale:,} {unit}B"
    return f"{chars:,} characters"


# The one table. Figures: what the largest real schemas, catalogues and results we know of need,
# times ten or more (bench/README's "Bounded work"): where the work runs on the event loop, steps
# that stop it within a few tenths of a second of one core, and seconds a backstop of at most one
# (at 0.25 s, server-everything's 13-field elicitation card, 920 steps, the first in a process at
# 0.22 s as its templates compiled, came as one JSON field on a loaded machine).
FORM = Limits("form", steps=100_000, output=4 << 20, seconds=2.0, says="too large to turn into a form")
ELICITATION = Limits(
    "elicitation card", steps=10_000, output=1 << 20, seconds=1.0, says="too large to turn into a form here"
)
ARGUMENTS = Limits("arguments made for a check", steps=20_000, output=1 << 20, seconds=1.0, says="too large to make")
VALIDATION = Limits("validation", steps=0, output=0, seconds=2.0, memory=2 << 30, says="not checked")
MODEL_VIEW = Limits("model view", steps=100_000, output=8 << 20, seconds=10.0, says="too large to show")
MODEL_VIEW_TOOL = Limits("model view of a tool", steps=5_000, output=1 << 20, seconds=10.0, says="too large to show")
DIFF = Limits("diff", steps=2_000_000, output=0, seconds=2.0, says="not compared further")
COMPARISON = Limits(
    "replay comparison",
    steps=10_000_000,
    output=0,
    seconds=10.0,
    says="not compared: the comparison of the whole replay took its budget",
)

HAR_ENTRY = Limits(
    "HAR entry", steps=0, output=32 << 20, seconds=float("inf"), says="too large to show in one HAR entry"
)  # a stream is held until it ends
CHECK = Limits(
    "server check", steps=0, output=0, seconds=120.0, says="the check ran out of its deadline"
)  # (the runner cancels the battery: check/runner.py)

MODEL_REPLY = Limits(
    "model reply", steps=100_000, output=4 << 20, seconds=float("inf"), says="the model's reply was too large"
)  # steps: stream events; output: characters of text and tool arguments (the request's timeout bounds time)

APP_POLICY = Limits(
    "app policy", steps=1_000, output=4 << 10, seconds=float("inf"), says="too large for the app's policy"
)  # steps: entries of `_meta.ui.csp` looked at; output: characters of its domains (each up to six times in a
# header; in the sandbox page's URL)

LIMITS: dict[str, Limits] = {
    limits.name: limits
    for limits in (
        FORM,
        ELICITATION,
        ARGUMENTS,
        VALIDATION,
        MODEL_VIEW,
        MODEL_VIEW_TOOL,
        DIFF,
        COMPARISON,
        CHECK,
        HAR_ENTRY,
        MODEL_REPLY,
        APP_POLICY,
    )
}
