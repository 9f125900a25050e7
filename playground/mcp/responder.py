"""Who answers the server's own requests (legacy server→client requests and modern
`input_required` input requests): the page (a person), the CLI (flags), tests.

A responder declares the client capabilities it can honour, so the client never
advertises something nobody will answer.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .jsonrpc import METHOD_NOT_FOUND, JsonRpcError


@runtime_checkable
class Responder(Protocol):
    def capabilities(self) -> dict[str, Any]:
        """Client capabilities this responder can answer (`roots`, `sampling`, `elicitation`)."""

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result for one server request; raise JsonRpcError to answer with an error."""


class NoResponder:
    """Declares nothing and answers nothing: every server request gets -32601."""

    def capabilities(self) -> dict[str, Any]:
        return {}

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")


def schema_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """The `default` of each top-level property of an elicitation's requestedSchema."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    return {name: prop["default"] for name, prop in props.items() if isinstance(prop, dict) and "default" in prop}


class StaticResponder:
    """Answers from fixed settings: roots from a list, elicitation by accepting the
    schema's defaults merged with given content, sampling with a fixed text.
    Used by the CLI and the conformance adapter, where no person is there to ask."""

    def __init__(
        self,
        *,
        roots: list[dict[str, Any]] | None = None,
        elicitation: str | None = "accept",
        elicitation_content: dict[str, Any] | None = None,
        sampling_text: str | None = None,
    ) -> None:
        self.roots = roots
        self.elicitation = elicitation
        self.elicitation_content = elicitation_content or {}
        self.sampling_text = sampling_text

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.sampling_text is not None:
            caps["sampling"] = {}
        if self.elicitation is not None:
            caps["elicitation"] = {"form": {}}
        return caps

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "roots/list" and self.roots is not None:
            return {"roots": self.roots}
        if method == "elicitation/create" and self.elicitation is not None:
            if self.elicitation != "accept":
                return {"action": self.elicitation}
            content = schema_defaults(params.get("requestedSchema") or {})
            content.update(self.elicitation_content)
            return {"action": "accept", "content": content}
        if method == "sampling/createMessage" and self.sampling_text is not None:
            return {
                "role": "assistant",
                "content": {"type": "text", "text": self.sampling_text},
                "model": "mcp-playground-static",
                "stopReason": "endTurn",
            }
        raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
