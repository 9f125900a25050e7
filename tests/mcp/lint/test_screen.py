"""The schema lint's compiled screen (jsonschema_rs) and jsonschema agree on every verdict, over
every definition the lint checks against (each MCP revision's and the MCP Apps schema's, alone
and as the lint combines them): on the frames of the lint's tests and the spec's examples, on
every part of those frames, on instances generated from each definition, and on those mutated.
(The frames of real peers are audited where the session, capture and check tests lint them:
tests/lint_screen.py, tests/conftest.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground.mcp.lint import definitions
from playground.mcp.lint.bridge import apps_schema
from tests.lint_screen import disagreement, verdicts
from tests.mcp.lint.test_lint import EXAMPLES, INVALID

SCHEMAS: list[definitions.Schema] = [definitions.schema(v) for v in definitions.VERSIONS] + [apps_schema()]


def _combinations(schema: definitions.Schema) -> list[tuple[str, ...]]:
    """Every definition alone, and each envelope with the definitions the lint checks in it."""
    out = [(name,) for name in schema.defs]
    if isinstance(schema, definitions.Schema) and hasattr(schema, "envelope"):
        for kind, members in (("request", schema.requests), ("notification", schema.notifications)):
            for by_method in members.values():
                for definition in by_method.values():
                    if "jsonrpc" not in schema.defs[definition].get("properties", {}):
                        out.append((schema.envelope[kind], definition))
    return sorted(set(out))


COMBINATIONS = [(schema, names) for schema in SCHEMAS for names in _combinations(schema)]


def _parts(value: Any) -> Iterator[Any]:
    """The value and every object and array inside it."""
    yield value
    if isinstance(value, dict):
        for v in value.values():
            if isinstance(v, (dict, list)):
                yield from _parts(v)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)):
                yield from _parts(v)


CORPUS: list[Any] = [json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*/*/*.json"))]
CORPUS += [message for _v, _d, message, *_ in INVALID]
PARTS = [part for frame in CORPUS for part in _parts(frame)]


# MCP Apps 2026-01-26 as published: these $ref a `#/$defs/__schema0` that exists only inside
# them (a generator's slip); jsonschema_rs refuses to build them, so jsonschema checks them alone.
UNSCREENED = {"McpUiHostContext", "McpUiHostContextChangedNotification", "McpUiInitializeResult"}


def test_every_definition_has_a_screen_but_the_apps_three_with_a_dangling_ref():
    missing = {names for schema, names in COMBINATIONS if schema.screen(*names) is None}
    assert missing == {(name,) for name in UNSCREENED}


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: s.version)
def test_the_corpus_and_its_parts_against_every_definition(schema):
    """The spec's examples and the lint tests' frames, and every object and array in them."""
    problems, valid = [], 0
    for names in _combinations(schema):
        for part in PARTS:
            problem = disagreement(schema, names, part)
            if problem is not None:
                problems.append(problem)
            elif verdicts(schema, names, part)[0]:
                valid += 1
    assert not problems, "\n".join(problems[:20])
    assert valid > 0 or schema.version == apps_schema().version  # (the corpus has no Apps message)


# Instances generated from a definition: valid ones mostly, where the generator follows the
# schema; and the same with one part replaced, removed or added (near misses).

JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from([float("nan"), float("inf"), "\ud800", "٥"])
)
JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _from(schema: definitions.Schema, node: Any, depth: int) -> st.SearchStrategy[Any]:
    """A strategy of instances meant to be valid against `node` (not always: allOf, if/then…)."""
    if node is True or node == {} or not isinstance(node, dict) or depth > 8:
        return JSON if depth <= 8 else JSON_LEAVES
    if node is False:
        return st.nothing()
    if "$ref" in node:
        return st.deferred(lambda: _from(schema, schema.defs[node["$ref"].rsplit("/", 1)[-1]], depth + 1))
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    for union in ("anyOf", "oneOf"):
        if union in node:
            return st.one_of([_from(schema, branch, depth + 1) for branch in node[union]])
    if "allOf" in node:
        return _from(schema, node["allOf"][0], depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        return st.one_of([_from(schema, {**node, "type": k}, depth) for k in kind])
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True)
        return st.text(max_size=12) | st.sampled_from(["", "2026-01-01T00:00:00Z", "https://x.test/a", "٥"])
    if kind == "integer":
        return st.integers(node.get("minimum"), node.get("maximum")) | st.just(2**64)
    if kind == "number":
        return st.floats(node.get("minimum"), node.get("maximum"), allow_nan=False) | st.integers(
            node.get("minimum"), node.get("maximum")
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(_from(schema, node.get("items", {}), depth + 1), max_size=3)
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        required = [k for k in node.get("required", []) if k in props]
        optional = [k for k in props if k not in required]
        extra = node.get("additionalProperties", True)
        return st.fixed_dictionaries(
            {k: _from(schema, props[k], depth + 1) for k in required},
            optional={k: _from(schema, props[k], depth + 1) for k in optional},
        ).flatmap(
            lambda d: (
                st.just(d)
                if extra is False
                else st.dictionaries(
                    st.text(max_size=6), _from(schema, extra if isinstance(extra, dict) else {}, 9), max_size=2
                ).map(lambda more: {**more, **d})
            )
        )
    return JSON


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*at, i))


@st.composite
def _mutated(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one part replaced by any JSON, removed, or given one more member."""
    paths = list(_paths(value))
    path = draw(st.sampled_from(paths))
    how = draw(st.sampled_from(["replace", "remove", "add"]))
    value = json.loads(json.dumps(value))  # a copy
    if not path:
        return draw(JSON) if how != "add" else value
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "replace":
        parent[last] = draw(JSON)
    elif how == "remove":
        del parent[last]
    else:
        target = parent[last]
        if isinstance(target, dict):
            target[draw(st.text(max_size=6))] = draw(JSON)
        elif isinstance(target, list):
            target.append(draw(JSON))
        else:
            parent[last] = [target]
    return value


@st.composite
def _case(draw: st.DrawFn, schema: definitions.Schema) -> tuple[tuple[str, ...], Any]:
    names = draw(st.sampled_from(_combinations(schema)))
    instance = draw(_from(schema, schema.defs[names[-1]], 0))
    if len(names) > 1:  # a message in its envelope
        instance = {**instance, "jsonrpc": "2.0", **({"id": draw(st.integers(0, 9))} if "Request" in names[0] else {})}
    if draw(st.booleans()):
        instance = draw(_mutated(instance))
    return names, instance


# 3,000 instances in all, 500 a schema: one test of 3,000 took 42 s alone, near enough the
# suite's 120 s timeout on a loaded 2-core machine; six of 6-10 s each spread over the workers.
@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: s.version)
@settings(
    max_examples=500,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_generated_instances_of_every_definition(schema, data):
    names, instance = data.draw(_case(schema))
    assert disagreement(schema, names, instance) is None


@settings(max_examples=500, deadline=None, database=None, derandomize=True)
@given(st.sampled_from(PARTS).flatmap(_mutated), st.sampled_from(COMBINATIONS))
def test_mutated_corpus_against_any_definition(instance, combination):
    schema, names = combination
    assert disagreement(schema, names, instance) is None


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 2**200, -(2**200), 1e308, 5e-324])
def test_numbers_json_loads_parses_against_every_definition(value):
    """What Python's json.loads gives a frame beyond JSON's numbers (NaN, Infinity) or beyond
    64 bits, put wherever the corpus has a number."""
    problems = []
    for schema, names in COMBINATIONS:
        for part in PARTS:
            if isinstance(part, dict):
                for k, v in part.items():
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        problem = disagreement(schema, names, {**part, k: value})
                        if problem is not None:
                            problems.append(problem)
    assert not problems, "\n".join(problems[:20])


def test_the_audit_sees_a_screen_that_disagrees(monkeypatch):
    """The check can fail: a screen that asserts formats (jsonschema_rs's default up to draft 7)
    disagrees with jsonschema on a tool whose uri is no URI."""
    import jsonschema_rs

    schema = definitions.schema("2025-06-18")
    names = ("Resource",)
    asserting = jsonschema_rs.Draft7Validator(schema.root(*names), offline=True)
    monkeypatch.setattr(schema, "screen", lambda *n: asserting)
    assert disagreement(schema, names, {"name": "r", "uri": "not a uri"}) is not None
    monkeypatch.undo()
    assert disagreement(schema, names, {"name": "r", "uri": "not a uri"}) is None


@pytest.mark.parametrize("depth", [10, 63, 64, 65, 100, 150, 199, 400])
def test_deep_values_where_a_schema_recurses(depth):
    """2026-07-28's JSONValue refers to itself: past ~100 levels jsonschema stops (RecursionError,
    the lint's "not checked") where the screen could still say "valid"; deeper than SCREEN_DEPTH
    the screen does not answer, so the verdicts stay jsonschema's."""
    value: Any = "x"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    schema = definitions.schema("2026-07-28")
    for names in _combinations(schema):
        for instance in (value, {"a": value}, {"jsonrpc": "2.0", "id": 1, "result": {"_meta": value}}):
            assert disagreement(schema, names, instance) is None
