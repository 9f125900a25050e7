"""The bridge's messages checked against the MCP Apps schema, with the same problem flags as
the MCP frames (`lint/definitions.Report`).

The extension's messages (`ui/...`) are checked against its published JSON Schema (vendored
unmodified in `apps/schema/2026-01-26/`), whose definitions are the message without its JSON-RPC
envelope (`method` and `params`; a result alone): the envelope is checked against the MCP
schema's, the rest against the extension's definition. The standard MCP messages an app sends
through the host (`tools/call`, `resources/read`, `notifications/message`, `ping`) are checked
against the MCP schema of the session's version, the app speaking as a client.

In the tap's terms the host is "we": `send` is host -> app, `recv` is app -> host.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from playground.schema import validator_class

from ..apps.meta import PROTOCOL_VERSION
from .definitions import Direction, Report, Request, Schema, Unchecked, check
from .definitions import schema as mcp_schema

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "apps" / "schema" / PROTOCOL_VERSION / "schema.json"
SPEC = f"https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/{PROTOCOL_VERSION}/apps.mdx"
LABEL = f"Apps {PROTOCOL_VERSION}"  # (shown after "MCP": "Breaks … of MCP Apps 2026-01-26")
# The MCP direction of an app's standard messages: the app is the client, the host the server.
AS_MCP: dict[str, Direction] = {"recv": "send", "send": "recv"}


class AppsSchema(Schema):
    """The extension's schema: its definitions by method (requests, notifications) and results."""

    def __init__(self) -> None:  # (not Schema's: another document, another layout)
        self.version = LABEL
        self.document: dict[str, Any] = json.loads(SCHEMA_FILE.read_bytes())
        self.key = "$defs"
        self.defs = self.document[self.key]
        self.cls = validator_class(self.document)
        self.by_method: dict[str, str] = {}
        for name, node in self.defs.items():
            method = ((node.get("properties") or {}).get("method") or {}).get("const")
            if isinstance(method, str):
                self.by_method[method] = name
        self._start_caches()

    def result_of(self, method: str) -> str | None:
        name = self.by_method.get(method)
        result = name.removesuffix("Request") + "Result" if name and name.endswith("Request") else None
        return result if result in self.defs else None


@functools.cache
def apps_schema() -> AppsSchema:
    return AppsSchema()


def _spec() -> str:
    return SPEC


def _as_mcp(method: Any, direction: Direction, version: str) -> Direction:
    """The MCP direction an app's (or the host's) standard message is checked in: the app speaks
    as a client (tools/call, resources/read), except for what only a server sends in MCP, such
    as the logging `notifications/message` the extension lets an app send its host."""
    mcp = AS_MCP[direction]
    if not isinstance(method, str):
        return mcp
    own = mcp_schema(version)
    other: Direction = "recv" if mcp == "send" else "send"
    known_here = method in own.requests[mcp] or method in own.notifications[mcp]
    known_there = method in own.requests[other] or method in own.notifications[other]
    return other if known_there and not known_here else mcp


def _checked(ext: Schema, definition: str, instance: Any, prefix: str, report: Report) -> list[dict[str, str]]:
    """The extension's problems with `instance`; none, and `report.unchecked` said, where its
    published schema cannot be applied (three definitions `$ref` a `__schema0` not there)."""
    try:
        return ext._problems((definition,), instance, prefix)
    except Unchecked as exc:
        report.unchecked = str(exc)
        return []


def check_bridge(message: Any, *, direction: Direction, request: Request | None, mcp_version: str) -> Report:
    """Check one message of the bridge (`direction` in the tap's terms: `send` host -> app)."""
    method = message.get("method") if isinstance(message, dict) else None
    answered = request.method if request is not None else None
    ours = (isinstance(method, str) and method.startswith("ui/")) or (
        method is None and isinstance(answered, str) and answered.startswith("ui/")
    )
    if not ours:
        return check(message, version=mcp_version, direction=_as_mcp(method, direction, mcp_version), request=request)
    ext = apps_schema()
    # The envelope (jsonrpc, id) as MCP has it; then the extension's definition.
    envelope = check(message, version=mcp_version, direction=AS_MCP[direction], request=None)
    problems = [
        p for p in envelope.problems if p["pointer"] in ("", "/jsonrpc", "/id") and "method" not in p["message"]
    ]
    report = Report(LABEL, "", _spec)
    if isinstance(method, str):
        definition = ext.by_method.get(method)
        if definition is None:
            problems.insert(
                0,
                {
                    "pointer": "/method",
                    "message": f"{method!r} is not a method of MCP {LABEL}",
                    "schema_path": "#/$defs",
                },
            )
        else:
            report.definition = definition
            body = {k: v for k, v in message.items() if k not in ("jsonrpc", "id")}
            problems += _checked(ext, definition, body, "", report)
    elif isinstance(message, dict) and "result" in message and answered is not None:
        definition = ext.result_of(answered)
        if definition is not None:
            report.definition = definition
            problems += _checked(ext, definition, message["result"], "/result", report)
    if not report.definition:
        report.definition = envelope.definition
    report.problems = problems[:20]
    report.more = len(problems) > 20
    return report
