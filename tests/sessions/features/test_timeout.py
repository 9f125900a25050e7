"""The per-request timeout."""

from __future__ import annotations

import pytest

from playground.sessions.features import BY_NAME
from tests.sessions.fakes import FakeClient, FakeSession, FakeTab


@pytest.mark.parametrize(
    ("given", "applied"),
    [("2.5", 2.5), ("0", None), ("-1", None), ("nan", None), ("abc", None), (str(24 * 3600 + 1), None)],
)
async def test_the_timeout_takes_a_sensible_number_of_seconds_only(given, applied):
    session = FakeSession(FakeClient())
    before = session.config.timeout
    timeout = session.add("timeout")
    await timeout.handle(await BY_NAME["timeout"].command("set_timeout", {"seconds": given}, FakeTab()))
    assert session.config.timeout == (applied if applied is not None else before)
    assert (timeout.error == "") == (applied is not None)
