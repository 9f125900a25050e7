"""The structural JSON diff a replay compares responses with, and its ignore rules."""

from __future__ import annotations

import pytest

from playground import jsonpointer
from playground.mcp.replay import diff


def changes(old, new, ignore=()):
    return diff.diff(old, new, ignore).to_list()


def test_paths_old_and_new_by_key_and_index():
    old = {"result": {"content": [{"type": "text", "text": "a"}], "isError": False}}
    new = {"result": {"content": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}], "isError": False}}
    assert changes(old, new) == [
        {"path": "/result/content/0/text", "old": "a", "new": "b"},
        {"path": "/result/content/1", "new": {"type": "text", "text": "c"}},  # added: no "old"
    ]
    assert changes(new, old)[1] == {"path": "/result/content/1", "old": {"type": "text", "text": "c"}}


def test_json_equality_not_python_equality():
    assert changes({"a": 1}, {"a": 1.0}) == []  # one JSON number
    assert changes({"a": [True]}, {"a": [1]}) == [{"path": "/a/0", "old": True, "new": 1}]
    assert changes({"a": None}, {}) == [{"path": "/a", "old": None}]  # null is not absent
    assert changes({"a": {"b": 1, "c": 2}}, {"a": {"c": 2, "b": 1}}) == []  # key order is not a change
    assert changes("x", {"x": 1}) == [{"path": "", "old": "x", "new": {"x": 1}}]


def test_equal_values_in_another_key_order_are_not_walked():
    """A reordered response is the same response: found so at once, not node by node until the
    node limit stops the walk and reports a change where there is none."""
    old = {
        "result": {
            "content": [{"type": "text", "text": str(i), "meta": {"a": i, "b": [True, None]}} for i in range(2000)],
            "isError": False,
        }
    }
    reordered = {
        "result": {
            "isError": False,
            "content": [{"meta": {"b": [True, None], "a": i}, "text": str(i), "type": "text"} for i in range(2000)],
        }
    }
    found = diff.diff(old, reordered, max_nodes=10)
    assert found.changes == [] and found.complete
    reordered["result"]["content"][1500]["meta"]["b"][0] = 1  # true -> 1: a change, even reordered
    found = diff.diff(old, reordered, max_nodes=10)
    assert found.to_list() == [{"path": "/result/content/1500/meta/b/0", "old": True, "new": 1}] and found.complete
    assert changes({"a": [2**70, "\ud800"]}, {"a": [2**70, "\ud800"]}) == []  # what orjson cannot write
    assert changes({"a": [1, {"b": 2.0}]}, {"a": [1.0, {"b": 2}]}) == []


def ignores(rules: diff.Rules, path: str) -> bool:
    """Whether `path` (a JSON pointer) or one of its parents is ignored, stepped as the walk steps."""
    states = rules.start()
    if rules.matched(states):
        return True
    for segment in path[1:].split("/") if path else ():
        states = rules.step(states, jsonpointer.unescape(segment))
        if rules.matched(states):
            return True
    return False


def test_keys_are_escaped_as_json_pointers():
    assert changes({"a/b": {"~c": 1}}, {"a/b": {"~c": 2}}) == [{"path": "/a~1b/~0c", "old": 1, "new": 2}]
    assert ignores(diff.Rules(["/a~1b/~0c"]), "/a~1b/~0c")
    assert changes({"a/b": {"~c": 1}}, {"a/b": {"~c": 2}}, ["/a~1b/~0c"]) == []
    assert jsonpointer.join(["a/b", "~c", 0]) == "/a~1b/~0c/0" and jsonpointer.join([]) == ""
    assert jsonpointer.unescape("~01") == "~1" and jsonpointer.unescape(jsonpointer.escape("~/~1")) == "~/~1"


@pytest.mark.parametrize(
    "rule, path, ignored",
    [
        ("/result/content/*/text", "/result/content/3/text", True),
        ("/result/content/*/text", "/result/content/3/type", False),
        ("/result/content/*/text", "/result/content/3/text/deeper", True),  # and everything under it
        ("/**/_meta", "/_meta", True),
        ("/**/_meta", "/result/content/0/_meta/x", True),
        ("/**/_meta", "/result/meta", False),
        ("/result/**/at", "/result/at", True),  # ** may match nothing
        ("/result/**/at", "/result/a/b/c/at", True),
        ("/a/*", "/a", False),
    ],
)
def test_rules_match_segment_by_segment(rule, path, ignored):
    assert ignores(diff.Rules([rule]), path) is ignored


def test_default_rules_leave_out_ids_meta_progress_tokens_and_timestamps():
    old = {
        "id": 1,
        "result": {
            "_meta": {"x": 1},
            "task": {"taskId": "t1", "createdAt": "2026-01-01T00:00:00Z", "status": "working"},
        },
    }
    new = {
        "id": 7,
        "result": {
            "_meta": {"x": 2},
            "task": {"taskId": "t9", "createdAt": "2026-02-02T00:00:00Z", "status": "completed"},
        },
    }
    assert changes(old, new) == [{"path": "/result/task/status", "old": "working", "new": "completed"}]


def test_a_servers_rules_come_on_top_of_the_defaults():
    old = {"result": {"content": [{"text": "now: 1"}], "structuredContent": {"result": "now: 1"}}}
    new = {"result": {"content": [{"text": "now: 2"}], "structuredContent": {"result": "now: 2"}}}
    assert len(changes(old, new)) == 2
    assert changes(old, new, ["/result/content/*/text", "/result/structuredContent"]) == []


def test_rules_are_checked():
    assert diff.clean_rules(["  /a/*  ", "", "/a/*", "/b", "/*/*", "/**/x"]) == ["/a/*", "/b", "/*/*", "/**/x"]
    for bad in ["a/b", "result", "/" + "x" * 600, "/**", " /**/** ", "/*", "/**/*"]:
        with pytest.raises(diff.RuleError):
            diff.clean_rules([bad])
    with pytest.raises(diff.RuleError, match="would ignore everything"):
        diff.parse_rule("/**")
    with pytest.raises(diff.RuleError):
        diff.parse_rule("")
    with pytest.raises(diff.RuleError):
        diff.clean_rules([f"/r{i}" for i in range(diff.MAX_RULES + 1)])


def test_the_walk_is_bounded():
    old = {"items": [{"v": i} for i in range(5000)]}
    new = {"items": [{"v": -i - 1} for i in range(5000)]}
    found = diff.diff(old, new, max_changes=10)
    assert len(found.changes) == 10 and not found.complete
    found = diff.diff(old, new, max_nodes=100, max_changes=10_000)
    assert not found.complete and len(found.changes) < 200
    deep: dict = {}
    node = deep
    for _ in range(150):
        node["a"] = {}
        node = node["a"]
    assert diff.diff(deep, {"a": 1}).to_list()[0]["path"] == "/a"


def test_a_deep_value_is_compared_once_not_once_a_level(monkeypatch):
    """Down a differing path each pair of children is asked whether it is equal, and each answer
    costs the children's size: asked again at every level, a value 300 levels deep cost its size
    300 times over (seconds). Below C_LEVELS the values get tokens once, bottom-up: the JSON
    texts are made at C_LEVELS levels at most, and the answers are JSON's all the same."""

    def deep(leaf, depth=300, order=("big", "leaf")):
        parts = {"big": [{"k": i, "v": [True, 1.0, None, "x"]} for i in range(200)], "leaf": leaf}
        node = {k: parts[k] for k in order}
        for _ in range(depth):
            node = {"a": node, "n": 1}
        return node

    texts = []
    real = diff._canonical_equal

    def counting(old, new):
        texts.append(1)
        return real(old, new)

    monkeypatch.setattr(diff, "_canonical_equal", counting)
    path = "/a" * 300 + "/leaf"
    assert changes(deep([True]), deep([1])) == [{"path": path + "/0", "old": True, "new": 1}]
    assert len(texts) <= 2 * diff.C_LEVELS + 2
    assert changes(deep({"x": 1, "y": [1]}), deep({"y": [1.0], "x": 1.0}, order=("leaf", "big"))) == []
    assert changes(deep(1), deep(2)) == [{"path": path, "old": 1, "new": 2}]
    assert changes(deep({"b": False}), deep({"b": 0})) == [{"path": path + "/b", "old": False, "new": 0}]
    tokens = diff._Tokens()
    assert tokens.same([{"a": [1, "1"]}], [{"a": [1.0, "1"]}]) and not tokens.same([[1]], [[[1]]])
    assert not tokens.same({"a": None}, {"b": None}) and not tokens.same([1, 2], [2, 1])
