"""A structural diff of two JSON values, with ignore rules: what a replay compares.

Paths are JSON pointers (RFC 6901: `/result/content/0/text`, `~0` for `~` and `~1` for `/` in a
key). An ignore rule is a pointer pattern whose segments may be `*` (any one segment) or `**`
(any number of segments, none included); a rule ignores the value at every path it matches and
everything under it. `/result/content/*/text` ignores the text of every content item (a clock
server's), `/**/_meta` every `_meta` object at any depth.

The values are a server's: the walk is bounded (`max_nodes`, `max_changes`), equal subtrees are
skipped at C speed (`==`, then key-order-free JSON text from orjson), before any rule is stepped
or path made for them, and a rule is matched one segment at a time as the walk goes down (a set
of positions per rule, never a backtracking match). Asking whether two children are equal costs
their size, and the walk asks again at each level down a differing path: below C_LEVELS levels,
each value gets a token once instead, bottom-up (`_Tokens`), so a deep value costs its size once,
not its size times its depth (8 to 17 s for a half-megabyte pair 500 levels deep, here 1 s).

Equality is JSON's: key order is not a difference, `1` and `1.0` are one number (JSON has one
number type), but `true` is not `1` (two JSON types; Python's `==` says they are equal).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from playground import jsonpointer
from playground.budget import DIFF, Budget, OverBudget

# Ignored by every comparison, on top of a server's own rules: what differs from one run to the
# next by design — JSON-RPC ids, `_meta` (the protocol's side channel: versions, client facts,
# related tasks), progress tokens, the ids of tasks and of URL-mode elicitations (issued anew each
# run), and the timestamps of the protocol's known fields.
DEFAULT_IGNORE: tuple[str, ...] = (
    "/id",
    "/**/_meta",
    "/**/progressToken",
    "/**/taskId",
    "/**/elicitationId",
    "/**/createdAt",
    "/**/lastUpdatedAt",
    "/**/lastModified",
    "/**/timestamp",
)
MAX_NODES = 200_000  # values visited per comparison, beyond which the rest is compared whole
MAX_CHANGES = 200  # changes reported per comparison
MAX_RULES = 100  # rules a server may keep
MAX_RULE_CHARS = 500
MAX_RULE_STARS = 4  # `**` a rule may hold (a run of them is one): each one a position kept at every step
C_LEVELS = 16  # levels of the walk comparing children whole at C speed (then: _Tokens)

_ABSENT: Any = object()


class RuleError(ValueError):
    """An ignore rule that is not a JSON pointer pattern."""


@dataclass(frozen=True, slots=True)
class Change:
    """One path where the two values differ; `old`/`new` absent (the sentinel) when the member
    or item exists on one side only."""

    path: str
    old: Any = _ABSENT
    new: Any = _ABSENT

    def to_dict(self) -> dict[str, Any]:
        """`{path, old, new}`, without `old` for an added value and without `new` for a removed one."""
        out: dict[str, Any] = {"path": self.path}
        if self.old is not _ABSENT:
            out["old"] = self.old
        if self.new is not _ABSENT:
            out["new"] = self.new
        return out


@dataclass
class Diff:
    changes: list[Change]
    complete: bool = True  # False: a limit stopped the walk (more changes may exist)
    reason: str = ""  # why, when the budget stopped it

    def __bool__(self) -> bool:
        return bool(self.changes)

    def to_list(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.changes]


def parse_rule(rule: str) -> tuple[str, ...]:
    """A rule's segments (unescaped; `*` and `**` kept as wildcards). A rule that would ignore
    everything is refused: `""` (the whole value), `/**` (every path, the whole value included),
    `/*` (every member of a response: its whole result or error), and the like."""
    rule = rule.strip()
    if not rule.startswith("/"):
        raise RuleError(f"{rule!r} is not a JSON pointer: it must start with /")
    if len(rule) > MAX_RULE_CHARS:
        raise RuleError(f"a rule is at most {MAX_RULE_CHARS} characters")
    pattern = tuple(s if s in ("*", "**") else jsonpointer.unescape(s) for s in rule[1:].split("/"))
    pattern = tuple(s for i, s in enumerate(pattern) if not (s == "**" and i and pattern[i - 1] == "**"))
    if pattern.count("**") > MAX_RULE_STARS:
        raise RuleError(
            f"{rule[:60]!r}…: a rule holds at most {MAX_RULE_STARS} ** segments"
            if len(rule) > 60
            else f"{rule!r}: a rule holds at most {MAX_RULE_STARS} ** segments"
        )
    if all(s in ("*", "**") for s in pattern) and pattern.count("*") <= 1:
        raise RuleError(f"{rule!r} would ignore everything: name what to leave out, e.g. /result/content/*/text")
    return pattern


def clean_rules(lines: Iterable[str]) -> list[str]:
    """Rules as a person types them (one per line, blanks skipped, duplicates dropped), each
    checked; raises RuleError naming the first bad one."""
    rules: list[str] = []
    for line in lines:
        line = line.strip()
        if line and line not in rules:
            parse_rule(line)
            rules.append(line)
    if len(rules) > MAX_RULES:
        raise RuleError(f"at most {MAX_RULES} rules")
    return rules


class Rules:
    """Compiled ignore rules, matched segment by segment (an NFA per rule: a set of positions)."""

    def __init__(self, rules: Iterable[str] = ()) -> None:
        self.patterns = [parse_rule(r) for r in rules]
        # What one `step` may cost at most: every position of every rule (the walk's budget
        # takes it at each step, so the rules' size bounds how far a comparison goes).
        self.cost = sum(len(p) + 1 for p in self.patterns)

    def start(self) -> tuple[frozenset[int], ...]:
        return tuple(self._close(p, {0}) for p in self.patterns)

    @staticmethod
    def _close(pattern: tuple[str, ...], positions: set[int]) -> frozenset[int]:
        """Positions reachable by letting each `**` match nothing."""
        out = set(positions)
        stack = list(positions)
        while stack:
            i = stack.pop()
            if i < len(pattern) and pattern[i] == "**" and i + 1 not in out:
                out.add(i + 1)
                stack.append(i + 1)
        return frozenset(out)

    def step(self, states: tuple[frozenset[int], ...], segment: str) -> tuple[frozenset[int], ...]:
        out = []
        for pattern, positions in zip(self.patterns, states):
            nxt: set[int] = set()
            for i in positions:
                if i >= len(pattern):
                    continue
                token = pattern[i]
                if token == "**":
                    nxt.add(i)  # it takes this segment and may take more
                elif token == "*" or token == segment:
                    nxt.add(i + 1)
            out.append(self._close(pattern, nxt) if nxt else frozenset())
        return tuple(out)

    def matched(self, states: tuple[frozenset[int], ...]) -> bool:
        return any(len(p) in s for p, s in zip(self.patterns, states))


def rules(extra: Sequence[str] = ()) -> Rules:
    """The default rules and `extra` (a server's own), compiled."""
    return Rules([*DEFAULT_IGNORE, *extra])


def diff(
    old: Any,
    new: Any,
    ignore: Rules | Sequence[str] | None = None,
    *,
    max_nodes: int = MAX_NODES,
    max_changes: int = MAX_CHANGES,
    budget: Budget | None = None,
) -> Diff:
    """Where `new` differs from `old`, path by path (objects by key, arrays by index), leaving
    out what `ignore` matches (default: DEFAULT_IGNORE only), within `budget` (`budget.DIFF`
    by default): past it, the changes found so far, not complete, and why."""
    compiled = ignore if isinstance(ignore, Rules) else rules(ignore or ())
    walk = _Walk(compiled, max_nodes, max_changes, budget or DIFF.budget())
    try:
        if not _same(old, new):
            walk.visit(old, new, "", compiled.start())
    except OverBudget as exc:
        return Diff(walk.changes, complete=False, reason=exc.reason)
    return Diff(walk.changes, complete=not walk.stopped)


class _Walk:
    def __init__(self, ignore: Rules, max_nodes: int, max_changes: int, budget: Budget) -> None:
        self.ignore = ignore
        self.nodes_left = max_nodes
        self.max_changes = max_changes
        self.changes: list[Change] = []
        self.stopped = False
        self.budget = budget
        self.tokens = _Tokens(budget)

    def visit(self, old: Any, new: Any, path: str, states: tuple[frozenset[int], ...], depth: int = 0) -> None:
        """`old` and `new` differ (the caller asked `_same`): where, under `path`."""
        if self.stopped or self.ignore.matched(states):
            return
        if len(self.changes) >= self.max_changes:
            self.stopped = True  # there is more
            return
        self.budget.spend(1 + len(old) if isinstance(old, (dict, list)) else 1)
        self.nodes_left -= 1
        if self.nodes_left <= 0:
            self.stopped = True
            self.changes.append(Change(path, old, new))  # this one whole, and no further
            return
        same = _same if depth < C_LEVELS else self.tokens.same
        if isinstance(old, dict) and isinstance(new, dict):
            for key in [*old, *(k for k in new if k not in old)]:
                a, b = old.get(key, _ABSENT), new.get(key, _ABSENT)
                if not same(a, b):
                    seg = str(key)
                    self.budget.spend(self.ignore.cost)
                    self.visit(a, b, f"{path}/{jsonpointer.escape(seg)}", self.ignore.step(states, seg), depth + 1)
        elif isinstance(old, list) and isinstance(new, list):
            for i in range(max(len(old), len(new))):
                a, b = old[i] if i < len(old) else _ABSENT, new[i] if i < len(new) else _ABSENT
                if not same(a, b):
                    self.budget.spend(self.ignore.cost)
                    self.visit(a, b, f"{path}/{i}", self.ignore.step(states, str(i)), depth + 1)
        else:
            self.changes.append(Change(path, old, new))


def _same(old: Any, new: Any) -> bool:
    """JSON equality (see the module's docstring). Containers: Python's `==` (C speed, blind to
    key order, but true == 1), then their key-order-free JSON texts (true is not 1 there, nor
    is 1.0 written as 1: a pair differing only so is walked, finding only real differences)."""
    if old is _ABSENT or new is _ABSENT:
        return old is new
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        if type(old) is not type(new):
            return False
        try:
            return bool(old == new) and _canonical_equal(old, new)
        except RecursionError:
            return False
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    if type(old) is not type(new) and not (isinstance(old, (int, float)) and isinstance(new, (int, float))):
        return False
    return bool(old == new)


def _canonical_equal(old: Any, new: Any) -> bool:
    """Whether the two have the same JSON text with keys sorted: orjson (in C), or the standard
    library for what orjson refuses (integers beyond 64 bits, lone surrogates, deep nesting)."""
    try:
        return orjson.dumps(old, option=orjson.OPT_SORT_KEYS) == orjson.dumps(new, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(old, sort_keys=True) == json.dumps(new, sort_keys=True)


class _Tokens:
    """Each JSON value a token, equal values (as `_same` has them) one token: a container's is
    made once, from its members' (hash-consing), bottom-up and without recursion. Comparing two
    children is then comparing two tokens, however deep the walk is."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget or DIFF.budget()
        self._by_shape: dict[tuple[Any, ...], object] = {}
        self._tokens: dict[int, object] = {}  # id(container) -> its token
        self._kept: list[Any] = []  # those containers (while kept, no other has their id)

    def same(self, old: Any, new: Any) -> bool:
        if isinstance(old, (dict, list)) and isinstance(new, (dict, list)):
            return type(old) is type(new) and len(old) == len(new) and self.token(old) is self.token(new)
        return _same(old, new)

    def token(self, value: dict[str, Any] | list[Any]) -> object:
        tokens, shapes = self._tokens, self._by_shape
        stack: list[Any] = [value]
        while stack:
            node = stack[-1]
            if id(node) in tokens:
                stack.pop()
                continue
            members = node.values() if isinstance(node, dict) else node
            waiting = [m for m in members if isinstance(m, (dict, list)) and id(m) not in tokens]
            if waiting:
                stack += waiting
                continue
            stack.pop()
            self.budget.spend(1 + len(node))
            if isinstance(node, dict):
                shape: tuple[Any, ...] = ("d", *sorted((k, _member(v, tokens)) for k, v in node.items()))
            else:
                shape = ("l", *[_member(v, tokens) for v in node])
            token = shapes.get(shape)
            if token is None:
                token = shapes[shape] = object()
            tokens[id(node)] = token
            self._kept.append(node)
        return tokens[id(value)]


def _member(value: Any, tokens: dict[int, object]) -> Any:
    """A member in its container's shape: a container's token, a boolean marked (JSON's true is
    not 1), any other value itself (1 and 1.0 are one number, as in JSON)."""
    if isinstance(value, (dict, list)):
        return tokens[id(value)]
    return ("bool", value) if isinstance(value, bool) else value
