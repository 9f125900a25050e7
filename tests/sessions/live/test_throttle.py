"""The flood throttle (the worker's, for every tab): a token bucket of lines per second; beyond it the
latest lines are held and released after a marker counting those left out, so a flood's tail
always arrives, and soon."""

from __future__ import annotations

from playground.sessions.live.throttle import LineThrottle


def rows(a: int, b: int) -> list[dict]:
    return [{"seq": i} for i in range(a, b)]


class Clock:
    """The throttle's clock, moved by the test (the release timer is awaited, not slept on)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_burst_within_the_rate_goes_out_at_once():
    sent = []

    async def send(batch, skipped):
        sent.append((len(batch), skipped))

    throttle = LineThrottle(send, rate=500, clock=Clock())
    for i in range(0, 400, 20):
        await throttle.push(rows(i, i + 20))
    assert sent == [(20, 0)] * 20 and throttle._timer is None


async def test_beyond_the_rate_the_latest_lines_are_held_then_released_with_a_marker():
    sent: list[tuple[list[int], int]] = []

    async def send(batch, skipped):
        sent.append(([r["seq"] for r in batch], skipped))

    clock = Clock()
    throttle = LineThrottle(send, rate=40, tail=0.1, clock=clock)  # 40 lines/s; 4 held at most
    await throttle.push(rows(0, 30))  # within the bucket: at once
    await throttle.push(rows(30, 50))  # 10 more fit; the rest is held (the latest 4 kept)
    await throttle.push(rows(50, 53))  # still held
    assert sent == [(list(range(30)), 0), (list(range(30, 40)), 0)]
    assert throttle._timer is not None and throttle.due == clock.now + 0.1
    clock.now = throttle.due  # the bucket has refilled
    await throttle._timer  # the release: marker + the latest lines
    assert sent[-1] == ([49, 50, 51, 52], 9)  # 40..48 left out and counted
    # Every event is accounted for: sent as a line or counted by a marker.
    assert sum(len(b) + k for b, k in sent) == 53


async def test_a_sustained_flood_gets_the_rate_and_its_tail_arrives():
    """10 s of 1,000 lines a second against a 100 lines/s throttle: the page gets about 100 a
    second (plus the first bucket), every event is counted, and the last line is shown."""
    sent: list[tuple[list[int], int]] = []

    clock = Clock()
    last_sent_at = 0.0

    async def send(batch, skipped):
        nonlocal last_sent_at
        sent.append(([r["seq"] for r in batch], skipped))
        last_sent_at = clock.now

    throttle = LineThrottle(send, rate=100, clock=clock)
    seq = 0

    async def release_if_due() -> None:
        if throttle._timer is not None and clock.now >= throttle.due:
            await throttle._timer  # (its sleep is over on this clock: it runs at once)

    for _ in range(500):  # a batch of 20 every 20 ms
        await throttle.push(rows(seq, seq + 20))
        seq += 20
        last_push_at = clock.now
        clock.now += 0.02
        await release_if_due()
    if throttle._timer is not None:  # the last batch may still be held: released when due
        clock.now = max(clock.now, throttle.due)
        await release_if_due()
    shown = sum(len(b) for b, _ in sent)
    assert sum(len(b) + k for b, k in sent) == seq == 10_000
    assert 0.9 * 100 * 10 <= shown <= 100 * 10 + 100 + 5  # ~the rate, plus the first bucket
    assert sent[-1][0][-1] == seq - 1  # the tail arrives...
    assert last_sent_at - last_push_at <= 0.05 + 1e-9  # ...within `tail` seconds


async def test_close_cancels_a_pending_release():
    async def send(batch, skipped):
        pass

    throttle = LineThrottle(send, rate=1)
    await throttle.push(rows(0, 5))
    assert throttle._timer is not None
    await throttle.close()
    assert throttle._timer is None


async def test_flush_sends_what_is_held_at_once():
    """At the end of a session the held tail goes out now, with its marker (nothing comes after)."""
    sent: list[tuple[list[int], int]] = []

    async def send(batch, skipped):
        sent.append(([r["seq"] for r in batch], skipped))

    throttle = LineThrottle(send, rate=10, tail=0.2, clock=Clock())  # 2 held at most
    await throttle.push(rows(0, 15))
    assert sent == [(list(range(10)), 0)] and throttle._timer is not None
    await throttle.flush()
    assert sent[-1] == ([13, 14], 3) and throttle._timer is None
    await throttle.flush()  # nothing held: nothing sent
    assert len(sent) == 2
