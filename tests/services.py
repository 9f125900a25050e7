"""PostgreSQL and Redis, for the tests that run on them (tests/scaleout/, tests/search/test_postgresql.py).

Such a test is marked `@pytest.mark.services("postgresql", "redis")` (a module: `pytestmark`);
tests/conftest.py checks the mark before the test and its fixtures run. Where a service is not
listening (a laptop) the test skips, saying why. CI's machine has both: there
`PLAYGROUND_REQUIRE_SERVICES=1` (.ci/run sets it) makes a missing one fail the test instead,
or a run would pass having tested nothing of the scale-out nor of PostgreSQL's search.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable

import pytest

POSTGRESQL = ("127.0.0.1", 5432)  # trust authentication, user postgres
REDIS = ("127.0.0.1", 6379)
ADDRESSES = {"postgresql": POSTGRESQL, "redis": REDIS}
REQUIRED = "PLAYGROUND_REQUIRE_SERVICES"


def listening(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
        return True
    except OSError:
        return False


def check(names: Iterable[str]) -> None:
    """Skip the running test when a service it names is not listening, or fail it when the
    environment says this machine has them."""
    missing = [
        f"{name} is not listening on {ADDRESSES[name][0]}:{ADDRESSES[name][1]}"
        for name in names
        if not listening(ADDRESSES[name])
    ]
    if not missing:
        return
    why = "; ".join(missing)
    if os.environ.get(REQUIRED) == "1":
        pytest.fail(f"{why}, and {REQUIRED}=1 says this machine runs it", pytrace=False)
    pytest.skip(why)
