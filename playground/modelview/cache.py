"""The Model view of a catalogue, computed once and kept: every tab of a live session fetches the
panel again after a catalogue change, and each share page view shows it, so the same catalogue
is asked for again and again. Keyed by a hash of the tools' JSON (what the view is made of),
bounded by count and by the size of the catalogues kept; a second request for a catalogue being
computed waits for that computation instead of starting its own.

No Django, no event loop: callers run `get` in a worker thread (it may take seconds).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from .tokens import compact

T = TypeVar("T")

MAX_ENTRIES = 32
MAX_WEIGHT = 128 * 1024 * 1024  # characters the kept entries hold (about: see model_view_of)


class Memo(Generic[T]):
    """A bounded, thread-safe least-recently-used map whose misses are computed once."""

    def __init__(self, entries: int = MAX_ENTRIES, weight: int = MAX_WEIGHT) -> None:
        self.entries, self.weight = entries, weight
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self._running: dict[Hashable, Future[T]] = {}
        self.computed = 0  # misses computed (for tests and the bench)

    def get(self, key: Hashable, weight: int, compute: Callable[[], T], weigh: Callable[[T], int] | None = None) -> T:
        """The value for `key`, computed once; kept if its weight (`weigh(value)`, or `weight`:
        what the caller knew before computing it) fits."""
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key][0]
            future = self._running.get(key)
            mine = future is None
            if future is None:
                future = self._running[key] = Future()
        if not mine:
            return future.result()
        try:
            value = compute()
        except BaseException as exc:
            with self._lock:
                del self._running[key]
            future.set_exception(exc)
            raise
        if weigh is not None:
            weight = weigh(value)
        with self._lock:
            self.computed += 1
            del self._running[key]
            if weight <= self.weight:
                self._done[key] = (value, weight)
                while len(self._done) > self.entries or sum(w for _, w in self._done.values()) > self.weight:
                    self._done.popitem(last=False)
        future.set_result(value)
        return value


def digest(value: Any) -> tuple[str, int]:
    """A key for a JSON value (its hash) and its weight (its size in characters)."""
    text = compact(value)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), len(text)


VIEWS: Memo[dict[str, Any]] = Memo()


def model_view_of(tools: list[dict[str, Any]], key: tuple[str, int] | None = None) -> dict[str, Any]:
    """`view.model_view(tools)`, computed once per list of tools (`key`: its `digest`, if known)."""
    from .rules import Budget
    from .view import model_view

    name, weight = key or digest(tools)
    budget = Budget()
    # Kept by what it holds: the catalogue four times over (each API's rendering of it) and what
    # Gemini's inlining wrote besides.
    return VIEWS.get(name, weight, lambda: model_view(tools, budget), lambda _: 4 * weight + budget.work.emitted)
