"""The schema lint's compiled screen (jsonschema_rs) against jsonschema: the two must agree on
every verdict, or the screen would pass a frame jsonschema finds wrong (or hide one it passes).

`verdicts` asks both about one instance; `audit` (a fixture of tests/conftest.py) watches every
instance the lint checks during a test — the lint tests' frames and the real peers' frames in the
session, capture and server-check tests — and fails the test on any disagreement.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from playground.mcp import jsontext
from playground.mcp.lint import definitions

AUDITED = {"instances": 0}  # instances seen by the audit over the whole run (the terminal summary)


def verdicts(schema: definitions.Schema, names: tuple[str, ...], instance: Any) -> tuple[bool | None, bool | None]:
    """(the screen's, jsonschema's): whether `instance` is valid against the definitions `names`.
    jsonschema's is None where it cannot tell (nested deeper than it recurses: the lint then says
    "not checked"; a `$ref` it cannot resolve: the lint raises): a screen that passes such an
    instance disagrees."""
    try:
        reference: bool | None = bool(schema.validator(*names).is_valid(instance))
    except RecursionError:
        reference = None
    except Exception:  # (MCP Apps' dangling `#/$defs/__schema0`, reached: jsonschema raises, as the lint does)
        reference = None
    compiled = schema.screen(*names)
    if compiled is None or jsontext.nests_deeper(instance, definitions.SCREEN_DEPTH):
        # No screen (tests/mcp/lint/test_screen.py: UNSCREENED), or nested deeper than it is
        # asked (definitions.SCREEN_DEPTH): jsonschema alone, as before the screen.
        return reference, reference
    screen = definitions.passes(compiled, instance)
    if not screen and _beyond_json(instance):
        # NaN and ±Infinity (json.loads reads them; jsonschema_rs takes them for no number) and
        # lone surrogates: the screen's "no" there is no verdict, jsonschema decides (the lint's
        # report is then jsonschema's, as for every frame the screen does not pass). A screen
        # that *passed* such a value would still disagree.
        return reference, reference
    return screen, reference


def _beyond_json(value: Any) -> bool:
    """Whether `value` holds what standard JSON cannot: a non-finite number, a lone surrogate."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_beyond_json(k) or _beyond_json(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_beyond_json(v) for v in value)
    return False


def disagreement(schema: definitions.Schema, names: tuple[str, ...], instance: Any) -> str | None:
    screen, reference = verdicts(schema, names, instance)
    if screen == reference:
        return None
    try:
        shown = json.dumps(instance)[:2000]
    except (TypeError, ValueError):
        shown = repr(instance)[:2000]
    return f"{schema.version} {names}: screen says {screen}, jsonschema {reference}, for {shown}"


def audit() -> Iterator[list[str]]:
    """Every instance the lint checks is also checked by both, here; yields the disagreements."""
    found: list[str] = []
    original = definitions.Schema._problems

    def _problems(
        self: definitions.Schema, names: tuple[str, ...], instance: Any, prefix: str, shallow: bool | None = None
    ) -> Any:
        AUDITED["instances"] += 1
        problem = disagreement(self, names, instance)
        if problem is not None:
            found.append(problem)
        return original(self, names, instance, prefix, shallow)

    definitions.Schema._problems = _problems  # type: ignore[method-assign]
    try:
        yield found
    finally:
        definitions.Schema._problems = original  # type: ignore[method-assign]
