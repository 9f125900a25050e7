"""Tool lists and tool results fetched from real peers with the playground's own client (stdio)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from playground.mcp.config import ServerConfig
from playground.mcp.connect import open_client
from tests.conftest import PEERS, ROOT

T = TypeVar("T")


async def _session(command: str, args: list[str], env: dict[str, str] | None, work: Callable[[Any], Awaitable[T]]) -> T:
    config = ServerConfig(transport="stdio", command=command, args=args, cwd=str(ROOT), env=env or {}, timeout=60)
    client = await open_client(config)
    try:
        return await work(client)
    finally:
        await client.close()


def _run(command: str, args: list[str], work: Callable[[Any], Awaitable[T]], env: dict[str, str] | None = None) -> T:
    return asyncio.run(asyncio.wait_for(_session(command, args, env, work), 120))


def list_tools(command: str, args: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return _run(command, args, lambda client: client.list_tools(), env)


def call_tools(command: str, args: list[str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each call's result, in order, from one session."""

    async def work(client: Any) -> list[Any]:
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    return _run(command, args, work)


def model_view_peer(*args: str) -> list[dict[str, Any]]:
    return list_tools(sys.executable, [str(PEERS / "model_view_peer.py"), *args])


def demo_server() -> list[dict[str, Any]]:
    return list_tools(sys.executable, ["-m", "playground.demo_server"])
