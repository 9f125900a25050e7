"""Hosts nobody here wrote, started on the capture exactly as the server half's entry says
(command: the venv's python; args: manage.py mcp --capture BASE --capture-server ID -- COMMAND;
env: the token): the official Python SDK client and the official Inspector's CLI mode, against
the SDK's MCPServer peer. Tool calls give what they give without the capture, and the receiver
holds the session both ways."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import StdioServerParameters

from tests.conftest import PEERS
from tests.mcp.capture.conftest import MANAGE, SERVER, TOKEN, contiguous, frames, inspector, session_of
from tests.mcp.capture.receiver import Receiver

SDK_PEER = [sys.executable, str(PEERS / "sdk_server.py"), "stdio"]


def entry(base: str, tmp: Path) -> dict[str, Any]:
    """The `mcpServers` entry of the contract."""
    return {
        "command": sys.executable,
        "args": [MANAGE, "mcp", "--capture", base, "--capture-server", str(SERVER), "--", *SDK_PEER],
        "env": {"PLAYGROUND_CAPTURE_TOKEN": TOKEN, "PLAYGROUND_CAPTURE_SPILL_DIR": str(tmp / "spill")},
    }


async def test_the_sdk_client_through_the_capture(fresh: Receiver, tmp_path: Path) -> None:
    direct = await session_of(StdioServerParameters(command=SDK_PEER[0], args=SDK_PEER[1:]))
    e = entry(fresh.base, tmp_path)
    captured = await session_of(StdioServerParameters(command=e["command"], args=e["args"], env=e["env"]))
    assert captured == direct

    await anyio.to_thread.run_sync(fresh.wait, fresh.ended)
    capture = fresh.only()
    records = capture.ordered()
    assert contiguous(records) and records[-1]["kind"] == "end"
    sent = [json.loads(line) for line in frames(records, "send")]
    got = [json.loads(line) for line in frames(records, "recv")]
    assert sent[0]["method"] in ("server/discover", "initialize")  # (the SDK 2.x client tries the modern era)
    assert "sdk-peer" in json.dumps(got[0])  # the server's answer, whatever the era: its name
    calls = [m["params"]["name"] for m in sent if m.get("method") == "tools/call"]
    assert calls == ["echo", "add", "weather", "fail", "slow", "stderr_line"]
    answered = {m["id"] for m in got if "id" in m}
    assert {m["id"] for m in sent if "id" in m and "method" in m} <= answered  # every request's answer
    assert "on stderr" in [r["text"] for r in records if r["kind"] == "stderr"]


def test_the_inspector_cli_through_the_capture(fresh: Receiver, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "captured": entry(fresh.base, tmp_path),
                    "direct": {"command": SDK_PEER[0], "args": SDK_PEER[1:]},
                }
            }
        )
    )
    call = ["--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=40"]
    direct = inspector(["--cli", "--config", str(config), "--server", "direct", *call], tmp_path)
    captured = inspector(["--cli", "--config", str(config), "--server", "captured", *call], tmp_path)
    assert captured == direct and direct["structuredContent"] == {"result": 42}

    fresh.wait(fresh.ended)
    records = fresh.only().ordered()
    assert contiguous(records)
    sent = [json.loads(line) for line in frames(records, "send")]
    assert sent[0]["method"] == "initialize" and "inspector" in sent[0]["params"]["clientInfo"]["name"].lower()
    calls = [m["params"] for m in sent if m.get("method") == "tools/call"]
    assert calls == [{"name": "add", "arguments": {"a": 2, "b": 40}}]
    assert json.loads(frames(records, "recv")[-1])["result"]["structuredContent"] == {"result": 42}
