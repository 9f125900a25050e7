"""The bundled demo MCP server (official `mcp` SDK): something to point the playground at on day one.

It exercises what the page can show: nested object and array arguments (arrays of objects too),
enums, defaults, a discriminated union (oneOf), structured output with an outputSchema, an image,
progress, logging, an error result, resources, a resource template and a prompt with arguments.

Usage: python -m playground.demo_server [stdio | http PORT | sse PORT]   (HTTP modes bind 127.0.0.1)
"""

from __future__ import annotations

import asyncio
import sys
import warnings
import zlib
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

# ctx.log is deprecated in the 2026-07-28 era (SEP-2577) but still what legacy clients see.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*deprecated.*")

mcp = MCPServer(
    "playground-demo",
    title="MCP Playground demo",
    instructions="A demo server bundled with MCP Playground. Try every tool: each shows one feature.",
    version="1.0.0",
)


# ---------------------------------------------------------------- tools: argument shapes


class Priority(str, Enum):
    low = "low"
    normal = "normal"
    high = "high"


class Address(BaseModel):
    street: str
    city: str
    postcode: str | None = Field(default=None, description="Optional postal code")


class Contact(BaseModel):
    name: str = Field(description="Full name")
    email: str = Field(description="Email address", json_schema_extra={"format": "email"})
    tags: list[str] = Field(default_factory=list, description="Free-form labels")
    address: Address | None = None


class Ticket(BaseModel):
    id: int
    title: str
    priority: Priority
    assignees: list[Contact]
    created: str


@mcp.tool(title="Create a ticket")
def create_ticket(
    title: Annotated[str, Field(min_length=1, max_length=120, description="A one-line summary")],
    assignees: Annotated[list[Contact], Field(description="People to notify (an array of objects)")],
    priority: Priority = Priority.normal,
    labels: list[str] = ["triage"],  # noqa: B006 - a default the form should prefill
    estimate_hours: Annotated[float, Field(ge=0, le=100)] = 1.0,
    notify: bool = True,
) -> Ticket:
    """Nested objects, an array of objects, an enum and defaults; returns structured output."""
    return Ticket(
        id=zlib.crc32(title.encode()) % 10000,
        title=title,
        priority=priority,
        assignees=assignees,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float = Field(gt=0)


class Rectangle(BaseModel):
    kind: Literal["rectangle"] = "rectangle"
    width: float = Field(gt=0)
    height: float = Field(gt=0)


class Triangle(BaseModel):
    kind: Literal["triangle"] = "triangle"
    base: float = Field(gt=0)
    height: float = Field(gt=0)


Shape = Annotated[Circle | Rectangle | Triangle, Field(discriminator="kind")]


class Area(BaseModel):
    kind: str
    area: float
    unit: str


@mcp.tool(title="Area of a shape")
def area(shape: Shape, unit: Literal["cm", "m", "in"] = "cm") -> Area:
    """A discriminated union (oneOf on "kind") and a string enum; structured output."""
    if isinstance(shape, Circle):
        value = 3.141592653589793 * shape.radius**2
    elif isinstance(shape, Rectangle):
        value = shape.width * shape.height
    else:
        value = shape.base * shape.height / 2
    return Area(kind=shape.kind, area=round(value, 6), unit=f"{unit}²")


class Matrix(BaseModel):
    rows: list[list[float]] = Field(description="An array of arrays of numbers")


@mcp.tool()
def transpose(matrix: Matrix) -> Matrix:
    """Nested arrays inside an object."""
    rows = matrix.rows
    return Matrix(rows=[list(col) for col in zip(*rows)] if rows else [])


@mcp.tool()
def echo(text: str, repeat: Annotated[int, Field(ge=1, le=10)] = 1, uppercase: bool = False) -> str:
    """The simplest tool: text back (plain text content, no schema)."""
    out = " ".join([text] * repeat)
    return out.upper() if uppercase else out


# ---------------------------------------------------------------- tools: result kinds


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A tiny solid-colour PNG, built by hand so the demo needs no imaging library."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


COLOURS = {"red": (220, 50, 47), "green": (40, 160, 80), "blue": (38, 110, 210), "grey": (128, 128, 128)}


@mcp.tool(title="Colour swatch")
def swatch(
    colour: Literal["red", "green", "blue", "grey"] = "blue", size: Annotated[int, Field(ge=1, le=256)] = 32
) -> Image:
    """An image result (PNG, base64)."""
    return Image(data=_png(size, size, COLOURS[colour]), format="png")


@mcp.tool()
async def countdown(
    steps: Annotated[int, Field(ge=1, le=50)] = 5,
    delay_ms: Annotated[int, Field(ge=0, le=5000)] = 300,
    ctx: Context | None = None,
) -> str:
    """Progress notifications, one per step (pass a progress token to see them)."""
    for i in range(steps):
        if ctx is not None:
            await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
        await asyncio.sleep(delay_ms / 1000)
    return f"Lift-off after {steps} steps."


@mcp.tool()
async def log_messages(
    message: str = "hello", level: Literal["debug", "info", "warning", "error"] = "info", ctx: Context | None = None
) -> str:
    """Sends a log notification at the chosen level (logging/setLevel filters them), and a stderr line."""
    if ctx is not None:
        await ctx.log(level, {"message": message, "at": datetime.now(UTC).isoformat()}, logger_name="demo")
    print(f"demo stderr: {message}", file=sys.stderr, flush=True)
    return f"Logged {message!r} at {level}."


@mcp.tool()
def divide(a: float, b: float) -> float:
    """An error result (isError: true) when b is 0."""
    if b == 0:
        raise ToolError("Cannot divide by zero.")  # a ToolError's text reaches the client
    return a / b


# ---------------------------------------------------------------- resources and prompts


@mcp.resource("demo://readme", mime_type="text/markdown", title="Read me")
def readme() -> str:
    """What this server is."""
    return (
        "# MCP Playground demo\n\nEach tool shows one feature of the protocol: try "
        "`create_ticket` (nested arguments), `area` (oneOf), `swatch` (image), "
        "`countdown` (progress), `log_messages` (logging), `divide` with b = 0 (an error).\n"
    )


@mcp.resource("demo://config.json", mime_type="application/json", title="Configuration")
def config() -> dict:
    """A JSON resource."""
    return {"name": "playground-demo", "features": ["tools", "resources", "prompts", "logging"]}


@mcp.resource("demo://swatch.png", mime_type="image/png", title="Swatch")
def swatch_resource() -> bytes:
    """A binary (blob) resource."""
    return _png(16, 16, COLOURS["green"])


@mcp.resource("demo://users/{user_id}/profile", mime_type="application/json")
def profile(user_id: str) -> dict:
    """A resource template: fill in user_id."""
    return {"id": user_id, "display": f"User {user_id}", "avatar": f"demo://users/{user_id}/avatar"}


@mcp.prompt(title="Review code")
def review_code(code: str, language: str = "python", focus: str = "bugs") -> str:
    """A prompt with required and optional arguments."""
    return f"Review this {language} code, focusing on {focus}:\n\n```{language}\n{code}\n```"


@mcp.prompt()
def summarise(text: str) -> list[dict]:
    """A prompt that returns more than one message."""
    return [
        {"role": "user", "content": {"type": "text", "text": f"Summarise in one sentence:\n\n{text}"}},
        {"role": "assistant", "content": {"type": "text", "text": "Here is a one-sentence summary:"}},
    ]


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) > 1 else "stdio"
    if mode == "stdio":
        mcp.run()
    elif mode in ("http", "sse") and len(argv) > 2:
        mcp.run(transport="streamable-http" if mode == "http" else "sse", host="127.0.0.1", port=int(argv[2]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
