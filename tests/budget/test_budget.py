"""The budget itself, and the holes it closed (issue 30's items 2 and 6), each reproduced."""

from __future__ import annotations

import html

import pytest

from playground import budget as budgets
from playground.mcp.replay import diff
from playground.schema import build_fields
from playground.schemaforms import parse_form, render_form

from .hostile import enum_of


def ticking(step: float) -> tuple[list[float], object]:
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return now, clock


def test_steps_output_and_the_clock_each_stop_work_and_say_which():
    limits = budgets.Limits("thing", steps=1000, output=100, seconds=1.0, says="too large to show")
    b = limits.budget(clock=lambda: 0.0)
    b.spend(1000)
    with pytest.raises(budgets.OverBudget) as caught:
        b.spend()
    assert caught.value.reason == "too large to show: more than 1,000 steps of work"
    b = limits.budget(clock=lambda: 0.0)
    b.emit(100)
    with pytest.raises(budgets.OverBudget, match="more than 100 characters of output"):
        b.emit(1)
    _, clock = ticking(0.01)  # each look at the clock: 10 ms later
    b = budgets.Limits("slow", steps=10**9, output=0, seconds=1.0, says="not checked").budget(clock=clock)
    with pytest.raises(budgets.OverBudget, match="more than 1 s"):
        for _ in range(1000):
            b.spend(budgets.CLOCK_EVERY // 2)  # (the clock is read every CLOCK_EVERY steps)
    assert b.spent_steps < 1000 * budgets.CLOCK_EVERY // 2


def test_a_part_spends_from_its_whole_and_cannot_take_more_than_its_own():
    whole = budgets.Limits("whole", steps=100, output=1000, seconds=9, says="too large").budget(clock=lambda: 0.0)
    part = budgets.Limits("part", steps=60, output=600, seconds=9, says="too large here")
    first = whole.part(part)
    with pytest.raises(budgets.OverBudget, match="here: more than 600 characters"):
        first.emit(601)
    second = whole.part(part)
    with pytest.raises(budgets.OverBudget, match="^too large: more than 1,000 characters"):
        second.emit(500)  # 601 + 500 > the whole's 1,000
    assert budgets.LIMITS["model view"] is budgets.MODEL_VIEW


@pytest.fixture
def steps_only(monkeypatch):
    """Budgets whose clock stands still: the steps stop the work, as these tests say, even on a
    machine so loaded that the seconds would run out first (CI's, -n 4 on two cores)."""
    original = budgets.Limits.budget
    monkeypatch.setattr(budgets.Limits, "budget", lambda self, clock=None: original(self, lambda: 0.0))


def doubling_all_of(depth: int, leaf: dict | None = None) -> dict:
    """2 KB at depth 26: `allOf` of the next entry twice, at every level (2^depth merges)."""
    defs = {f"e{i}": {"allOf": [{"$ref": f"#/$defs/e{i + 1}"}, {"$ref": f"#/$defs/e{i + 1}"}]} for i in range(depth)}
    defs[f"e{depth}"] = leaf or {"type": "object", "properties": {"x": {"type": "string"}}}
    return {"type": "object", "properties": {"answer": {"$ref": "#/$defs/e0"}}, "$defs": defs}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("limits", [budgets.FORM, budgets.ELICITATION], ids=lambda limits: limits.name)
def test_a_doubling_allof_chain_becomes_one_json_field_that_says_why(limits, steps_only):
    """Depth 26 stopped every request of the process for a minute and more (the elicitation
    cards on the event loop; a tool form took 4.8 s at depth 19)."""
    page = html.unescape(str(render_form(doubling_all_of(26), limits=limits)))
    assert f"the schema is {limits.says}: more than {limits.steps:,} steps of work" in page
    assert 'data-sf-kind="json"' in page and "data-sf-root" in page


@pytest.mark.timeout(60)
def test_a_form_too_costly_to_draw_is_one_json_field_and_parses_as_one(steps_only):
    """Twelve nested arrays of minItems 50: a small tree, 50^12 inputs prefilled."""
    schema: dict = {"type": "string"}
    for _ in range(12):
        schema = {"type": "array", "minItems": 50, "items": schema}
    schema = {"type": "object", "properties": {"grid": schema}, "required": ["grid"]}
    page = html.unescape(str(render_form(schema)))
    assert f"the schema is {budgets.FORM.says}: more than {budgets.FORM.steps:,} steps of work" in page
    assert page.count("data-sf-kind=") == 1
    # (The field tree the parser reads is the renderer's: the form the page sent is read back.)
    assert parse_form({"type": "object", "properties": {"n": {"type": "integer"}}}, {"args.n": "3"}) == ({"n": 3}, [])


def test_the_tree_of_a_schema_is_made_once_for_the_renderer_and_the_parser():
    schema = doubling_all_of(24)
    assert build_fields(schema) is build_fields(schema)
    assert build_fields(schema).over_budget and build_fields(schema, label="other").over_budget


def test_what_the_form_builder_spends_grows_with_the_schema_not_with_its_expansion(monkeypatch):
    """Counted: a chain 20 deep spends what the budget allows and no more; a flat schema of the
    same size spends little."""
    spent: list[int] = []
    original = budgets.Limits.budget

    def recording(self: budgets.Limits, clock=None) -> budgets.Budget:
        made = original(self, lambda: 0.0)
        spent.append(id(made))
        recording.made.append(made)  # type: ignore[attr-defined]
        return made

    recording.made = []  # type: ignore[attr-defined]
    monkeypatch.setattr(budgets.Limits, "budget", recording)
    build_fields(doubling_all_of(20, leaf=enum_of(3)))
    assert recording.made[-1].steps < 0 or recording.made[-1].spent_steps >= budgets.FORM.steps
    flat = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(60)}}
    build_fields(flat)
    assert recording.made[-1].spent_steps < 200


# --- ignore rules (item 6) ------------------------------------------------------------------------


def test_runs_of_double_stars_are_one_and_rules_hold_few_of_them():
    """100 rules of 160 `**` each were accepted, and one POST of them took 88 s of CPU: a run of
    `**` is one, and a rule holds at most MAX_RULE_STARS of them."""
    assert diff.parse_rule("/**" * 160 + "/_meta") == ("**", "_meta")
    assert diff.parse_rule("/a/**/b/**/c/**/d/**/e") == ("a", "**", "b", "**", "c", "**", "d", "**", "e")
    with pytest.raises(diff.RuleError, match=f"at most {diff.MAX_RULE_STARS} \\*\\* segments"):
        diff.parse_rule("/" + "/".join(["**", "a"] * (diff.MAX_RULE_STARS + 1)))


@pytest.mark.timeout(60)
def test_the_hundred_rules_of_160_double_stars_compare_a_replay_at_once():
    rules = diff.clean_rules(["/**" * 160 + f"/x{j}" for j in range(diff.MAX_RULES)])
    old, new = {}, {}
    for i in range(300):
        old, new = {"k": old, "v": i}, {"k": new, "v": -i}
    found = diff.diff(old, new, rules)
    assert len(found.changes) == diff.MAX_CHANGES and not found.reason  # (stopped by MAX_CHANGES: there are more)


@pytest.mark.timeout(60)
def test_a_comparison_under_the_costliest_rules_allowed_stops_at_its_budget_and_says_so():
    """Rules as costly as they may be, on a pair that differs all the way down: stopped by the
    budget, and a replay row says `unchecked`, never `same`."""
    from playground.mcp.replay import compare_response

    rules = ["/" + "/".join(["**", f"k{j}"] * diff.MAX_RULE_STARS + ["x" * 5] * 40) for j in range(diff.MAX_RULES)]
    compiled = diff.rules(diff.clean_rules(rules))  # allowed
    old, new = {}, {}
    for i in range(3000):
        old, new = {"k": old, "v": i}, {"k": new, "v": -i}
    found = diff.diff(old, new, compiled)
    assert not found.complete and found.reason.startswith(budgets.DIFF.says)
    status, changes, complete, detail = compare_response({"result": old}, {"result": new}, rules=compiled)
    assert (status, changes, complete) == ("unchecked", [], False) and detail.startswith(budgets.DIFF.says)
