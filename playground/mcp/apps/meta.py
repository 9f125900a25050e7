"""What the client declares, and what a server's tool and resource say about their UI.

Everything here reads a server's untrusted lists: a value of the wrong type is as if absent,
and lists are cut to a length (a tool may name a thousand "visibility" entries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EXTENSION_ID = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
PROTOCOL_VERSION = "2026-01-26"  # the extension's, spoken on the bridge (ui/initialize)
LEGACY_URI_KEY = "ui/resourceUri"  # older servers: `_meta["ui/resourceUri"]`
LANE = "app"  # the transcript's lane of the bridge (its events' `data["connection"]`)
MAX_LISTED = 16  # entries of a server's visibility list read
MAX_URI = 2048
DEFAULT_VISIBILITY: tuple[str, ...] = ("model", "app")  # the spec's default


def capability() -> dict[str, Any]:
    """The client capability declaring MCP Apps (merged into `initialize`'s capabilities, or a
    modern request's `_meta`): the MIME types this client renders."""
    return {"extensions": {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}}


@dataclass(frozen=True, slots=True)
class ToolUi:
    """A tool's UI: the `ui://` resource it renders with, and who may call it."""

    resource_uri: str
    visibility: tuple[str, ...] = DEFAULT_VISIBILITY
    legacy_key: bool = False  # named by `_meta["ui/resourceUri"]` only

    def as_dict(self) -> dict[str, Any]:
        return {"resourceUri": self.resource_uri, "visibility": list(self.visibility), "legacy": self.legacy_key}


def _meta(item: Any) -> dict[str, Any]:
    meta = item.get("_meta") if isinstance(item, dict) else None
    return meta if isinstance(meta, dict) else {}


def _ui(meta: dict[str, Any]) -> dict[str, Any]:
    ui = meta.get("ui")
    return ui if isinstance(ui, dict) else {}


def _visibility(ui: dict[str, Any]) -> tuple[str, ...] | None:
    raw = ui.get("visibility")
    if not isinstance(raw, list):
        return None
    return tuple(v for v in raw[:MAX_LISTED] if isinstance(v, str))


def tool_ui(tool: Any) -> ToolUi | None:
    """The UI of a listed tool (`_meta.ui.resourceUri`, or the older `_meta["ui/resourceUri"]`),
    None when it has none (or names something that is not a `ui://` URI)."""
    meta = _meta(tool)
    ui = _ui(meta)
    uri, legacy = ui.get("resourceUri"), False
    if not isinstance(uri, str):
        uri, legacy = meta.get(LEGACY_URI_KEY), True
    if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) > MAX_URI:
        return None
    visibility = _visibility(ui)
    return ToolUi(uri, visibility if visibility is not None else DEFAULT_VISIBILITY, legacy)


def tool_visibility(tool: Any) -> tuple[str, ...]:
    """Who may call a listed tool (`_meta.ui.visibility`; the spec's default when absent)."""
    visibility = _visibility(_ui(_meta(tool)))
    return visibility if visibility is not None else DEFAULT_VISIBILITY


def app_may_call(tool: Any) -> bool:
    """Whether an app may call `tool` (a listed tool's dict): unless its `visibility` leaves out
    "app" (the default is ["model", "app"])."""
    return "app" in tool_visibility(tool)


def resource_ui(contents: Any, listed: Any = None) -> dict[str, Any]:
    """A UI resource's `_meta.ui` (csp, permissions, prefersBorder), read from the
    `resources/read` content item, with the `resources/list` entry as the fallback (as the spec
    says hosts read it)."""
    for source in (contents, listed):
        ui = _meta(source).get("ui")
        if isinstance(ui, dict):
            return ui
    return {}
