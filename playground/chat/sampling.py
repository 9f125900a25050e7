"""A server's `sampling/createMessage`, answered by the chat's model once the person approves
(and, if they like, edits the reply). No Django."""

from __future__ import annotations

from typing import Any

from . import wire


def messages_of(params: dict[str, Any]) -> tuple[str, list[wire.Message]]:
    """(system prompt, the request's messages in the wire's neutral form): text content only;
    other blocks are described, not sent (a model API takes images in its own shapes)."""
    out: list[wire.Message] = []
    for m in params.get("messages") or []:
        if not isinstance(m, dict):
            continue
        blocks = m.get("content")
        blocks = blocks if isinstance(blocks, list) else [blocks]
        text = "\n".join(
            str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type')} content not sent]"
            for b in blocks
            if isinstance(b, dict)
        )
        out.append({"role": "assistant" if m.get("role") == "assistant" else "user", "text": text})
    return str(params.get("systemPrompt") or ""), out


def result(text: str, model: str) -> dict[str, Any]:
    """The CreateMessageResult sent back to the server."""
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model, "stopReason": "endTurn"}
