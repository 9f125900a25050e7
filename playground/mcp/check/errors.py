"""Errors: an unknown method gets -32601 Method not found (JSON-RPC 2.0); invalid params get
-32602 Invalid params — or, for a tool's arguments from 2025-11-25 on, a tool execution error
(`isError: true`, SEP-1303: "input validation errors should be returned as Tool Execution
Errors"). Unknown tools and malformed `tools/call` requests stay protocol errors in every
revision (Tools › Error Handling); unknown prompts get -32602 (Prompts › Error Handling)."""

from __future__ import annotations

import asyncio

from ..jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from . import arguments
from .calls import shown
from .context import NO_SUCH_PROMPT, CheckContext
from .probe import Answer
from .result import FAIL, PASS, SKIP, WARN, Status, clip, worst

UNKNOWN_METHOD = "mcp-playground-check/no-such-method"
UNKNOWN_TOOL = "mcp-playground-check-no-such-tool"  # or, if a server lists it, one it does not (ctx.unlisted)
TOOL_ERRORS_FROM = "2025-11-25"  # input validation errors as tool execution errors


async def run(ctx: CheckContext) -> None:
    await _unknown_method(ctx)
    await _invalid_params(ctx)


def not_404(ctx: CheckContext, answer: Answer) -> str | None:
    """For a -32601 answer: what is wrong with its HTTP status (None: nothing). 2026-07-28,
    Streamable HTTP › Protocol Version Header: "If the server does not implement the requested
    RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601"."""
    if not ctx.modern_http or answer.http_status == 404:
        return None
    status = f"HTTP {answer.http_status}" if answer.http_status else "a success status (2xx)"
    return f"-32601 with {status}; over Streamable HTTP it MUST come with 404 Not Found"


async def _unknown_method(ctx: CheckContext) -> None:
    answer = await ctx.ask(UNKNOWN_METHOD, {}, on_purpose="the server check: a method that does not exist")
    if answer.code == METHOD_NOT_FOUND and (wrong := not_404(ctx, answer)) is not None:
        status: Status = FAIL
        reason = f"{UNKNOWN_METHOD} got {wrong}"
    elif answer.code == METHOD_NOT_FOUND:
        status = PASS
        reason = f"{UNKNOWN_METHOD} got -32601 Method not found"
    elif answer.ok:
        status, reason = FAIL, f"{UNKNOWN_METHOD}, a method that does not exist, got a result (expected -32601)"
    else:
        status, reason = FAIL, f"{UNKNOWN_METHOD} got {answer.describe()} (expected -32601 Method not found)"
    await ctx.row("errors: unknown method", status, reason, answer.seqs)


def _protocol(answer: Answer, what: str, *, tool_error_ok: bool = False) -> tuple[Status, str]:
    """A probe that wants -32602."""
    if answer.code == INVALID_PARAMS:
        return PASS, f"{what}: -32602"
    if answer.is_error_result:
        return (
            WARN,
            f"{what}: a result with isError: true (Tools › Error Handling lists this as a protocol error, -32602)",
        )
    if answer.ok:
        return FAIL, f"{what}: a result, as if nothing were wrong (expected -32602)"
    if answer.timed_out or answer.lost is not None:
        return FAIL, f"{what}: {answer.describe()}"
    return WARN, f"{what}: {answer.describe()} (expected -32602 Invalid params)"


async def _invalid_params(ctx: CheckContext) -> None:
    found: list[tuple[Status, str]] = []
    seqs: list[int] = []
    if ctx.advertised("tools"):
        answer = await ctx.ask("tools/call", {}, on_purpose="the server check: a tools/call without a name")
        seqs += answer.seqs
        found.append(_protocol(answer, "tools/call without a name"))
        unknown = ctx.unlisted("tools", UNKNOWN_TOOL)  # never a listed tool: calling one runs it
        answer = await ctx.ask("tools/call", {"name": unknown, "arguments": {}})
        seqs += answer.seqs
        found.append(_protocol(answer, "tools/call of an unknown tool"))
        for name in list(ctx.examples)[: ctx.options.max_invalid_calls]:
            status, reason, more = await _bad_arguments(ctx, name)
            if reason:
                found.append((status, reason))
                seqs += more
    if ctx.advertised("prompts"):
        answer = await ctx.ask("prompts/get", {"name": ctx.unlisted("prompts", NO_SUCH_PROMPT)})
        seqs += answer.seqs
        found.append(_protocol(answer, "prompts/get of an unknown prompt"))
    if not found:
        await ctx.row("errors: invalid params", SKIP, "nothing to send invalid params to (no tools, no prompts)")
        return
    status = worst(*(s for s, _ in found))
    await ctx.row("errors: invalid params", status, "; ".join(t for _, t in found), seqs)


async def _bad_arguments(ctx: CheckContext, name: str) -> tuple[Status, str, list[int]]:
    """A ticked tool called with arguments its inputSchema refuses."""
    tool = next((t for t in ctx.lists.get("tools") or [] if t.get("name") == name), {})
    made = await asyncio.to_thread(arguments.broken, tool.get("inputSchema"), ctx.examples[name])
    if made is None:
        return PASS, "", []
    args, how = made
    answer = await ctx.ask(
        "tools/call",
        {"name": name, "arguments": args},
        timeout=ctx.options.call_timeout,
        progress=True,
        on_purpose="the server check: arguments the tool's inputSchema refuses",
    )
    what = f"{clip(name, 40)} with {how} ({shown(args, 80)})"
    as_tool_error = ctx.era == "modern" or ctx.version >= TOOL_ERRORS_FROM
    if answer.is_error_result:
        status: Status = PASS if as_tool_error else WARN
        note = "" if as_tool_error else f" ({ctx.version} expects -32602; isError is the rule from 2025-11-25)"
        return status, f"{what}: isError: true{note}", answer.seqs
    if answer.code == INVALID_PARAMS:
        note = (
            f" ({ctx.version or 'this version'} asks for a tool execution error, isError: true)"
            if as_tool_error
            else ""
        )
        return (WARN if as_tool_error else PASS), f"{what}: -32602{note}", answer.seqs
    if answer.ok:
        return FAIL, f"{what}: a result without isError, accepting arguments its inputSchema refuses", answer.seqs
    if answer.timed_out or answer.lost is not None:
        return FAIL, f"{what}: {answer.describe()}", answer.seqs
    return (
        WARN,
        f"{what}: {answer.describe()} (expected " + ("isError: true)" if as_tool_error else "-32602)"),
        answer.seqs,
    )
