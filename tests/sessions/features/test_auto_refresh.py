"""Auto refresh: list_changed refreshes the catalogue, until turned off.

The feature alone, with a fake SessionContext and client (tests/sessions/fakes.py); against real
servers where it says so."""
from __future__ import annotations



from playground.sessions.features import BY_NAME
from tests.sessions.fakes import FakeClient, FakeSession, FakeTab


async def test_auto_refresh_refreshes_on_list_changed_until_turned_off():
    session = FakeSession(FakeClient())
    auto = session.add("auto_refresh")
    auto.on_notification({"method": "notifications/tools/list_changed"})
    await session.settle()
    await auto.handle(await BY_NAME["auto_refresh"].command("auto_refresh", {}, FakeTab()))
    auto.on_notification({"method": "notifications/tools/list_changed"})
    await session.settle()
    assert session.refreshes == 1 and not auto.on
