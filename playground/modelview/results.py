"""A `tools/call` result as a model receives it: text content against `structuredContent`.

An MCP result carries `content` blocks (text, images, audio, resources) and, from 2025-06-18,
`structuredContent`. What reaches the model depends on the client: the SDK's simple chatbot
prints the whole result (chatbot.py); a client using a tool API puts it in a tool-result
message, which takes text (OpenAI), text and images (Anthropic) or a JSON object (Gemini). The
shapes below are those messages for a client that forwards the content blocks it can and falls
back to `structuredContent` as JSON when there is no text — the spec asks servers to repeat
structured content as text for such clients ("a tool that returns structured content SHOULD also
return the serialized JSON in a TextContent block",
https://modelcontextprotocol.io/specification/2025-11-25/server/tools#structured-content).
"""

from __future__ import annotations

import json
from typing import Any

from . import chatbot, tokens

DATA_SHOWN = 120  # characters of base64 data shown (the rest is counted, not shown)
# Image types Anthropic's image blocks take (https://docs.anthropic.com/en/docs/build-with-claude/vision).
ANTHROPIC_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def _short(data: Any) -> str:
    text = data if isinstance(data, str) else ""
    return text if len(text) <= DATA_SHOWN else f"{text[:DATA_SHOWN]}…({len(text)} characters)"


def _blocks(result: dict[str, Any]) -> list[dict[str, Any]]:
    content = result.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _embedded_text(block: dict[str, Any]) -> str | None:
    resource = block.get("resource")
    return resource["text"] if isinstance(resource, dict) and isinstance(resource.get("text"), str) else None


def view(result: Any, tool_name: str) -> dict[str, Any]:
    """What each client shape sends the model for one result, with notes on what is lost."""
    result = result if isinstance(result, dict) else {}
    blocks = _blocks(result)
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    texts += [t for b in blocks if b.get("type") == "resource" and (t := _embedded_text(b)) is not None]
    structured = result.get("structuredContent")
    is_error = result.get("isError") is True
    text = "\n".join(texts)
    structured_json = json.dumps(structured, ensure_ascii=False) if structured is not None else None
    fallback = text if text or structured_json is None else structured_json
    notes: list[str] = []
    others = [
        str(b.get("type"))
        for b in blocks
        if b.get("type") not in ("text", "resource") or (b.get("type") == "resource" and _embedded_text(b) is None)
    ]
    if others:
        notes.append("Not text: " + ", ".join(others) + " — dropped where a tool message takes text only.")
    if structured is not None:
        repeated = any(_same_json(t, structured) for t in texts)
        notes.append(
            "structuredContent is repeated as text: every client shape carries it."
            if repeated
            else "structuredContent is not repeated as a text block: a client forwarding content alone "
            + ("sends only the other text" if text else "falls back to it as JSON (as below)")
            + "."
        )

    anthropic_blocks: list[dict[str, Any]] = []
    for b in blocks:
        kind = b.get("type")
        if kind == "text" and isinstance(b.get("text"), str):
            anthropic_blocks.append({"type": "text", "text": b["text"]})
        elif kind == "image" and b.get("mimeType") in ANTHROPIC_IMAGES:
            anthropic_blocks.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": b["mimeType"], "data": _short(b.get("data"))},
                }
            )
        elif kind == "resource" and (embedded := _embedded_text(b)) is not None:
            anthropic_blocks.append({"type": "text", "text": embedded})
    if not anthropic_blocks and structured_json is not None:
        anthropic_blocks.append({"type": "text", "text": structured_json})
    anthropic: dict[str, Any] = {"type": "tool_result", "tool_use_id": "toolu_01", "content": anthropic_blocks}
    if is_error:
        anthropic["is_error"] = True
    if is_error:
        response: Any = {"error": fallback}
    elif isinstance(structured, dict):
        response = structured
    else:
        response = {"output": fallback}
    shapes = [
        ("SDK simple chatbot", "a system message", chatbot.result_text(_shortened(result))),
        ("OpenAI Chat Completions", "a tool message", {"role": "tool", "tool_call_id": "call_01", "content": fallback}),
        (
            "OpenAI Responses",
            "a function_call_output item",
            {"type": "function_call_output", "call_id": "call_01", "output": fallback},
        ),
        ("Anthropic Messages", "a tool_result block", anthropic),
        ("Google Gemini", "a functionResponse part", {"functionResponse": {"name": tool_name, "response": response}}),
    ]
    return {
        "tool": tool_name,
        "is_error": is_error,
        "text_blocks": len(texts),
        "text_chars": len(text),
        "structured": structured_json is not None,
        "notes": notes,
        "shapes": [
            {"label": label, "as": kind, "value": value, "tokens": tokens.estimate(value)}
            for label, kind, value in shapes
        ],
    }


def _shortened(result: dict[str, Any]) -> dict[str, Any]:
    """The result with long base64 data cut for showing (the chatbot would print it all)."""
    blocks = [{**b, "data": _short(b["data"])} if isinstance(b.get("data"), str) else b for b in _blocks(result)]
    return {**result, "content": blocks} if "content" in result else result


def _same_json(text: str, value: Any) -> bool:
    try:
        return json.loads(text) == value
    except ValueError:
        return False
