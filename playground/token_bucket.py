"""A token bucket: `rate` a second, at most `burst` at once. The one written for every flood the
playground paces on the server side (an app's bridge messages, the transcript lines a page gets,
the schema lint's share of a core); static/token-bucket.js is its twin for the page and the
sandbox proxy. Django-free: the MCP core uses it too."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """Tokens refilled continuously by `clock`; `tokens` may be spent below zero by a caller that
    sends what it held (the next refill pays the debt back)."""

    __slots__ = ("rate", "burst", "clock", "tokens", "last")

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.tokens = burst
        self.last = clock()

    def refill(self) -> float:
        """The tokens there are now."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        return self.tokens

    def take(self, n: float = 1) -> bool:
        """Spend `n` tokens if there are that many (False: there are not; nothing spent)."""
        if self.refill() < n:
            return False
        self.tokens -= n
        return True
