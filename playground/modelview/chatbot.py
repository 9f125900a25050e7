"""What the official Python SDK's simple-chatbot example hands its model
(modelcontextprotocol/python-sdk, examples/clients/simple-chatbot): no tool API at all, but
text. Its `Tool.format_for_llm` writes each tool as a few lines of its system prompt, and
`ChatSession.process_llm_response` returns a tool's result as "Tool execution result: " plus
the SDK's `CallToolResult` printed by Python (`str()` of the pydantic model), sent back as a
system message. So a model reading it gets the content blocks' reprs, `structured_content` as a
Python dict, and nothing of an image but its base64 text.

The tool text is reproduced here from that behaviour; the result text is made by the SDK this
playground ships (`mcp.types`, imported on first use: half a second).
"""

from __future__ import annotations

from typing import Any

RESULT_PREFIX = "Tool execution result: "


def format_tool(tool: dict[str, Any]) -> str:
    """One tool as `format_for_llm` writes it: name, title, description, then one line per
    top-level property ("No description" when it has none; "(required)" when listed)."""
    raw = tool.get("inputSchema")
    schema: dict[str, Any] = raw if isinstance(raw, dict) else {}
    listed, named = schema.get("properties"), schema.get("required")
    properties: dict[str, Any] = listed if isinstance(listed, dict) else {}
    required: list[Any] = named if isinstance(named, list) else []
    lines = []
    for name, info in properties.items():
        description = info.get("description", "No description") if isinstance(info, dict) else "No description"
        lines.append(f"- {name}: {description}" + (" (required)" if name in required else ""))
    out = f"Tool: {tool.get('name')}\n"
    if tool.get("title"):
        out += f"User-readable title: {tool['title']}\n"
    return out + f"Description: {tool.get('description')}\nArguments:\n" + "\n".join(lines) + "\n"


def tools_text(tools: list[dict[str, Any]]) -> str:
    """The tools part of the example's system prompt (the tools joined by a newline)."""
    return "\n".join(format_tool(tool) for tool in tools)


def result_text(result: Any) -> str:
    """A `tools/call` result as the example's model reads it; a result the SDK refuses to parse
    is what the example's session raises instead."""
    from mcp.types import CallToolResult  # the SDK: heavy, and only needed here
    from pydantic import ValidationError

    try:
        parsed = CallToolResult.model_validate(result)
    except ValidationError as exc:
        return f"Error executing tool: {exc}"
    return RESULT_PREFIX + str(parsed)
