"""The official conformance suite's client scenarios, run against our headless adapter
(`manage.py mcp_conformance`), one test per (scenario, spec version) pair.

A pair passes only strictly: at least one check ran, none failed, none warned, and the
adapter exited 0 in time (the suite itself prints PASSED for 0/0 checks).
"""
from __future__ import annotations

import pytest

from playground.core.management.commands.mcp_conformance_table import (
    CONFORMANCE, NODE22_BIN, SCENARIOS, client_pairs, format_table, run_pair,
)

if not CONFORMANCE.exists() or not (NODE22_BIN / "node").exists():
    pytest.fail("the conformance suite or Node 22 is not installed: run `make peers`", pytrace=False)

PAIRS = client_pairs()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("scenario", "version"), PAIRS, ids=[f"{s}@{v}" for s, v in PAIRS])
def test_client_scenario(scenario: str, version: str) -> None:
    result = run_pair(scenario, version, timeout=55)
    assert result.strict_pass, result.explain()


def test_pairs_cover_every_scenario_at_every_listed_version() -> None:
    assert [s for s in SCENARIOS if s not in {s for s, _ in PAIRS}] == []
    assert ("tools_call", "2025-06-18") in PAIRS and ("tools_call", "2026-07-28") in PAIRS


@pytest.mark.timeout(60)
def test_a_client_that_does_nothing_is_not_a_pass() -> None:
    """The suite reports PASSED (exit 0) with 0/0 checks here; the table must not."""
    result = run_pair("initialize", "2025-11-25", command="true")
    assert result.exit_code == 0 and result.passed == 0
    assert not result.strict_pass
    assert "FAIL" in format_table([result])
