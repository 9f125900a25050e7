"""MCP tools as each model API's request takes them (`tools`), one rendering per API.

OpenAI and Anthropic take the tool's `inputSchema` as it is (JSON Schema), so it is forwarded
unchanged: what they refuse is reported by the rules, not silently fixed. Gemini's
`functionDeclarations[].parameters` is its own Schema (an OpenAPI 3.0 subset), so the schema is
converted as the Google GenAI SDK's MCP support does (keep the documented fields, drop the
rest): local `$ref`s inlined, `oneOf` to `anyOf`, `null` in a union to `nullable`, types in
upper case. Every change is one of the rules' `gemini.*` findings.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import rules
from .rules import GEMINI_FIELDS, GEMINI_FORMATS, GEMINI_TYPES
from .schema import MAX_DEPTH, MAX_NODES, pointer_get, recursive_refs, ref_problem, types_of, walk


def _name(tool: dict[str, Any]) -> str:
    return tool["name"] if isinstance(tool.get("name"), str) else str(tool.get("name", ""))


def _description(tool: dict[str, Any]) -> str | None:
    description = tool.get("description")
    return description if isinstance(description, str) and description else None


# --- OpenAI ---------------------------------------------------------------------------------------

def openai_chat(tool: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions `tools[]`: {"type": "function", "function": {name, description, parameters}}
    (`strict` left out: false, best-effort; rules.OPENAI_CHAT_TOOLS)."""
    function: dict[str, Any] = {"name": _name(tool)}
    if (description := _description(tool)) is not None:
        function["description"] = description
    if "inputSchema" in tool:
        function["parameters"] = tool["inputSchema"]
    return {"type": "function", "function": function}


def openai_responses(tool: dict[str, Any]) -> dict[str, Any]:
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

def anthropic(tool: dict[str, Any]) -> dict[str, Any]:
    """Messages `tools[]`: {name, description, input_schema} (rules.ANTHROPIC_TOOL_USE)."""
    out: dict[str, Any] = {"name": _name(tool)}
    if (description := _description(tool)) is not None:
        out["description"] = description
    out["input_schema"] = tool.get("inputSchema", {"type": "object"})
    return out


# --- Gemini -----------------------------------------------------------------------------------------

class _GeminiSchema:
    """JSON Schema -> Gemini `Schema`, bounded like the rules' walk."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.recursive = recursive_refs(root, walk(root).nodes)
        self.budget = MAX_NODES

    def convert(self, node: Any, depth: int = 0) -> dict[str, Any]:
        if not isinstance(node, dict) or depth > MAX_DEPTH or self.budget <= 0:
            return {}
        self.budget -= 1
        out: dict[str, Any] = {}
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref_problem(self.root, ref, self.recursive):
            out.update(self.convert(pointer_get(self.root, ref), depth + 1))
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            out.update(self.convert(all_of[0], depth + 1))
        variants: list[dict[str, Any]] = []
        kinds = types_of(node)
        if "null" in kinds:
            out["nullable"] = True
        named = [GEMINI_TYPES[k] for k in kinds if k != "null" and k in GEMINI_TYPES]
        if len(named) == 1:
            out["type"] = named[0]
        elif len(named) > 1:
            variants += [{"type": k} for k in named]
        for key, value in node.items():
            if key in ("type", "$ref", "allOf", "format"):
                continue
            if key == "properties" and isinstance(value, dict):
                out["properties"] = {str(k): self.convert(v, depth + 1) for k, v in value.items()}
            elif key == "items":
                if isinstance(value, dict):
                    out["items"] = self.convert(value, depth + 1)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                for v in value:
                    if isinstance(v, dict) and types_of(v) == ["null"]:
                        out["nullable"] = True          # Optional[X] is X, nullable
                    else:
                        variants.append(self.convert(v, depth + 1))
            elif key == "const":
                if isinstance(value, str):
                    out["enum"] = [value]
            elif key == "enum":
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    out["enum"] = value
            elif key == "required":
                if isinstance(value, list):
                    out["required"] = [v for v in value if isinstance(v, str)]
            elif key in GEMINI_FIELDS:
                out[key] = value
        if len(variants) == 1:
            out = {**variants[0], **out}
        elif variants:
            out["anyOf"] = variants
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in GEMINI_FORMATS.get(out.get("type", ""), ()):
            out["format"] = fmt
        return out


def gemini_parameters(schema: Any) -> dict[str, Any] | None:
    """The tool's parameters as Gemini's Schema; None for a tool without parameters ("For
    function with no parameters, this can be left unset", rules.GEMINI_FUNCTION_DECLARATION)."""
    converted = _GeminiSchema(schema).convert(schema)
    if converted.get("type", "OBJECT") == "OBJECT" and not converted.get("properties") and "anyOf" not in converted:
        return None
    return converted


def gemini(tool: dict[str, Any]) -> dict[str, Any]:
    """One `functionDeclarations[]` entry: {name, description, parameters}."""
    out: dict[str, Any] = {"name": _name(tool)}
    if (description := _description(tool)) is not None:
        out["description"] = description
    parameters = gemini_parameters(tool.get("inputSchema"))
    if parameters is not None:
        out["parameters"] = parameters
    return out


# --- the renderings -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    id: str
    provider: rules.Provider
    label: str
    field: str                                  # where the rendering goes in the API's request
    doc: str
    one: Callable[[dict[str, Any]], dict[str, Any]]
    wrap: Callable[[list[dict[str, Any]]], Any] = lambda items: items


TARGETS: tuple[Target, ...] = (
    Target("openai-chat", "openai", "OpenAI Chat Completions", "tools", rules.OPENAI_CHAT_TOOLS, openai_chat),
    Target("openai-responses", "openai", "OpenAI Responses", "tools", rules.OPENAI_RESPONSES_TOOLS, openai_responses),
    Target("anthropic", "anthropic", "Anthropic Messages", "tools", rules.ANTHROPIC_TOOL_USE, anthropic),
    Target("gemini", "gemini", "Google Gemini", "tools", rules.GEMINI_FUNCTION_DECLARATION, gemini,
           wrap=lambda items: [{"functionDeclarations": items}] if items else []),
)

BY_ID: dict[str, Target] = {t.id: t for t in TARGETS}


def render(target: Target, tools: list[dict[str, Any]]) -> Any:
    """The `tools` value of `target`'s request for these MCP tools."""
    return target.wrap([target.one(tool) for tool in tools])
