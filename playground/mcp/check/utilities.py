"""`ping` (legacy: "The receiver MUST respond promptly with an empty response"; 2026-07-28
removed it) and `logging/setLevel` when the server advertises `logging` (legacy; 2026-07-28
carries the level in each request's `_meta` instead)."""

from __future__ import annotations

from typing import Any

from .context import CheckContext
from .result import FAIL, PASS, SKIP, clip


def empty_result(result: Any) -> bool:
    """An EmptyResult: the schema makes it a Result, so `_meta` (an object) may be in it, nothing else."""
    return isinstance(result, dict) and set(result) <= {"_meta"} and isinstance(result.get("_meta", {}), dict)


async def run(ctx: CheckContext) -> None:
    await _ping(ctx)
    await _set_level(ctx)


async def _ping(ctx: CheckContext) -> None:
    if ctx.era == "modern":
        await ctx.row("ping", SKIP, "2026-07-28 removed ping")
        return
    answer = await ctx.ask("ping")
    if answer.ok and empty_result(answer.result):
        await ctx.row("ping", PASS, "an empty result" + (" (with _meta)" if answer.result else ""), answer.seqs)
    elif answer.ok:
        await ctx.row(
            "ping",
            FAIL,
            f"a result that is not the empty result ping MUST answer with ({_what(answer.result)})",
            answer.seqs,
        )
    else:
        await ctx.row(
            "ping", FAIL, answer.describe() + " (ping MUST be answered promptly with an empty result)", answer.seqs
        )


def _what(result: Any) -> str:
    if isinstance(result, dict):
        return "members: " + clip(", ".join(sorted(result)), 80)
    return f"{type(result).__name__}, not an object"


async def _set_level(ctx: CheckContext) -> None:
    name = "logging/setLevel"
    if ctx.era == "modern":
        await ctx.row(name, SKIP, "2026-07-28 removed logging/setLevel (the level travels in _meta)")
        return
    if not ctx.advertised("logging"):
        await ctx.row(name, SKIP, "the server does not advertise `logging`")
        return
    answer = await ctx.ask_once(name, {"level": "info"})
    if answer.ok and isinstance(answer.result, dict):
        await ctx.row(name, PASS, "level info accepted (an empty result)", answer.seqs)
    elif answer.ok:
        await ctx.row(name, FAIL, "the result is not an object", answer.seqs)
    else:
        await ctx.row(name, FAIL, f"`logging` is advertised, but setLevel got {answer.describe()}", answer.seqs)
