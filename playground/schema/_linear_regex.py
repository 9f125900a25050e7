"""JSON Schema patterns run by RE2, in linear time, wherever jsonschema matches one (`pattern`,
`patternProperties`, `additionalProperties`, `unevaluatedProperties`, `propertyNames`).

A server's schema is untrusted: with Python's backtracking `re`, `"pattern": "^(a+)+$"` against
`"a" * 40 + "!"` ran for minutes and stalled every request of the process. jsonschema calls
`re.search(pattern, text)` from three modules; `install()` gives them this module's `regex_search`
instead (google-re2: a well-kept linear-time engine, not a home-made one). A pattern RE2
cannot run (a backreference, a lookaround) raises PatternNotChecked: the value is reported as
not checked, never as valid.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # (RE2 would print every refused pattern to stderr)


class PatternNotChecked(Exception):
    """A pattern only a backtracking engine runs: the value was not checked against it."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(
            f"not checked: the pattern {pattern[:200]!r} needs a backtracking regex engine "
            f"({reason}); patterns run in linear time here, so that no server can stall the playground"
        )


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise PatternNotChecked(
            pattern, exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        ) from None


def regex_search(pattern: str, string: str, flags: int = 0) -> Any:
    """`re.search`, in linear time."""
    return _compiled(pattern).search(string)


class _LinearRe:
    """The part of the `re` module jsonschema's keywords use."""

    search = staticmethod(regex_search)


def install() -> None:
    from jsonschema import _keywords, _legacy_keywords, _utils

    for module in (_keywords, _legacy_keywords, _utils):
        module.re = _LinearRe
