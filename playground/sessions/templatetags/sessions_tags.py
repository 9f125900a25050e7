from django import template

register = template.Library()


@register.inclusion_tag("sessions/_server_sessions.html", takes_context=True)
def server_sessions(context, server):
    """The Connect button and the past sessions of one server."""
    return {"server": server, "sessions": server.sessions.all()[:20], "csrf_token": context.get("csrf_token")}


@register.filter
def safe_icon(icons):
    """The first icon that is an inline raster image; remote URLs are not fetched (a server's
    icon URL would tell a third party who opened the page) and SVG can carry script."""
    from playground.sessions.fragments.content import IMAGE_TYPES

    for icon in icons or []:
        src = icon.get("src") if isinstance(icon, dict) else None
        if isinstance(src, str) and src.startswith("data:"):
            mime = src[5:].split(";", 1)[0].lower()
            if mime in IMAGE_TYPES and ";base64," in src[:64]:
                return src
    return ""


@register.filter
def transcript_lines(lines):
    """Transcript lines (lines.line dicts) as HTML; every value escaped in lines.py."""
    from playground.sessions.fragments.lines import lines_html

    return lines_html(lines)


@register.filter
def app_ui(tool):
    """A listed tool's MCP App facts: its UI (`resourceUri`, from `_meta.ui.resourceUri` or the
    older `_meta["ui/resourceUri"]`; None without one), `legacy`, and `app_only` (its
    `_meta.ui.visibility` leaves out the model)."""
    from playground.mcp.apps import tool_ui, tool_visibility

    ui = tool_ui(tool)
    return {
        "resourceUri": ui.resource_uri if ui is not None else None,
        "legacy": ui is not None and ui.legacy_key,
        "app_only": "model" not in tool_visibility(tool),
    }


@register.simple_tag(takes_context=True)
def apps_sandbox_origin(context) -> str:
    """The MCP Apps sandbox's origin for this page, computed in one place (mcp/apps/origin.py),
    exactly as the browser names it: static/apps-host.js compares it with each message's origin as is."""
    from playground.mcp.apps import sandbox_origin

    from ..features.apps import sandbox_setting

    request = context.get("request")
    if request is None:
        return ""
    return sandbox_origin(sandbox_setting(), request.scheme or "http", request.get_host()) or ""
