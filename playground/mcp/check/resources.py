"""Resources: each listed resource read (up to a cap), each template's variables (RFC 6570)
expanded and read, and an unknown URI refused (2026-07-28: -32602, and never an empty
`contents`; earlier revisions: -32002 Resource not found)."""

from __future__ import annotations

from typing import Any

import uritemplate

from playground.schema import regex_search

from ..jsonrpc import INVALID_PARAMS
from .context import CheckContext
from .result import FAIL, PASS, SKIP, WARN, Status, clip, worst

RESOURCE_NOT_FOUND = -32002
UNKNOWN_URI = "mcp-playground-check:///no-such-resource"
GUESS = "1"
# RFC 6570 §2.2-2.4: an optional operator, then varspecs (varname, `:prefix` or `*`), comma-separated.
_VARCHAR = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC = rf"{_VARCHAR}(?:\.?{_VARCHAR})*(?::[1-9][0-9]{{0,3}}|\*)?"
EXPRESSION = rf"^[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*$"


def template_problem(text: str) -> str | None:
    """Why `text` is not an RFC 6570 URI template (None: it is one). The `uritemplate` package
    expands leniently (an unclosed brace stays literal), so the grammar is checked here."""
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            if depth:
                return f"a brace opens inside an expression at {i}"
            depth, start = 1, i + 1
        elif ch == "}":
            if not depth:
                return f"a closing brace without an opening one at {i}"
            expression = text[start:i]
            if not regex_search(EXPRESSION, expression):
                return f"{{{clip(expression, 40)}}} is not an expression (operator, then variable names)"
            depth = 0
    return "an expression is not closed" if depth else None


def contents_problem(result: Any) -> str | None:
    """What is wrong with a ReadResourceResult (None: nothing)."""
    if not isinstance(result, dict) or not isinstance(result.get("contents"), list):
        return "no contents array"
    for item in result["contents"]:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            return "a content without a uri"
        if not isinstance(item.get("text"), str) and not isinstance(item.get("blob"), str):
            return f"{clip(item['uri'], 60)!r}: neither text nor blob"
    return None


async def run(ctx: CheckContext) -> None:
    if not ctx.advertised("resources"):
        return
    await _reads(ctx)
    await _templates(ctx)
    await _unknown(ctx)


async def _reads(ctx: CheckContext) -> None:
    name = "resources: read"
    listed = [r for r in ctx.lists.get("resources") or [] if isinstance(r.get("uri"), str)]
    if not listed:
        await ctx.row(name, SKIP, "the server lists no resources", ctx.list_seqs.get("resources"))
        return
    chosen = listed[: ctx.options.max_reads]
    found: list[tuple[Status, str]] = []
    seqs: list[int] = []
    for resource in chosen:
        uri = resource["uri"]
        answer = await ctx.ask("resources/read", {"uri": uri})
        seqs += answer.seqs
        if not answer.ok:
            found.append((FAIL, f"{clip(uri, 80)!r}: {answer.describe()}"))
        elif (problem := contents_problem(answer.result)) is not None:
            found.append((FAIL, f"{clip(uri, 80)!r}: {problem}"))
        elif not answer.result["contents"]:
            found.append((WARN, f"{clip(uri, 80)!r}: empty contents for a listed resource"))
    of = f"read {len(chosen)} of {len(listed)}" + (f" (the first {len(chosen)})" if len(chosen) < len(listed) else "")
    if not found:
        await ctx.row(name, PASS, of + ": each returned its contents", seqs)
    else:
        await ctx.row(name, worst(*(s for s, _ in found)), of + "; " + "; ".join(t for _, t in found[:5]), seqs)


async def _templates(ctx: CheckContext) -> None:
    name = "resources: templates"
    templates = ctx.lists.get("templates") or []
    if not templates:
        await ctx.row(name, SKIP, "the server lists no resource templates", ctx.list_seqs.get("templates"))
        return
    found: list[tuple[Status, str]] = []
    seqs: list[int] = list(ctx.list_seqs.get("templates") or [])
    done: list[str] = []
    for template in templates[: ctx.options.max_reads]:
        text = template.get("uriTemplate")
        if not isinstance(text, str):
            found.append((FAIL, f"a template has uriTemplate {clip(repr(text), 40)}, not a string"))
            continue
        problem = template_problem(text)
        if problem is not None:
            found.append((FAIL, f"{clip(text, 80)!r} is not an RFC 6570 URI template: {problem}"))
            continue
        parsed = uritemplate.URITemplate(text)
        variables = list(parsed.variable_names)
        if not variables:
            found.append((WARN, f"{clip(text, 80)!r} has no variables (a plain resource belongs in resources/list)"))
            continue
        values: dict[str, Any] = {v: await _value_for(ctx, text, v, seqs) for v in variables}
        uri = parsed.expand(values)
        answer = await ctx.ask("resources/read", {"uri": uri})
        seqs += answer.seqs
        if answer.ok and (problem := contents_problem(answer.result)) is not None:
            found.append((FAIL, f"{clip(uri, 80)!r}: {problem}"))
        elif not answer.ok and answer.code is None:
            found.append((FAIL, f"{clip(uri, 80)!r}: {answer.describe()}"))
        elif not answer.ok:
            found.append((WARN, f"{clip(uri, 80)!r} (variables {', '.join(variables)} filled in): {answer.describe()}"))
        else:
            done.append(f"{clip(text, 60)} → {clip(uri, 60)}")
    if not found:
        await ctx.row(name, PASS, "expanded and read: " + "; ".join(done[:5]), seqs)
    else:
        await ctx.row(name, worst(*(s for s, _ in found)), "; ".join(t for _, t in found[:5]), seqs)


async def _value_for(ctx: CheckContext, template: str, variable: str, seqs: list[int]) -> str:
    """A value the server suggests (completion/complete) when it offers completions, else a guess."""
    if not ctx.advertised("completions"):
        return GUESS
    answer = await ctx.ask(
        "completion/complete",
        {"ref": {"type": "ref/resource", "uri": template}, "argument": {"name": variable, "value": ""}},
    )
    seqs += answer.seqs
    completion = answer.result.get("completion") if answer.ok and isinstance(answer.result, dict) else None
    values = completion.get("values") if isinstance(completion, dict) else None
    first = values[0] if isinstance(values, list) and values else None
    return first if isinstance(first, str) and first else GUESS


async def _unknown(ctx: CheckContext) -> None:
    name = "resources: unknown URI"
    unknown = ctx.unlisted("resources", UNKNOWN_URI, key="uri")
    answer = await ctx.ask("resources/read", {"uri": unknown})
    modern = ctx.era == "modern"
    expected = "-32602 (2026-07-28)" if modern else "-32002 Resource not found"
    if answer.code == INVALID_PARAMS or (answer.code == RESOURCE_NOT_FOUND and not modern):
        status: Status = PASS
        reason = f"{unknown} got {answer.describe()}"
    elif answer.code == RESOURCE_NOT_FOUND:
        status, reason = WARN, "got -32002; 2026-07-28 servers MUST answer a missing resource with -32602"
    elif answer.ok and isinstance(answer.result, dict) and answer.result.get("contents") == []:
        status = FAIL if modern else WARN
        reason = "an empty contents array for a resource that does not exist (ambiguous: expected " + expected + ")"
    elif answer.ok:
        status, reason = WARN, f"{unknown}, a URI nobody serves, got contents (expected {expected})"
    elif answer.timed_out or answer.lost is not None:
        status, reason = FAIL, answer.describe()
    else:
        status, reason = WARN, f"got {answer.describe()}; expected {expected}"
    await ctx.row(name, status, reason, answer.seqs)
