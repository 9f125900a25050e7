"""Prompts: `prompts/get` for each prompt without required arguments (up to a cap); a result
must be a GetPromptResult (messages, each with a role and a typed content)."""

from __future__ import annotations

from typing import Any

from .context import CheckContext
from .result import FAIL, PASS, SKIP, Status, clip, worst

ROLES = ("user", "assistant")


def messages_problem(result: Any) -> str | None:
    if not isinstance(result, dict) or not isinstance(result.get("messages"), list):
        return "no messages array"
    for message in result["messages"]:
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return "a message without a user/assistant role"
        content = message.get("content")
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            return "a message without a typed content"
    return None


def required_arguments(prompt: dict[str, Any]) -> list[str] | None:
    """The names of its required arguments; None when `arguments` is malformed."""
    args = prompt.get("arguments", [])
    if args is None:
        return []
    if not isinstance(args, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str) for a in args):
        return None
    return [a["name"] for a in args if a.get("required") is True]


async def run(ctx: CheckContext) -> None:
    if not ctx.advertised("prompts"):
        return
    name = "prompts: get"
    prompts = ctx.lists.get("prompts") or []
    seqs: list[int] = list(ctx.list_seqs.get("prompts") or [])
    found: list[tuple[Status, str]] = []
    free: list[dict[str, Any]] = []
    for prompt in prompts:
        required = required_arguments(prompt)
        if not isinstance(prompt.get("name"), str):
            found.append((FAIL, f"a prompt has name {clip(repr(prompt.get('name')), 40)}, not a string"))
        elif required is None:
            found.append((FAIL, f"{clip(prompt['name'], 60)!r}: arguments is not a list of named arguments"))
        elif not required:
            free.append(prompt)
    if not prompts:
        await ctx.row(name, SKIP, "the server lists no prompts", seqs)
        return
    chosen = free[: ctx.options.max_reads]
    for prompt in chosen:
        answer = await ctx.ask("prompts/get", {"name": prompt["name"]})
        seqs += answer.seqs
        if not answer.ok:
            found.append((FAIL, f"{clip(prompt['name'], 60)!r}: {answer.describe()}"))
        elif (problem := messages_problem(answer.result)) is not None:
            found.append((FAIL, f"{clip(prompt['name'], 60)!r}: {problem}"))
    skipped = len(prompts) - len(free)
    said = f"got {len(chosen)} of {len(prompts)}" + (f" ({skipped} need arguments)" if skipped else "")
    if not chosen and not found:
        await ctx.row(name, SKIP, f"every prompt needs arguments ({len(prompts)})", seqs)
    elif not found:
        await ctx.row(name, PASS, said + ": each returned messages", seqs)
    else:
        await ctx.row(name, worst(*(s for s, _ in found)), said + "; " + "; ".join(t for _, t in found[:5]), seqs)
