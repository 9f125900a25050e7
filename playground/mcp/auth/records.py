"""What authorization remembers: settings a person gives, the client registration and the
tokens an authorization server issued, keyed by server and issuer, and the store
interface that keeps them (in memory for the CLI, a Django model for the page).

Client credentials are bound to the issuer that issued them (the spec's "authorization
server binding"): a record for issuer A is never used with issuer B.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from .metadata import resource_matches

TOKEN_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback"


@dataclass
class AuthSettings:
    """A server's authorization settings (all optional: discovery does the rest)."""

    enabled: bool = True
    client_id: str = ""  # pre-registered client (priority 1)
    client_secret: str = ""
    auth_method: str = ""  # token endpoint auth method; "" = choose from metadata
    issuer: str = ""  # the AS the pre-registered client belongs to; "" = the first one met
    scopes: list[str] = field(default_factory=list)  # requested on top of the challenge's
    client_metadata_url: str = ""  # a Client ID Metadata Document URL (priority 2, when the AS supports it)
    redirect_uri: str = DEFAULT_REDIRECT_URI
    client_name: str = "MCP Playground"
    offline_access: bool = True  # ask for a refresh token when the AS lists offline_access

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> AuthSettings:
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: v for k, v in (data or {}).items() if k in names})


@dataclass
class ClientInfo:
    """The client identity at one authorization server."""

    client_id: str
    client_secret: str = ""
    auth_method: str = "none"
    source: str = "dcr"  # pre-registered | cimd | dcr
    registration: dict[str, Any] = field(default_factory=dict)  # the DCR response (secrets stripped)


@dataclass
class TokenSet:
    access_token: str
    token_type: str = "Bearer"
    refresh_token: str = ""
    expires_at: float | None = None  # epoch seconds
    scope: str = ""  # granted (or, when the AS did not say, requested)
    requested_scope: str = ""
    id_token: str = ""
    obtained_at: float = field(default_factory=time.time)

    def expired(self, margin: float = 30.0) -> bool:
        return self.expires_at is not None and time.time() + margin >= self.expires_at

    @property
    def scopes(self) -> set[str]:
        return set(self.scope.split())


@dataclass
class AuthRecord:
    """Everything known about one (server, issuer) pair."""

    issuer: str
    resource: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)  # the AS metadata (or the 2025-03-26 defaults)
    client: ClientInfo | None = None
    tokens: TokenSet | None = None
    updated_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuthRecord:
        client = data.get("client")
        tokens = data.get("tokens")
        return cls(
            issuer=data["issuer"],
            resource=data.get("resource", ""),
            metadata=data.get("metadata") or {},
            client=ClientInfo(**client) if isinstance(client, dict) else None,
            tokens=TokenSet(**tokens) if isinstance(tokens, dict) else None,
            updated_at=data.get("updated_at", time.time()),
        )

    def issued_for(self, server_url: str) -> bool:
        """Whether its tokens were issued for this server URL (RFC 8707: a token is for the
        resource it names; one of an unrecorded resource is for none)."""
        return bool(self.resource) and resource_matches(self.resource, server_url)

    def secrets(self) -> list[str]:
        out = []
        if self.client and self.client.client_secret:
            out.append(self.client.client_secret)
        if self.tokens:
            out += [self.tokens.access_token, self.tokens.refresh_token, self.tokens.id_token]
        return [s for s in out if s]


class AuthStore(Protocol):
    """Where records live. `server` is a stable key for the MCP server (its id or URL)."""

    async def get(self, server: str, issuer: str) -> AuthRecord | None: ...

    async def latest(self, server: str) -> AuthRecord | None:
        """The most recently updated record of this server (its tokens are tried first)."""

    async def records(self, server: str) -> list[AuthRecord]:
        """Every record of this server (to find which issuer a pre-registered client is bound to)."""

    async def put(self, server: str, record: AuthRecord) -> None: ...

    async def delete(self, server: str, issuer: str) -> None: ...


class MemoryStore:
    """In-memory store (the CLI, the conformance adapter, tests)."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], AuthRecord] = {}
        self._lock = asyncio.Lock()

    async def get(self, server: str, issuer: str) -> AuthRecord | None:
        return self._records.get((server, issuer))

    async def latest(self, server: str) -> AuthRecord | None:
        mine = [r for (s, _), r in self._records.items() if s == server]
        return max(mine, key=lambda r: r.updated_at, default=None)

    async def records(self, server: str) -> list[AuthRecord]:
        return [r for (s, _), r in self._records.items() if s == server]

    async def put(self, server: str, record: AuthRecord) -> None:
        async with self._lock:
            record.updated_at = time.time()
            self._records[(server, record.issuer)] = record

    async def delete(self, server: str, issuer: str) -> None:
        self._records.pop((server, issuer), None)
