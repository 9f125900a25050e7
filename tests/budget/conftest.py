"""The property suite's settings and its watch on every budget.

Profiles: `make test` runs `ci` (derandomized, so a run is repeatable: well under a minute in
all); `make bench` runs `bench` (ten times the examples, random). `HYPOTHESIS_PROFILE` picks one.

`watched` replaces every budget made from `LIMITS` by one that remembers when it stopped work,
with a clock that never moves: what a consumer did is then decided by the structure it was given,
not by how busy the machine is, and its steps alone must bound it (a consumer whose steps miss
some of its work runs past the example's deadline and fails).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from playground import budget as budgets

settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=10_000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "bench",
    max_examples=1000,
    database=None,
    deadline=20_000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class Watched(budgets.Budget):
    """A budget that remembers each time it stopped work."""

    stopped: list[str] = []

    def spend(self, n: int = 1) -> None:
        try:
            super().spend(n)
        except budgets.OverBudget as exc:
            Watched.stopped.append(exc.limits.name)
            raise

    def emit(self, chars: int) -> None:
        try:
            super().emit(chars)
        except budgets.OverBudget as exc:
            Watched.stopped.append(exc.limits.name)
            raise

    def part(self, limits: budgets.Limits) -> budgets.Budget:
        return Watched(limits, self.clock, self)


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the limits that stopped work, in order (cleared by `clear`)."""
    monkeypatch.setattr(budgets.Limits, "budget", lambda self, clock=None: Watched(self, lambda: 0.0))
    Watched.stopped = []
    yield Watched.stopped
