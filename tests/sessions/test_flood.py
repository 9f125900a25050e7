"""The per-tab flood window (consumer side): a budget of lines per interval, the latest lines
held and released after a marker counting those left out, so a flood's tail always arrives."""
from __future__ import annotations

from playground.sessions.flood import PageWindow
from playground.sessions.results import MAX_TEXT, content_item


def rows(a: int, b: int) -> list[dict]:
    return [{"seq": i} for i in range(a, b)]


async def test_budget_then_hold_the_latest_then_release_with_a_marker():
    sent: list[tuple[list[int], int]] = []

    async def send(batch, skipped):
        sent.append(([r["seq"] for r in batch], skipped))

    window = PageWindow(send, budget=3, interval=0.05)
    await window.push(rows(1, 3))              # within budget: at once
    await window.push(rows(3, 9))              # one more fits, the rest is held (latest 3 kept)
    await window.push(rows(9, 11))             # still held: the window is spent
    assert sent == [([1, 2], 0), ([3], 0)]
    await window._timer                         # the interval ends: marker + the latest lines
    assert sent[-1] == ([8, 9, 10], 4)          # 4, 5, 6, 7 left out and counted
    await window.push(rows(11, 12))             # a fresh window has room again... after the held ones
    await window.close()


async def test_a_quiet_page_sends_everything_at_once():
    sent = []

    async def send(batch, skipped):
        sent.append((len(batch), skipped))

    window = PageWindow(send, budget=500, interval=60)
    for i in range(0, 400, 20):
        await window.push(rows(i, i + 20))
    assert sent == [(20, 0)] * 20 and window._timer is None


def test_huge_text_results_are_cut_on_the_page():
    item = content_item({"type": "text", "text": "x" * (MAX_TEXT + 10)})
    assert len(item["text"]) < MAX_TEXT + 200 and f"{MAX_TEXT + 10} characters in all" in item["text"]
