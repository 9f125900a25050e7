"""A real SDK server (MCPServer) whose tool reports one variable of its own environment: the
end-to-end test asks it whether the capture token reached the server; and a tool whose answer is
as long as asked (a line longer than one upload can carry)."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("env-peer", version="1.0.0")


@app.tool()
def env(name: str) -> str:
    """The value of `name` in this server's environment, or "(unset)"."""
    print(f"env asked for {name}", file=sys.stderr, flush=True)
    return os.environ.get(name, "(unset)")


@app.tool()
def blob(size: int) -> str:
    """`size` characters."""
    return "x" * size


if __name__ == "__main__":
    app.run()
