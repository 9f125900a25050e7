"""The relay and large-payload peer: an official-SDK MCPServer over stdio (what people run)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench-sdk-peer", version="1.0.0")


@mcp.tool()
def echo(x: str) -> str:
    """Echo x back (the round trip the relay benchmark times)."""
    return x


@mcp.tool()
def big(megabytes: float = 10.0) -> str:
    """A text result of about `megabytes` MB (the large-payload benchmark)."""
    line = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ <escaped & shown> 0123456789\n"
    return line * int(megabytes * 1_000_000 / len(line)) + "THE END"


if __name__ == "__main__":
    mcp.run()
