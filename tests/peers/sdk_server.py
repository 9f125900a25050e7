"""A small MCP server written with the official `mcp` SDK (MCPServer): a real peer for tests.

Usage: python sdk_server.py stdio | http PORT | sse PORT   (HTTP modes bind 127.0.0.1 only)
"""

from __future__ import annotations

if __name__ == "__main__":  # a program: the tests' zygote runs it without the SDK's import time
    try:
        import prefork
    except ImportError:  # a copy of this file elsewhere, or one run by runpy: started as always
        pass
    else:
        prefork.handoff()

import asyncio
import base64
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel

mcp = MCPServer("sdk-peer", instructions="A peer server for the playground's tests.", version="1.0.0")

# A 1x1 transparent PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers (structured output)."""
    return a + b


class Weather(BaseModel):
    city: str
    celsius: float


@mcp.tool()
def weather(city: str) -> Weather:
    """Structured content with an output schema."""
    return Weather(city=city, celsius=21.5)


@mcp.tool()
def fail(message: str = "boom") -> str:
    """Always raises: the result has isError true."""
    raise ValueError(message)


@mcp.tool()
async def slow(steps: int = 3, delay: float = 0.05, ctx: Context | None = None) -> str:
    """Reports progress for each step."""
    for i in range(steps):
        if ctx is not None:
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await asyncio.sleep(delay)
    return f"done after {steps} steps"


@mcp.tool()
async def hang(ctx: Context | None = None) -> str:
    """Never answers (until cancelled)."""
    await asyncio.sleep(3600)
    return "unreachable"


@mcp.tool()
def stderr_line(text: str) -> str:
    """Writes a line on stderr, then answers."""
    print(text, file=sys.stderr, flush=True)
    return "written"


class Answer(BaseModel):
    name: str


@mcp.tool()
async def ask_name(ctx: Context) -> str:
    """Asks the client for a name (elicitation; input_required in the modern era)."""
    result = await ctx.elicit("What is your name?", Answer)
    if result.action == "accept" and result.data is not None:
        return f"Hello, {result.data.name}!"
    return f"No name ({result.action})"


def _ask_for_name() -> Elicit[Answer]:
    return Elicit("What is your name?", Answer)


@mcp.tool()
async def greet(answer: Annotated[ElicitationResult[Answer], Resolve(_ask_for_name)]) -> str:
    """Asks for a name through a resolver: a standalone elicitation in the legacy era, an
    `input_required` round in the modern era."""
    if answer.action == "accept":
        return f"Hello, {answer.data.name}!"
    return f"No name ({answer.action})"


@mcp.tool()
async def touch(uri: str = "peer://greeting", ctx: Context | None = None) -> str:
    """Announces a tools list change and an update of `uri` (modern: on subscriptions/listen streams)."""
    if ctx is not None:
        await ctx.notify_tools_changed()
        await ctx.notify_resource_updated(uri)
    return f"touched {uri}"


@mcp.resource("peer://greeting")
def greeting() -> str:
    """A fixed text resource."""
    return "hello from the peer"


@mcp.resource("peer://pixel.png", mime_type="image/png")
def pixel() -> bytes:
    """A binary resource (a blob): previewed as an image, downloadable."""
    return base64.b64decode(PNG)


@mcp.resource("peer://items/{item_id}")
def item(item_id: str) -> str:
    """A templated resource."""
    return f"item {item_id}"


@mcp.prompt()
def review(code: str, language: str = "python") -> str:
    """A prompt with arguments."""
    return f"Review this {language} code:\n{code}"


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) > 1 else "stdio"
    if mode == "stdio":
        mcp.run()
    elif mode == "http":
        mcp.run(transport="streamable-http", host="127.0.0.1", port=int(argv[2]))
    elif mode == "sse":
        mcp.run(transport="sse", host="127.0.0.1", port=int(argv[2]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
