"""What the capture tests share: a real host's exchange (the official SDK client with the SDK
server, through tests/capture/relay.py) as upload records, a user with a server and a capture
token, and the upload as a capture makes it."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters

from tests.conftest import PEERS

RELAY = Path(__file__).resolve().parent / "relay.py"
SDK_SERVER = [sys.executable, str(PEERS / "sdk_server.py"), "stdio"]
HOST = types.Implementation(name="test-host", version="9.8.7")
ENV_SECRET = "sk-env-secret-42"  # the registered server's env value (conftest.owner): the host sends it once


async def _answer(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def host_exchange() -> list[dict[str, Any]]:
    """The records of one real exchange: the SDK client (declaring elicitation) lists the tools,
    calls echo, a tool that writes to stderr, and one that asks the host for a name."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "records.jsonl"
        params = StdioServerParameters(command=sys.executable, args=[str(RELAY), str(path), "--", *SDK_SERVER])
        with anyio.fail_after(60):
            async with Client(params, mode="legacy", client_info=HOST, elicitation_callback=_answer) as client:
                await client.list_tools()
                assert (await client.call_tool("echo", {"text": "hello capture"})).content[0].text == "hello capture"
                await client.call_tool("stderr_line", {"text": "a line on stderr"})
                await client.call_tool("echo", {"text": f"key {ENV_SECRET}"})
                assert (await client.call_tool("ask_name", {})).content[0].text == "Hello, Ada!"
        with anyio.fail_after(20):  # the relay writes its `end` once the server has exited
            while not (text := path.read_text()).endswith("\n") or '"kind": "end"' not in text:
                await anyio.sleep(0.05)
        return [json.loads(line) for line in text.splitlines()]


def body(records: list[dict[str, Any]], server_id: int, capture: str | None = None) -> bytes:
    """The records as an upload for `server_id` (and another capture id, if given)."""
    changed = [{**r, "server": server_id, **({"capture": capture} if capture else {})} for r in records]
    return "".join(json.dumps(r) + "\n" for r in changed).encode()


def post(client: Any, token: str, data: bytes, **headers: str) -> Any:
    """One upload, as the capture makes it."""
    return client.post(
        "/capture/v1/frames",
        data=data,
        content_type="application/x-ndjson",
        headers={"Authorization": f"Bearer {token}", **headers},
    )
