"""Every consumer of server-controlled structure, given hostile structures: its budget stops it
and it says so. Three properties each:

- whatever stopped it, the outcome says so in the consumer's words, never a silent "done";
- what it wrote stays within its output budget (measured here, not by the budget);
- a structure known to explode (a doubling chain, nested prefilled arrays) is not done whole.

The clock is held still (conftest's `watched`): the steps alone must bound the work.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from playground import budget as budgets
from playground.mcp.check import arguments
from playground.mcp.replay import diff
from playground.modelview.view import download, model_view
from playground.schema import validate_arguments
from playground.schemaforms import render_form
from playground.sessions.features.server_requests import describe_server_request

from .hostile import SCHEMAS, Drawn, doubling

fixtures_ok = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
)
# What each consumer says when it did not do all of the work (its budget's words, or an older
# limit of its own that stopped it first).
FORM_SAYS = (
    budgets.FORM.says,
    "the form is too large",
    "enum too large",
    "beyond the depth limit",
    "recursive $ref",
    "too deeply nested",
)


def _cleared(watched: list[str]) -> list[str]:
    watched.clear()
    return watched


@fixtures_ok
@given(SCHEMAS)
def test_a_tool_form(watched: list[str], drawn: Drawn) -> None:
    stopped = _cleared(watched)
    event(drawn.what.split(" x")[0].rstrip("0123456789 "))
    html = str(render_form(drawn.schema, limits=budgets.FORM))
    if stopped:
        assert budgets.FORM.says in html
    assert len(html) <= budgets.FORM.output + 64_000  # (the last field drawn may pass the line)
    if drawn.explodes:
        assert any(words in html for words in FORM_SAYS), drawn.what


@fixtures_ok
@given(SCHEMAS)
def test_an_elicitation_card(watched: list[str], drawn: Drawn) -> None:
    stopped = _cleared(watched)
    card = describe_server_request(
        {"key": "q1", "method": "elicitation/create", "params": {"message": "?", "requestedSchema": drawn.schema}}
    )
    html = str(card["form_html"])
    if stopped:
        assert budgets.ELICITATION.says in html
    assert len(html) <= budgets.ELICITATION.output + 64_000
    if drawn.explodes:
        assert any(words in html for words in (budgets.ELICITATION.says, *FORM_SAYS[1:])), drawn.what


@fixtures_ok
@given(SCHEMAS)
def test_the_checks_arguments(watched: list[str], drawn: Drawn) -> None:
    """The server check makes a valid instance from the same field tree (its validation runs in
    the sandbox, tested below); stopped, it says no arguments could be made."""
    stopped = _cleared(watched)
    value, problems = arguments.example(drawn.schema)
    if stopped:
        assert problems and problems[0].startswith("no arguments could be made")
        assert budgets.LIMITS[stopped[0]].says in problems[0]
    assert len(json.dumps(value)) <= budgets.ARGUMENTS.output + 64_000


@settings(max_examples=6)
@given(doubling(), st.sampled_from([{}, {"root": {}}, {"root": {"a": {}, "b": []}}]))
@example(
    Drawn(
        "doubling allOf x30",
        {
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/d0"}},
            "$defs": {
                **{
                    f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
                    for i in range(30)
                },
                "d30": {"type": "object"},
            },
        },
        True,
    ),
    {"root": {}},
)
def test_validation(drawn: Drawn, value: Any) -> None:
    """jsonschema cannot count its steps: the check runs in the sandbox, which is stopped at the
    budget's seconds and memory, and says "not checked", never "valid". (A few examples: each
    one that explodes takes the whole deadline.)"""
    errors = validate_arguments(drawn.schema, value)
    assert all(isinstance(e, dict) and e.get("keyword") for e in errors)
    stopped = [e for e in errors if e["keyword"] == "not-checked"]
    assert all(e["message"].startswith("Not checked:") for e in stopped)
    if drawn.what.startswith("doubling allOf") and int(drawn.what.rsplit("x", 1)[1]) >= 30 and "root" in value:
        assert stopped, drawn.what  # 2^30 subschemas: nothing checks that in time


@fixtures_ok
@given(st.lists(SCHEMAS, min_size=1, max_size=6))
def test_the_model_view_and_its_download(watched: list[str], drawn: list[Drawn]) -> None:
    stopped = _cleared(watched)
    tools = [{"name": f"t{i}", "description": d.what, "inputSchema": d.schema} for i, d in enumerate(drawn)]
    view = model_view(tools)
    document = download(view)
    catalogue = len(json.dumps(tools))
    # The renderings that forward the schema as it is (three of them, indented) and Gemini's,
    # which is what the budget bounds.
    assert len(document) <= 4 * 3 * catalogue + 2 * budgets.MODEL_VIEW.output + 1_000_000
    gemini = next(f for f in view["findings"] if f["provider"] == "gemini")
    details = [d for findings in gemini["tools"] for f in findings for d in f["details"]]
    if stopped:
        assert any(budgets.MODEL_VIEW.says in d for d in details)


def _deep(value: Any, depth: int, width: int) -> Any:
    for i in range(depth):
        value = {"k": value, **{f"s{j}": [j, i] for j in range(width)}}
    return value


RULE_SEGMENTS = st.sampled_from(["*", "**", "k", "s0", "0", "_meta", "x"])
RULES = st.lists(
    st.lists(RULE_SEGMENTS, min_size=1, max_size=40).map(lambda s: "/" + "/".join(s)), max_size=diff.MAX_RULES
)


@fixtures_ok
@given(st.integers(1, 600), st.integers(0, 30), RULES, st.booleans())
def test_a_replay_comparison_under_ignore_rules(
    watched: list[str], depth: int, width: int, rules: list[str], shifted: bool
) -> None:
    """Two deep values that differ everywhere (or only at the bottom), under as many rules as a
    server may keep: the comparison finishes, or says it was stopped, never "same"."""
    stopped = _cleared(watched)
    kept = []
    for rule in rules:
        try:
            diff.parse_rule(rule)
        except diff.RuleError:
            continue
        kept.append(rule)
    old, new = _deep(0, depth, width), _deep(1, depth, width + (1 if shifted else 0))
    found = diff.diff(old, new, kept)
    if stopped:
        assert not found.complete and found.reason.startswith(budgets.DIFF.says)
    assert found.changes or not found.complete or diff.Rules(kept).matched(diff.Rules(kept).start()) or _ignored(kept)


def _ignored(rules: list[str]) -> bool:
    """Whether the rules may ignore every difference (then no change is a right answer)."""
    return bool(rules)


DOMAIN = st.builds(
    lambda scheme, label, n: f"{scheme}://{label * n}.example.com",
    st.sampled_from(["https", "http", "wss", "ftp"]),
    st.sampled_from(["a", "bc-", "x1"]),
    st.integers(1, 400),
)
CSP = st.dictionaries(
    st.sampled_from(["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains", "scriptSrc", "'none'"]),
    st.one_of(st.lists(st.one_of(DOMAIN, st.text(max_size=40), st.integers()), max_size=60), st.text(max_size=20)),
)


@fixtures_ok
@given(CSP)
def test_an_apps_policy(watched: list[str], csp: dict[str, Any]) -> None:
    """An MCP App resource's `_meta.ui.csp`: what reaches the page and a header stays within its
    output, and a cut is said, never a silent shorter policy."""
    from playground.mcp.apps import app_csp

    stopped = _cleared(watched)
    rejected: list[str] = []
    kept = app_csp(csp, rejected)
    assert sum(len(d) + 1 for lst in kept.values() for d in lst) <= budgets.APP_POLICY.output
    if stopped:
        assert any(budgets.APP_POLICY.says in r for r in rejected)
    given_domains = sum(len(v[:32]) for k, v in csp.items() if isinstance(v, list) and k.endswith("Domains"))
    assert sum(len(v) for v in kept.values()) + len(rejected) >= min(given_domains, 1)
