"""The tool list, judged without calling anything: names, schemas, descriptions, annotations."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from . import schemas
from .context import CheckContext
from .result import FAIL, PASS, SKIP, WARN, Status, clip, worst

# 2025-11-25, Server › Tools › Tool Names (SEP-986): "Tool names SHOULD be between 1 and 128
# characters in length (inclusive)"; "The following SHOULD be the only allowed characters:
# uppercase and lowercase ASCII letters (A-Z, a-z), digits (0-9), underscore (_), hyphen (-),
# and dot (.)". SHOULDs: a name outside them is a warning; a missing or empty one fails (a tool
# without a usable name cannot be called).
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
MAX_NAME = 128
# 2025-11-25 schema, ToolAnnotations: a title and four boolean hints.
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
SHOWN = 5


def name_of(tool: dict[str, Any]) -> str:
    name = tool.get("name")
    return clip(name, 60) if isinstance(name, str) else f"(name {clip(repr(name), 30)})"


def _listing(items: list[str]) -> str:
    return "; ".join(items[:SHOWN]) + (f"; and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _row(found: list[tuple[Status, str]], ok: str) -> tuple[Status, str]:
    if not found:
        return PASS, ok
    return worst(*(s for s, _ in found)), _listing([text for _, text in found])


def names(tools: list[dict[str, Any]]) -> tuple[Status, str]:
    found: list[tuple[Status, str]] = []
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            found.append((FAIL, f"a tool has name {clip(repr(name), 40)}: every tool needs a non-empty string name"))
        elif len(name) > MAX_NAME:
            found.append((WARN, f"{clip(name, 40)!r} is {len(name)} characters (SHOULD be 1–128)"))
        elif not set(name) <= NAME_CHARS:
            bad = "".join(sorted(set(name) - NAME_CHARS))
            found.append((WARN, f"{clip(name, 60)!r} uses {clip(repr(bad), 30)} (SHOULD be only A–Z a–z 0–9 _ - .)"))
    return _row(found, f"{len(tools)} names of 1–128 characters from A–Z a–z 0–9 _ - . (Tool Names, 2025-11-25)")


def input_schemas(tools: list[dict[str, Any]]) -> tuple[Status, str]:
    found: list[tuple[Status, str]] = []
    for tool in tools:
        if "inputSchema" not in tool:
            found.append((FAIL, f"{name_of(tool)}: no inputSchema (required)"))
            continue
        bad = schemas.problem(tool["inputSchema"], f"{name_of(tool)}: inputSchema")
        if bad:
            found.append(bad)
    return _row(found, f"{len(tools)} inputSchemas: valid JSON Schemas of type object")


def output_schemas(tools: list[dict[str, Any]]) -> tuple[Status, str]:
    declared = [t for t in tools if "outputSchema" in t]
    if not declared:
        return SKIP, "no tool declares an outputSchema"
    found = [bad for t in declared if (bad := schemas.problem(t["outputSchema"], f"{name_of(t)}: outputSchema"))]
    return _row(found, f"{len(declared)} outputSchemas: valid JSON Schemas of type object")


def descriptions(tools: list[dict[str, Any]]) -> tuple[Status, str]:
    found: list[tuple[Status, str]] = []
    for tool in tools:
        text = tool.get("description")
        if text is None:
            found.append((WARN, f"{name_of(tool)}: no description (a model picks tools by it)"))
        elif not isinstance(text, str):
            found.append((FAIL, f"{name_of(tool)}: description is {type(text).__name__}, not a string"))
        elif not text.strip():
            found.append((WARN, f"{name_of(tool)}: the description is empty"))
    return _row(found, f"{len(tools)} tools described")


def tool_annotations(tools: list[dict[str, Any]]) -> tuple[Status, str]:
    annotated = [t for t in tools if "annotations" in t]
    if not annotated:
        return SKIP, "no tool has annotations"
    found: list[tuple[Status, str]] = []
    for tool in annotated:
        notes = tool["annotations"]
        if not isinstance(notes, dict):
            found.append((FAIL, f"{name_of(tool)}: annotations is {type(notes).__name__}, not an object"))
            continue
        for hint in HINTS:
            if hint in notes and not isinstance(notes[hint], bool):
                found.append((FAIL, f"{name_of(tool)}: {hint} is {clip(repr(notes[hint]), 30)}, not a boolean"))
        if "title" in notes and not isinstance(notes["title"], str):
            found.append((FAIL, f"{name_of(tool)}: annotations.title is not a string"))
        unknown = sorted(k for k in notes if k not in HINTS and k != "title")
        if unknown:
            found.append((WARN, f"{name_of(tool)}: unknown annotations {clip(', '.join(unknown), 80)}"))
        if notes.get("readOnlyHint") is True and notes.get("destructiveHint") is True:
            found.append(
                (
                    WARN,
                    f"{name_of(tool)}: readOnlyHint and destructiveHint both true (destructiveHint "
                    "is meaningful only when readOnlyHint is false)",
                )
            )
    return _row(found, f"{len(annotated)} tools with well-formed annotations")


CHECKS: tuple[tuple[str, Callable[[list[dict[str, Any]]], tuple[Status, str]]], ...] = (
    ("tools: names", names),
    ("tools: input schemas", input_schemas),
    ("tools: output schemas", output_schemas),
    ("tools: descriptions", descriptions),
    ("tools: annotations", tool_annotations),
)


async def run(ctx: CheckContext) -> None:
    if not ctx.advertised("tools"):
        return
    tools = ctx.lists.get("tools") or []
    seqs = ctx.list_seqs.get("tools", [])
    if not tools:
        await ctx.row("tools: definitions", SKIP, "the server lists no tools", seqs)
        return
    # Checking schemas is CPU work on server input: off the event loop.
    judged = await asyncio.to_thread(lambda: [(name, check(tools)) for name, check in CHECKS])
    for name, (status, reason) in judged:
        await ctx.row(name, status, reason, seqs)
