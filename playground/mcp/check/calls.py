"""Tool calls: only the tools the person ticked (a call runs the tool's side effects), each with
arguments made from its inputSchema; a result must be a CallToolResult, and when the tool has
an outputSchema its structuredContent must conform ("Servers MUST provide structured results
that conform to this schema", Tools › Output Schema)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from playground.schema import validate_arguments

from ..jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from . import arguments
from .context import CheckContext
from .result import FAIL, PASS, SKIP, WARN, Status, clip


def shown(value: Any, limit: int = 120) -> str:
    try:
        return clip(json.dumps(value, ensure_ascii=False), limit)
    except (TypeError, ValueError):
        return clip(repr(value), limit)


def _text_of(result: dict[str, Any]) -> str:
    for item in result.get("content") or []:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            return clip(item["text"], 120)
    return ""


def judge_result(result: Any, output_schema: Any) -> tuple[Status, str]:
    """A CallToolResult and, for a tool with an outputSchema, its structuredContent."""
    if not isinstance(result, dict):
        return FAIL, f"the result is {type(result).__name__}, not an object"
    content = result.get("content")
    if not isinstance(content, list):
        return FAIL, "the result has no content array (CallToolResult.content is required)"
    untyped = sum(1 for c in content if not (isinstance(c, dict) and isinstance(c.get("type"), str)))
    if untyped:
        return FAIL, f"{untyped} content item(s) without a type"
    if result.get("isError") is True:
        return WARN, f"the tool reported an error (isError: true): {_text_of(result) or 'no text'}"
    structured = result.get("structuredContent")
    if "structuredContent" in result and not isinstance(structured, dict):
        return FAIL, f"structuredContent is {type(structured).__name__}, not an object"
    if isinstance(output_schema, dict):
        if structured is None:
            return FAIL, "the tool has an outputSchema but the result has no structuredContent"
        errors = validate_arguments(output_schema, structured)
        if errors:
            first = errors[0]
            return FAIL, (
                f"structuredContent does not match the outputSchema: {first['pointer'] or '/'}: "
                f"{clip(first['message'], 160)}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
            )
        return PASS, f"{len(content)} content item(s); structuredContent matches the outputSchema"
    return PASS, f"{len(content)} content item(s)"


async def run(ctx: CheckContext) -> None:
    if not ctx.options.call_tools:
        await ctx.row("tools/call", SKIP, "no tool was ticked: tools have side effects, so only ticked ones are called")
        return
    tools = {t["name"]: t for t in ctx.lists.get("tools") or [] if isinstance(t.get("name"), str)}
    for name in ctx.options.call_tools:
        await _call(ctx, name, tools.get(name))


async def _call(ctx: CheckContext, name: str, tool: dict[str, Any] | None) -> None:
    row = f"tools/call: {clip(name, 60)}"
    if tool is None:
        ctx.report.not_called(name, "the server does not list it")
        await ctx.row(
            row,
            WARN,
            "asked to call it, but the server does not list a tool of that name; not called",
            ctx.list_seqs.get("tools"),
        )
        return
    schema = tool.get("inputSchema")
    args, problems = await asyncio.to_thread(arguments.example, schema)
    if problems:
        ctx.report.not_called(name, "no arguments that satisfy its inputSchema could be made")
        await ctx.row(
            row,
            WARN,
            f"could not make arguments that satisfy the inputSchema ({clip(problems[0], 160)}); not called",
            ctx.list_seqs.get("tools"),
        )
        return
    ctx.examples[name] = args
    ctx.report.tools_called.append(name)
    answer = await ctx.ask(
        "tools/call", {"name": name, "arguments": args}, timeout=ctx.options.call_timeout, progress=True
    )
    said = f"called with {shown(args)}: "
    if answer.timed_out or answer.lost is not None:
        await ctx.row(row, FAIL, said + answer.describe(), answer.seqs)
    elif answer.error is not None:
        # A protocol error for arguments its own schema accepts: the server refuses valid calls.
        status = FAIL if answer.code in (INVALID_PARAMS, METHOD_NOT_FOUND) else WARN
        await ctx.row(row, status, said + answer.describe(), answer.seqs)
    else:
        status, reason = await asyncio.to_thread(judge_result, answer.result, tool.get("outputSchema"))
        broken = ctx.conformance.problems_of(answer)
        if broken:  # (the schema row says it too: this row must not pass the same answer)
            status, reason = (
                FAIL,
                (
                    f"the result breaks the {ctx.version} schema (CallToolResult): "
                    + "; ".join(broken[:3])
                    + (f"; and {len(broken) - 3} more" if len(broken) > 3 else "")
                    + f" — besides: {reason}"
                ),
            )
        await ctx.row(row, status, said + reason, answer.seqs)
