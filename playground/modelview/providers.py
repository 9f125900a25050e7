"""MCP tools as each model API's request takes them (`tools`), one rendering per API.

OpenAI and Anthropic take the tool's `inputSchema` as it is (JSON Schema), so it is forwarded
unchanged: what they refuse is reported by the rules, not silently fixed. Gemini's
`functionDeclarations[].parameters` is its own Schema (an OpenAPI 3.0 subset), so the schema is
converted as the Google GenAI SDK's MCP support does (gemini.py). Every change is one of the
rules' `gemini.*` findings, made from the same conversion.

Each rendering takes the tool and, optionally, the tool as the rules read it (`rules.Subject`):
given, the walk and the conversion made for the findings are reused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import rules


def _name(tool: dict[str, Any]) -> str:
    return tool["name"] if isinstance(tool.get("name"), str) else str(tool.get("name", ""))


def _description(tool: dict[str, Any]) -> str | None:
    description = tool.get("description")
    return description if isinstance(description, str) and description else None


# --- OpenAI ---------------------------------------------------------------------------------------


def openai_chat(tool: dict[str, Any], subject: rules.Subject | None = None) -> dict[str, Any]:
    """Chat Completions `tools[]`: {"type": "function", "function": {name, description, parameters}}
    (`strict` left out: false, best-effort; rules.OPENAI_CHAT_TOOLS)."""
    function: dict[str, Any] = {"name": _name(tool)}
    if (description := _description(tool)) is not None:
        function["description"] = description
    if "inputSchema" in tool:
        function["parameters"] = tool["inputSchema"]
    return {"type": "function", "function": function}


def openai_responses(tool: dict[str, Any], subject: rules.Subject | None = None) -> dict[str, Any]:
    """Responses `tools[]`: flat {"type": "function", name, description, parameters, strict}. The
    Responses API's `strict` defaults to true, which most MCP schemas do not meet: a client
    forwarding MCP tools sends false (rules.OPENAI_RESPONSES_TOOLS); the `openai.strict.*` findings
    say what true would need."""
    out: dict[str, Any] = {"type": "function", "name": _name(tool)}
    if (description := _description(tool)) is not None:
        out["description"] = description
    if "inputSchema" in tool:
        out["parameters"] = tool["inputSchema"]
    out["strict"] = False
    return out


# --- Anthropic ------------------------------------------------------------------------------------


def anthropic(tool: dict[str, Any], subject: rules.Subject | None = None) -> dict[str, Any]:
    """Messages `tools[]`: {name, description, input_schema} (rules.ANTHROPIC_TOOL_USE)."""
    out: dict[str, Any] = {"name": _name(tool)}
    if (description := _description(tool)) is not None:
        out["description"] = description
    out["input_schema"] = rules.anthropic_input_schema(tool)
    return out


# --- Gemini -----------------------------------------------------------------------------------------


def gemini(tool: dict[str, Any], subject: rules.Subject | None = None) -> dict[str, Any]:
    """One `functionDeclarations[]` entry: {name, description, parameters}. `subject`: the tool as
    the rules read it (its conversion made once, for the rendering and its findings alike)."""
    out: dict[str, Any] = {"name": _name(tool)}
    if (description := _description(tool)) is not None:
        out["description"] = description
    parameters = (subject or rules.Subject.of(tool)).conversion.parameters
    if parameters is not None:
        out["parameters"] = parameters
    return out


# --- the renderings -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    id: str
    provider: rules.Provider
    label: str
    field: str  # where the rendering goes in the API's request
    doc: str
    one: Callable[..., dict[str, Any]]  # (tool, subject=None)
    wrap: Callable[[list[dict[str, Any]]], Any] = lambda items: items


TARGETS: tuple[Target, ...] = (
    Target("openai-chat", "openai", "OpenAI Chat Completions", "tools", rules.OPENAI_CHAT_TOOLS, openai_chat),
    Target("openai-responses", "openai", "OpenAI Responses", "tools", rules.OPENAI_RESPONSES_TOOLS, openai_responses),
    Target("anthropic", "anthropic", "Anthropic Messages", "tools", rules.ANTHROPIC_TOOL_USE, anthropic),
    Target(
        "gemini",
        "gemini",
        "Google Gemini",
        "tools",
        rules.GEMINI_FUNCTION_DECLARATION,
        gemini,
        wrap=lambda items: [{"functionDeclarations": items}] if items else [],
    ),
)

BY_ID: dict[str, Target] = {t.id: t for t in TARGETS}


def render(target: Target, tools: list[dict[str, Any]]) -> Any:
    """The `tools` value of `target`'s request for these MCP tools."""
    return target.wrap([target.one(tool) for tool in tools])
