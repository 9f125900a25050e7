"""MCP Apps (the `io.modelcontextprotocol/ui` extension, specification 2026-01-26), the client's
part, Django-free: the capability the client declares, a tool's UI metadata, the policy an app's
document gets, and the bridge's messages checked against the extension's schema.

The page renders the app (static/apps-host.js, in a frame on the sandbox origin); the session's
`apps` feature relays the app's requests to the server and records the bridge as its own lane.
"""

from .meta import (
    EXTENSION_ID,
    LANE,
    MIME_TYPE,
    PROTOCOL_VERSION,
    ToolUi,
    app_may_call,
    capability,
    resource_ui,
    tool_ui,
    tool_visibility,
)
from .origin import browser_origin, sandbox_origin
from .policy import PERMISSIONS, app_csp, app_policy, requested_permissions

__all__ = [
    "EXTENSION_ID",
    "LANE",
    "MIME_TYPE",
    "PERMISSIONS",
    "PROTOCOL_VERSION",
    "ToolUi",
    "app_csp",
    "app_may_call",
    "app_policy",
    "browser_origin",
    "capability",
    "requested_permissions",
    "resource_ui",
    "sandbox_origin",
    "tool_ui",
    "tool_visibility",
]
