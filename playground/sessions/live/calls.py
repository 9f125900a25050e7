"""The page's calls as MCP requests: which request each command makes, and how an HTTP error
reads. The worker runs them (its `_perform`: in flight, progress, cancel, outcome)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playground.mcp import jsontext
from playground.mcp.client import McpClient
from playground.mcp.transports.base import HttpStatusError
from playground.schemaforms import avalidate_arguments

from ..protocol import Command

# The page's commands that are calls (a Result each).
CALLS = frozenset({"call_tool", "read_resource", "get_prompt", "ping", "raw", "task_get", "task_result",
                   "task_cancel"})
_TASK_METHODS = {"task_get": "tasks/get", "task_result": "tasks/result", "task_cancel": "tasks/cancel"}


async def request(client: McpClient, command: str, message: Command,
                  on_progress: Callable[[dict[str, Any]], None]) -> Any:
    """One call's request; its result (or the error it raises)."""
    timeout = message.get("timeout")
    if command == "call_tool" and message.get("task") is not None:
        # Task-augmented (2025-11-25 tasks): the answer is a CreateTaskResult to poll.
        return await client.request("tools/call", {"name": message["name"], "arguments": message.get("arguments") or {},
                                                   "task": message["task"]}, timeout=timeout, on_progress=on_progress)
    if command == "call_tool":
        return await client.call_tool(message["name"], message.get("arguments"), timeout=timeout,
                                      on_progress=on_progress)
    if command in _TASK_METHODS:
        return await client.request(_TASK_METHODS[command], {"taskId": message["task_id"]}, timeout=timeout)
    if command == "read_resource":
        return await client.read_resource(message["uri"])
    if command == "get_prompt":
        return await client.get_prompt(message["name"], message.get("arguments"))
    if command == "ping":
        return await client.ping()
    # raw: an exact frame, or a method with params
    frame = message.get("frame")
    request_id = raw_request_id(frame) if frame and not message.get("notification") else None
    if request_id is not None:
        # A hand-made request with an id: wait for the response to that id.
        return await client.request_raw(frame, request_id, timeout=timeout)
    if frame:
        await client.send_raw(frame)
        return {"sent": True}
    if message.get("notification"):
        await client.notify(message["method"], message.get("params"))
        return {"sent": True}
    return await client.request(message["method"], message.get("params"), timeout=timeout)


def output_schema(outcome: dict[str, Any], catalogue: dict[str, Any]) -> dict[str, Any] | None:
    """The outputSchema a tool call's structuredContent is checked against, if it has both."""
    result = outcome.get("result")
    if outcome.get("command") != "call_tool" or not isinstance(result, dict) or "structuredContent" not in result:
        return None
    tool = next((t for t in catalogue.get("tools", []) if t.get("name") == outcome.get("name")), None)
    schema = (tool or {}).get("outputSchema")
    return schema if isinstance(schema, dict) else None


async def check_structured(outcome: dict[str, Any], catalogue: dict[str, Any]) -> None:
    """Check the structuredContent against the tool's outputSchema, once, where the call ends
    (`structured_errors` on the outcome), so that no tab validates a server's schema again."""
    schema = output_schema(outcome, catalogue)
    if schema is not None:
        outcome["structured_errors"] = await avalidate_arguments(schema, outcome["result"]["structuredContent"])


def raw_request_id(frame: str) -> Any:
    """The id of a hand-typed frame that is a JSON-RPC request (a string or an integer id), else None."""
    try:
        parsed = jsontext.loads(frame)
    except (ValueError, RecursionError):
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("method"), str) and "id" in parsed:
        rid = parsed["id"]
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return rid
    return None


def http_error(exc: HttpStatusError) -> dict[str, Any]:
    """An HTTP error status: the JSON-RPC error in its body if there is one (the server's own code)."""
    body = exc.json if isinstance(exc.json, dict) else None
    error = body.get("error") if body else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return {"code": error["code"], "message": str(error.get("message", "")), "data": error.get("data"),
                "http": exc.status}
    return {"message": str(exc), "kind": "transport", "http": exc.status}
