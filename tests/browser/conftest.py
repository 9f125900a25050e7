"""Browser suite setup: a file SQLite test database, spawn-started daphne, one Chromium.

`make test` runs this folder in its own pytest invocation with DJANGO_ALLOW_ASYNC_UNSAFE=true
(Playwright's sync API runs an event loop in the test thread; Django would refuse ORM calls).
`ChannelsLiveServerTestCase` serves the app with daphne in another process, which must be
started with "spawn" (a forked copy of pytest's state is not a clean server) and must share a
database FILE with the test process.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Before Django reads its settings: the test database is a file both processes open.
_DB_DIR = Path(tempfile.mkdtemp(prefix="playground-e2e-"))
os.environ["PLAYGROUND_TEST_SQLITE_PATH"] = str(_DB_DIR / "test.sqlite3")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def pytest_configure(config: pytest.Config) -> None:
    multiprocessing.set_start_method("spawn", force=True)
    # pytest-django may have loaded the settings before this conftest was imported.
    from django.conf import settings

    if settings.configured and settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = os.environ["PLAYGROUND_TEST_SQLITE_PATH"]


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_DB_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:  # noqa: F821 - playwright type, imported lazily
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `make chromium`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def django_db_modify_db_settings_xdist_suffix() -> None:
    """No per-worker suffix on the test database's name: each worker's database file is
    already its own (`_DB_DIR` is made per process), and daphne, started by spawn, reads the
    name from PLAYGROUND_TEST_SQLITE_PATH, not from this process's suffixed settings."""
