"""The notifications feed."""

from __future__ import annotations

from tests.sessions.fakes import FakeClient, FakeSession, html_of


async def test_feed_shows_every_notification_but_log_messages_and_replays_the_recent_ones():
    session = FakeSession(FakeClient())
    feed = session.add("feed")
    for i in range(30):
        feed.on_notification({"method": "notifications/resources/updated", "params": {"uri": f"r://{i}"}})
    await session.settle()
    burst = html_of(session)
    assert "… 10 more notifications" in burst  # the latest 20 shown, the rest counted
    assert "r://29" in burst and "r://0<" not in burst
    replay = feed.snapshot()[0]["event"]["html"]
    assert 'hx-swap-oob="innerHTML"' in replay and "r://0" in replay and "r://29" in replay
