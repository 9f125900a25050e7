"""The entries a host's config takes to run a registered server through the capture, one per
host people use: Claude Desktop, Cursor and Cline (`mcpServers`), VS Code (`servers`), Cherry
Studio (its `mcpServers` import). The command is this playground's own Python and manage.py by
absolute path, so the entry runs from whatever working directory the host starts it in."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from playground.mcp.secrets import mask_env
from playground.registry.models import Server

TOKEN_VARIABLE = "PLAYGROUND_CAPTURE_TOKEN"


@dataclass(frozen=True)
class HostEntry:
    host: str  # who takes it: "Claude Desktop, Cursor, Cline"
    where: str  # where it goes
    text: str  # the JSON, as pasted (what Copy gives)
    shown: str  # the same with secret-looking env values masked (what the page prints)


def stdio_entry(server: Server, base_url: str, token: str) -> dict[str, Any]:
    """The command, args and env that start the capture, which starts the server."""
    args = [str(settings.BASE_DIR / "manage.py"), "mcp", "--capture", base_url, "--capture-server", str(server.pk)]
    if server.cwd:
        args += ["--cwd", server.cwd]
    args += ["--", server.command, *(str(a) for a in server.args or [])]
    env = {TOKEN_VARIABLE: token, **{str(k): str(v) for k, v in (server.env or {}).items()}}
    return {"command": sys.executable, "args": args, "env": env}


def host_entries(server: Server, base_url: str, token: str) -> list[HostEntry]:
    """Each host's form of the entry; the first is the `mcpServers` one."""
    real = stdio_entry(server, base_url, token)
    masked = {**real, "env": {**mask_env(real["env"]), TOKEN_VARIABLE: token}}
    name = server.name

    def forms(entry: dict[str, Any]) -> list[Any]:
        return [
            {"mcpServers": {name: entry}},
            {"servers": {name: {"type": "stdio", **entry}}},
            {"mcpServers": {name: {"name": name, "type": "stdio", "isActive": True, **entry}}},
        ]

    hosts = [
        ("Claude Desktop, Cursor, Cline", "claude_desktop_config.json, ~/.cursor/mcp.json, cline_mcp_settings.json"),
        ("VS Code", ".vscode/mcp.json"),
        ("Cherry Studio", "Settings → MCP Servers → Add → Import from JSON"),
    ]
    return [
        HostEntry(host, where, _dumps(text), _dumps(shown))
        for (host, where), text, shown in zip(hosts, forms(real), forms(masked))
    ]


def _dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def capture_url(server: Server, base_url: str, token: str) -> str:
    """The HTTP capture's URL for `server` (http_proxy.py): a host uses it as the server's URL."""
    return f"{base_url}/capture/v1/http/{server.pk}/{token}/"


def http_entries(server: Server, base_url: str, token: str) -> list[HostEntry]:
    """Each host's form of a `url` entry on the HTTP capture (Claude Desktop's config file takes
    stdio servers only: it is not among them)."""
    url = capture_url(server, base_url, token)
    name = server.name
    sse = server.transport == Server.Transport.SSE
    documents = [
        ("Cursor, Cline", "~/.cursor/mcp.json, cline_mcp_settings.json", {"mcpServers": {name: {"url": url}}}),
        ("VS Code", ".vscode/mcp.json", {"servers": {name: {"type": "sse" if sse else "http", "url": url}}}),
        (
            "Cherry Studio",
            "Settings → MCP Servers → Add → Import from JSON",
            {
                "mcpServers": {
                    name: {"name": name, "type": "sse" if sse else "streamableHttp", "isActive": True, "baseUrl": url}
                }
            },
        ),
    ]
    return [HostEntry(host, where, _dumps(doc), _dumps(doc)) for host, where, doc in documents]
