"""Capabilities advertised vs. methods answered, both ways: what the server advertises must
answer (anything but -32601), and what it does not advertise should get -32601 Method not found
("Both parties SHOULD respect capability negotiation"; a client learns what a server offers
from its capabilities, not by trying). A SHOULD: answering an unadvertised method is a warning."""
from __future__ import annotations

from typing import Any

from ..jsonrpc import METHOD_NOT_FOUND
from .context import NO_SUCH_PROMPT, CheckContext
from .result import FAIL, PASS, SKIP, WARN, Status, worst


def _methods(ctx: CheckContext) -> dict[str, list[tuple[str, dict[str, Any] | None]]]:
    """Capability -> the methods (with harmless params) it promises, in this era."""
    out: dict[str, list[tuple[str, dict[str, Any] | None]]] = {
        "tools": [("tools/list", None)],
        "resources": [("resources/list", None), ("resources/templates/list", None)],
        "prompts": [("prompts/list", None)],
        "completions": [("completion/complete", _completion_params(ctx))],
    }
    if ctx.era == "legacy":         # 2026-07-28 removed logging/setLevel: the level travels in _meta
        out["logging"] = [("logging/setLevel", {"level": "info"})]
    return out


def _completion_params(ctx: CheckContext) -> dict[str, Any]:
    """A real prompt argument to complete when there is one (else a name no server has)."""
    for prompt in ctx.lists.get("prompts") or []:
        arguments = prompt.get("arguments")
        for argument in arguments if isinstance(arguments, list) else ():
            if isinstance(argument, dict) and isinstance(argument.get("name"), str) and isinstance(prompt.get("name"), str):
                return {"ref": {"type": "ref/prompt", "name": prompt["name"]},
                        "argument": {"name": argument["name"], "value": ""}}
    return {"ref": {"type": "ref/prompt", "name": NO_SUCH_PROMPT}, "argument": {"name": "x", "value": ""}}


async def run(ctx: CheckContext) -> None:
    methods = _methods(ctx)
    offered = [c for c in methods if ctx.advertised(c)]
    missing = [c for c in methods if not ctx.advertised(c)]
    await _advertised(ctx, offered, methods)
    await _not_advertised(ctx, missing, methods)


async def _advertised(ctx: CheckContext, offered: list[str], methods: dict[str, Any]) -> None:
    name = "capabilities: advertised methods answer"
    if not offered:
        await ctx.row(name, SKIP, "the server advertises none of " + ", ".join(f"`{c}`" for c in methods))
        return
    found: list[tuple[Status, str]] = []
    seqs: list[int] = []
    answered: list[str] = []
    for capability in offered:
        for method, params in methods[capability]:
            answer = await ctx.ask_once(method, params)
            seqs += answer.seqs
            if answer.code == METHOD_NOT_FOUND:
                found.append((FAIL, f"advertises `{capability}` but {method} got -32601 Method not found"))
            elif answer.timed_out or answer.lost is not None:
                found.append((FAIL, f"advertises `{capability}` but {method} got {answer.describe()}"))
            else:
                answered.append(method)
    if not found:
        await ctx.row(name, PASS, "answered: " + ", ".join(answered), seqs)
    else:
        await ctx.row(name, worst(*(s for s, _ in found)), "; ".join(t for _, t in found), seqs)


async def _not_advertised(ctx: CheckContext, missing: list[str], methods: dict[str, Any]) -> None:
    name = "capabilities: unadvertised methods get -32601"
    if not missing:
        await ctx.row(name, SKIP, "the server advertises every capability this check knows a method for")
        return
    found: list[tuple[Status, str]] = []
    seqs: list[int] = []
    refused: list[str] = []
    for capability in missing:
        method, params = methods[capability][0]
        answer = await ctx.ask_once(method, params)
        seqs += answer.seqs
        if answer.code == METHOD_NOT_FOUND:
            refused.append(method)
        elif answer.ok:
            found.append((WARN, f"{method} answered with a result, but `{capability}` is not advertised "
                                "(Both parties SHOULD respect capability negotiation)"))
        else:
            found.append((WARN, f"{method} got {answer.describe()} (`{capability}` is not advertised: "
                                "expected -32601)"))
    if not found:
        await ctx.row(name, PASS, "refused with -32601: " + ", ".join(refused), seqs)
    else:
        await ctx.row(name, worst(*(s for s, _ in found)), "; ".join(t for _, t in found), seqs)
