"""How to reach a server: the plain data the registry stores and the CLI parses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

TransportName = Literal["stdio", "http", "sse", "auto"]
Era = Literal["legacy", "auto", "modern"]

DEFAULT_TIMEOUT = 60.0


@dataclass
class ServerConfig:
    transport: TransportName = "stdio"
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # merged onto the default environment
    cwd: str | None = None
    inherit_env: bool = False  # start with this process's whole environment (environment.py)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    era: Era = "legacy"
    # The protocol version offered (initialize) or asked for (server/discover); "" = the latest the
    # era knows. An older one tests how a server treats older clients, and reaches servers of
    # that version where a newer offer is refused (2025-03-26 authorization without PRM).
    protocol_version: str = ""
    timeout: float = DEFAULT_TIMEOUT  # per request, reset by progress

    def secret_values(self) -> list[str]:
        """Values that must never appear in a share or export: every header value, secret-looking
        or long env values, and what the transcript masks in the URL (its password, query values
        with secret-looking names), which a server may repeat all the same."""
        from urllib.parse import parse_qsl, urlsplit

        from .secrets import is_secret_name

        values: list[str] = []
        if self.url:
            parts = urlsplit(self.url)
            values += [parts.password or ""]
            values += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_secret_name(k)]
        for v in self.headers.values():
            values.append(v)
            # "Bearer abc…": a server may echo the credential without its scheme.
            scheme, _, credential = v.strip().partition(" ")
            if scheme.isalpha() and credential.strip():
                values.append(credential.strip())
        values += [v for k, v in self.env.items() if is_secret_name(k) or len(v) >= 8]
        return [v for v in values if v]
