"""The stdio <-> Streamable HTTP bridge (`--capture … --url URL`): the official SDK client over stdio
through it gets from the SDK's HTTP peer what it gets over HTTP directly, progress notifications
(an SSE answer) included."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tests.mcp.capture.conftest import MANAGE, SERVER, inspector, session_of


async def test_the_sdk_client_through_the_bridge(sdk_http: str) -> None:
    direct = await session_of(sdk_http)
    args = [MANAGE, "mcp", "--capture", "http://127.0.0.1:9", "--capture-server", str(SERVER), "--url", sdk_http]
    bridged = await session_of(StdioServerParameters(command=sys.executable, args=args))
    assert bridged == direct
    assert direct[1] == [1, 2, 3]


def test_the_inspector_cli_through_the_bridge(sdk_http: str, tmp_path: Path) -> None:
    """The legacy handshake (the Inspector's): the session id and version come back on each request."""
    bridged = {
        "command": sys.executable,
        "args": [MANAGE, "mcp", "--capture", "http://127.0.0.1:9", "--capture-server", str(SERVER), "--url", sdk_http],
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"bridged": bridged}}))
    call = ["--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=40"]
    through = inspector(["--cli", "--config", str(config), "--server", "bridged", *call], tmp_path)
    direct = inspector(["--cli", sdk_http, "--transport", "http", *call], tmp_path)
    assert through == direct and direct["structuredContent"] == {"result": 42}
