"""The search tests again, on PostgreSQL for real: test_search_db.py (and the session page's
window around a line) in a pytest of their own whose DATABASE_URL names a database of this run
(pytest-django creates `test_<name>` and drops it). Needs PostgreSQL on 127.0.0.1:5432 (trust
authentication, user postgres, as tests/scaleout/ uses it): skips without it, saying why, or
fails where PLAYGROUND_REQUIRE_SERVICES=1 (tests/services.py)."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.services import POSTGRESQL as PG

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    "tests/search/test_search_db.py",
    "tests/sessions/test_transcript_window.py",
    # The transcript's saves (COPY through a temporary table there): idempotent, problems counted once.
    "tests/sessions/live/test_recorder.py::test_save_events_spans_several_statements_and_saving_again_changes_nothing",
    "tests/sessions/live/test_recorder.py::test_a_save_that_fails_saves_nothing_and_the_next_one_saves",
    "tests/sessions/features/test_schema_lint.py::test_saving_a_batch_again_counts_its_problems_once",
    "tests/sessions/live/test_hostile.py::test_a_row_that_cannot_be_encoded_is_saved_from_its_raw_text_with_the_rest_of_its_batch",
]
RUN_LIMIT = 240  # seconds for that pytest (it takes 10-50 s on a loaded machine)

pytestmark = pytest.mark.services("postgresql")


@pytest.mark.timeout(RUN_LIMIT + 60)  # (the run's own limit comes first: the database is dropped)
def test_search_and_the_line_window_on_postgresql():
    import psycopg

    name = f"playground_search_{secrets.token_hex(4)}"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "PLAYGROUND_TEST_SQLITE")) and key != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    env["DATABASE_URL"] = f"postgres://postgres@{PG[0]}:{PG[1]}/{name}"
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "--create-db", *FILES],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_LIMIT,
        )
    finally:
        with psycopg.connect(f"postgresql://postgres@{PG[0]}:{PG[1]}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "test_{name}" WITH (FORCE)')
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert re.fullmatch(r"\d+ passed in .*", summary), summary  # nothing skipped, nothing failed
