"""Two builds of one small server, written with the official `mcp` SDK (MCPServer): build "a"
and build "b" differ in exactly one tool's output (`version`). A replay of a session with build
"a" against build "b" shows that one request changed. `clock` answers the time (a field a
replay's ignore rules leave out); `ask_name` asks the client for a name (elicitation); the
prompt `greeting` takes an argument (a request with params, for Edit and resend).

Usage: python sdk_variant.py stdio [a|b]
"""

from __future__ import annotations

if __name__ == "__main__":  # a program: the tests' zygote runs it without the SDK's import time
    try:
        import prefork
    except ImportError:  # a copy of this file elsewhere, or one run by runpy: started as always
        pass
    else:
        prefork.handoff()

import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

BUILD = sys.argv[2] if len(sys.argv) > 2 else "a"

mcp = MCPServer("sdk-variant", instructions="Two builds differing in one tool.", version="1.0.0")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def version() -> str:
    """The build's release line: the one output that differs between builds."""
    return "release 1.0 (stable)" if BUILD == "a" else "release 2.0 (beta)"


@mcp.tool()
def clock() -> str:
    """The time now: differs on every call."""
    return f"now: {time.time_ns()}"


class Answer(BaseModel):
    name: str


@mcp.tool()
async def ask_name(ctx: Context) -> str:
    """Asks the client for a name (elicitation)."""
    result = await ctx.elicit("What is your name?", Answer)
    if result.action == "accept" and result.data is not None:
        return f"Hello, {result.data.name}!"
    return f"No name ({result.action})"


@mcp.prompt()
def greeting(name: str) -> str:
    """A greeting for `name` (the same in both builds)."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "stdio" or BUILD not in ("a", "b"):
        raise SystemExit(__doc__)
    mcp.run()
