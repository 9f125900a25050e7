"""Capabilities advertised vs. methods answered, both ways: what the server advertises must
answer (anything but -32601), and what it does not advertise should get -32601 Method not found.

The reverse direction, by what the spec says (2025-11-25 and 2026-07-28):
- a server that answers a method with what it offers (tools listed, completion values) supports
  that feature, and "Servers that support tools / resources / prompts / completions MUST declare
  the capability" (each feature's Capabilities section): a `fail`;
- over Streamable HTTP in the modern era, "If the server does not implement the requested RPC
  method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601" (2026-07-28,
  Streamable HTTP › Protocol Version Header): any other answer is a `fail`;
- elsewhere the rest is a SHOULD ("Both parties SHOULD respect capability negotiation", Prompts ›
  Implementation Considerations; "Servers SHOULD return ... Method not found: -32601 (Capability
  not supported)", Completion › Error Handling): an empty result, or another error code, is a
  `warn`. So is an answered `logging/setLevel`: logging's MUST is about emitting log messages,
  which the wire check judges (`wire`).
A request that gets no answer at all fails: every request MUST get a response.
"""

from __future__ import annotations

from typing import Any

from ..jsonrpc import METHOD_NOT_FOUND
from .context import NO_SUCH_PROMPT, CheckContext
from .errors import not_404
from .probe import Answer
from .result import FAIL, PASS, SKIP, WARN, Status, worst

# Capabilities a server MUST declare when it supports them (the feature's Capabilities section).
MUST_DECLARE = ("tools", "resources", "prompts", "completions")


def _methods(ctx: CheckContext) -> dict[str, list[tuple[str, dict[str, Any] | None]]]:
    """Capability -> the methods (with harmless params) it promises, in this era."""
    out: dict[str, list[tuple[str, dict[str, Any] | None]]] = {
        "tools": [("tools/list", None)],
        "resources": [("resources/list", None), ("resources/templates/list", None)],
        "prompts": [("prompts/list", None)],
        "completions": [("completion/complete", _completion_params(ctx))],
    }
    if ctx.era == "legacy":  # 2026-07-28 removed logging/setLevel: the level travels in _meta
        out["logging"] = [("logging/setLevel", {"level": "info"})]
    return out


def _completion_params(ctx: CheckContext) -> dict[str, Any]:
    """A real prompt argument to complete when there is one (else a name no server has)."""
    for prompt in ctx.lists.get("prompts") or []:
        arguments = prompt.get("arguments")
        for argument in arguments if isinstance(arguments, list) else ():
            if (
                isinstance(argument, dict)
                and isinstance(argument.get("name"), str)
                and isinstance(prompt.get("name"), str)
            ):
                return {
                    "ref": {"type": "ref/prompt", "name": prompt["name"]},
                    "argument": {"name": argument["name"], "value": ""},
                }
    return {
        "ref": {"type": "ref/prompt", "name": ctx.unlisted("prompts", NO_SUCH_PROMPT)},
        "argument": {"name": "x", "value": ""},
    }


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
        judged = judge_unadvertised(ctx, capability, method, answer)
        if judged is None:
            refused.append(method)
        else:
            found.append(judged)
    if not found:
        await ctx.row(name, PASS, "refused with -32601: " + ", ".join(refused), seqs)
    else:
        await ctx.row(name, worst(*(s for s, _ in found)), "; ".join(t for _, t in found), seqs)


def judge_unadvertised(ctx: CheckContext, capability: str, method: str, answer: Answer) -> tuple[Status, str] | None:
    """What is wrong with the answer to a method of a capability the server did not advertise
    (None: -32601, as it should be)."""
    if answer.code == METHOD_NOT_FOUND:
        wrong = not_404(ctx, answer)
        return None if wrong is None else (FAIL, f"{method}: {wrong}")
    if answer.ok:
        offered = offers(method, answer.result)
        if offered and capability in MUST_DECLARE:
            return FAIL, (
                f"{method} offered {offered} item(s), but `{capability}` is not advertised: servers that "
                f"support {capability} MUST declare the `{capability}` capability"
            )
        return WARN, (
            f"{method} answered with a result, but `{capability}` is not advertised "
            "(Both parties SHOULD respect capability negotiation)"
        )
    if answer.timed_out or answer.lost is not None:
        return FAIL, f"{method} got {answer.describe()} (`{capability}` is not advertised: expected -32601)"
    if ctx.modern_http:
        return FAIL, (
            f"{method} got {answer.describe()} (`{capability}` is not advertised): over Streamable HTTP a "
            "method the server does not implement MUST get 404 Not Found and -32601"
        )
    return WARN, f"{method} got {answer.describe()} (`{capability}` is not advertised: expected -32601)"


def offers(method: str, result: Any) -> int:
    """How many items a result offers: the tools, resources or prompts listed, the completion values."""
    if not isinstance(result, dict):
        return 0
    if method == "completion/complete":
        completion = result.get("completion")
        items = completion.get("values") if isinstance(completion, dict) else None
    else:
        items = result.get(method.split("/", 1)[0])
    return len(items) if isinstance(items, list) else 0
