"""The sandbox: checks against a server's schema that would run for ever are stopped at their
deadline and reported "not checked", and the next check runs in a fresh child."""

from __future__ import annotations

import pytest

from playground.schema import _sandbox as sandbox
from playground.schema import _validation
from playground.schema._sandbox import Sandbox
from tests.peers.misbehaving import BOMBS

SCHEMA_BOMB, UNIQUE_BOMB = BOMBS["schema-bomb"], BOMBS["unique-bomb"]
BIG = {
    "type": "object",
    "properties": {
        "rows": {
            "type": "array",
            "items": {"type": "object", "required": ["i"], "properties": {"i": {"type": "integer"}}},
        }
    },
}


@pytest.fixture
def quick(monkeypatch) -> Sandbox:
    """The process's sandbox, with a deadline a test can wait for."""
    box = Sandbox(children=1, deadline=0.5)
    monkeypatch.setattr(sandbox, "SANDBOX", box)
    yield box
    for child in box._idle:
        child.kill()


@pytest.mark.parametrize("bomb", [SCHEMA_BOMB, UNIQUE_BOMB], ids=["doubling $ref chain", "uniqueItems"])
def test_a_check_that_would_run_for_ever_is_stopped_and_said_not_checked(quick, bomb):
    schema, value = bomb
    errors = sandbox.validate_arguments(schema, value)
    assert [e["keyword"] for e in errors] == ["not-checked"]
    assert "checking it took longer than 0.5 s" in errors[0]["message"]
    assert quick._count == 0  # the child was killed, not kept busy
    # The next check gets a fresh child and its real answer.
    rows = {"rows": [{"i": i} for i in range(500)] + [{"i": "x"}]}
    assert [e["pointer"] for e in sandbox.validate_arguments(BIG, rows)] == ["/rows/500/i"]
    assert quick._count == 1


def test_what_jsonschema_would_check_for_minutes_the_screen_passes_in_time(quick):
    """uniqueItems over 20,000 distinct objects: jsonschema compares them pairwise (minutes), the
    compiled screen passes them well within the deadline (the bomb above repeats one: invalid,
    so jsonschema is asked where, and is stopped)."""
    schema, value = UNIQUE_BOMB
    rows = value["rows"][:-1]
    assert len({r["i"] for r in rows}) == len(rows) and value["rows"][-1] in rows
    assert sandbox.validate_arguments(schema, {"rows": rows}) == []


def test_the_sandbox_gives_what_the_in_process_check_gives(quick):
    """Paths, messages and keywords come back as _validation.validate_arguments makes them, including
    values JSON carries but orjson does not (lone surrogates, integers beyond 64 bits)."""
    values = [{"rows": [{"i": 2**70}, {"i": "x\udc80"}, {}] * 200}, {"rows": "no"}, {"rows": []}]
    for value in values:
        assert quick.call("validate", schema=BIG, instance=value) == _validation.validate_arguments(BIG, value)


def test_small_checks_without_references_run_in_the_calling_thread(quick):
    schema = {"type": "object", "properties": {"result": {"type": "integer"}}}
    assert sandbox.validate_arguments(schema, {"result": "x"})[0]["pointer"] == "/result"
    assert quick._count == 0  # no child was needed
    assert not sandbox._small({"$ref": "#/$defs/a", "$defs": {"a": {}}}, 1)  # references multiply work
    assert not sandbox._small(schema, {"result": "x" * 5000})


def test_branch_matching_is_bounded_too(quick):
    schema, _ = SCHEMA_BOMB
    assert sandbox.matches(schema, schema["properties"]["n"], 1) is False  # stopped, so "no"
    assert sandbox.matches(schema, {"type": "integer"}, 1) is True
    assert sandbox.matches(schema, {"type": "integer"}, 1, seconds=0) is False  # no time left
