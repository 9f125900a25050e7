"""Schema conformance: every answer the check got, checked against the official JSON Schema of
the protocol version the session uses (the schema lint's `lint.check`), so a list item or a
result that breaks the schema's shape is a finding even where no other check looks at it."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from .. import lint
from .probe import Answer
from .result import FAIL, PASS, SKIP, clip

if TYPE_CHECKING:
    from .context import CheckContext

MAX_CHARS = 1_000_000  # answers larger than this are not checked (as the live lint does)
SHOWN = 5  # problems quoted in the row's reason


def _check(method: str, result: Any, version: str) -> lint.Report | None:
    if len(json.dumps(result, ensure_ascii=False, default=str)) > MAX_CHARS:
        return None
    return lint.check(
        {"jsonrpc": "2.0", "id": 0, "result": result}, version=version, direction="recv", request=lint.Request(method)
    )


class Conformance:
    """The answers checked so far, and those that break the schema (method, seqs, the lint's report)."""

    def __init__(self) -> None:
        self.checked = 0
        self.failed: list[tuple[str, list[int], lint.Report]] = []

    async def add(self, version: str, answer: Answer) -> None:
        """Check one answered request's result, off the event loop (a large result takes a while)."""
        if not answer.ok or not lint.known(version):
            return
        report = await asyncio.to_thread(_check, answer.method, answer.result, version)
        if report is None:
            return
        self.checked += 1
        if report.problems:
            self.failed.append((answer.method, answer.seqs, report))

    def problems_of(self, answer: Answer) -> list[str]:
        """Where `answer` (checked by `add`) breaks the schema, as a reason quotes it ([] if it does not)."""
        return [
            f"{problem['pointer'] or '/'} {clip(problem['message'], 160)}"
            for _method, seqs, report in self.failed
            if seqs == answer.seqs
            for problem in report.problems
        ]


async def run(ctx: CheckContext) -> None:
    seen, version = ctx.conformance, ctx.version
    name = "schema: answers"
    if not lint.known(version):
        await ctx.row(name, SKIP, f"no official schema for protocol version {clip(version or '(none)', 40)!r}")
    elif not seen.checked:
        await ctx.row(name, SKIP, "no answer to check")
    elif not seen.failed:
        await ctx.row(name, PASS, f"{seen.checked} answers match the {version} schema")
    else:
        problems = [
            f"{method} ({report.definition}): {problem['pointer'] or '/'} {clip(problem['message'], 160)}"
            for method, _seqs, report in seen.failed
            for problem in report.problems
        ]
        more = f"; {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        await ctx.row(
            name,
            FAIL,
            f"{len(seen.failed)} of {seen.checked} answers break the {version} schema: "
            + "; ".join(problems[:SHOWN])
            + more,
            [s for _m, seqs, _r in seen.failed for s in seqs],
        )
