"""Notification counts, by method."""

from __future__ import annotations

import re

from tests.sessions.fakes import FakeClient, FakeSession


async def test_counts_tally_notifications_by_method_busiest_first_and_bound_what_a_server_invents():
    from playground.sessions.features import counts as counts_module

    session = FakeSession(FakeClient())
    counts = session.add("counts")
    for method in ["notifications/message"] * 3 + ["notifications/<b>odd</b>"] + ["notifications/progress"] * 2:
        counts.on_notification({"method": method})
    table = counts.snapshot()[0]["event"]["html"]
    rows = [(m, int(n)) for m, n in re.findall(r"<tr><td><code>(.*?)</code></td><td class=\"num\">(\d+)", table)]
    assert rows == [
        ("notifications/message", 3),
        ("notifications/progress", 2),
        ("notifications/&lt;b&gt;odd&lt;/b&gt;", 1),
    ]
    for i in range(counts_module.METHODS_KEPT + 50):
        counts.on_notification({"method": f"x/{i}"})
    assert len(counts.counts) == counts_module.METHODS_KEPT + 1 and counts.counts[counts_module.OTHER] >= 50
    await session.settle()
    assert len(session.published) == 1  # one update for the whole burst
