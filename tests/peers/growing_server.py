"""An MCP server written with the official `mcp` SDK (MCPServer) whose tool list grows: `grow`
adds the tool `sprout` and announces notifications/tools/list_changed, as a server that loads
tools on demand does. Usage: python growing_server.py (stdio)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("growing-peer", version="1.0.0")


def sprout(text: str) -> str:
    """A tool that exists only after `grow`."""
    return f"sprout says {text}"


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `sprout`, and says the tool list changed."""
    mcp.add_tool(sprout)
    await ctx.session.send_tool_list_changed()  # (the legacy era's notification; modern: notify_tools_changed)
    return "grew sprout"


if __name__ == "__main__":
    mcp.run()
