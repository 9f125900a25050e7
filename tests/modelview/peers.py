"""Tool lists fetched from real peers with the playground's own client (stdio)."""
from __future__ import annotations

import asyncio
import sys
from typing import Any

from playground.mcp.config import ServerConfig
from playground.mcp.connect import open_client
from tests.conftest import PEERS, ROOT


async def _list_tools(command: str, args: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    config = ServerConfig(transport="stdio", command=command, args=args, cwd=str(ROOT), env=env or {}, timeout=60)
    client = await open_client(config)
    try:
        return await client.list_tools()
    finally:
        await client.close()


def list_tools(command: str, args: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return asyncio.run(asyncio.wait_for(_list_tools(command, args, env), 120))


def model_view_peer(*args: str) -> list[dict[str, Any]]:
    return list_tools(sys.executable, [str(PEERS / "model_view_peer.py"), *args])


def demo_server() -> list[dict[str, Any]]:
    return list_tools(sys.executable, ["-m", "playground.demo_server"])
