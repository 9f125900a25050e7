"""An MCP server that is its own OAuth 2.1 authorization server, built from the official `mcp`
SDK: the SDK serves the authorization server metadata, Dynamic Client Registration, /authorize,
/token (PKCE S256 verification, client authentication, refresh), RFC 7009 revocation, the
bearer middleware (401 with `WWW-Authenticate`) and Protected Resource Metadata.

Written here is only what the SDK leaves to an application: the provider's storage and its
approval policy — every authorization request is approved at once (no login page) — the
access tokens, JWTs (HS256) so a client has claims to show, one pre-registered client
(PRE_REGISTERED, client_secret_post, for REDIRECT_URI), and two tools: `whoami` and
`echo_authorization` (answers with the Authorization header it received, token and all). The conformance suite's mocks
issue neither refresh tokens nor JWTs nor offer revocation; this peer does all three.

Usage: python sdk_auth_server.py PORT [REDIRECT_URI]   (binds 127.0.0.1 only; serves /mcp)
"""

from __future__ import annotations

import secrets
import sys
import time

import jwt
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl

SCOPE = "mcp:read"
PRE_REGISTERED = ("playground-pre-registered", "pre-registered-s3cret")
ACCESS_SECONDS = 3600
KEY = secrets.token_bytes(32)


class ApproveAllProvider:
    """In-memory storage; approves every request; access tokens are signed JWTs."""

    def __init__(self, issuer: str, redirect_uri: str) -> None:
        self.issuer = issuer
        client_id, secret = PRE_REGISTERED
        self.clients: dict[str, OAuthClientInformationFull] = {
            client_id: OAuthClientInformationFull(
                client_id=client_id,
                client_secret=secret,
                token_endpoint_auth_method="client_secret_post",
                redirect_uris=[AnyUrl(redirect_uri)],
                scope=SCOPE,
            )
        }
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.pairs: dict[str, str] = {}  # refresh token → its access token

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id or "", authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        await self.revoke_token(refresh_token)  # rotate both
        return self._issue(client.client_id or "", scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        return found if found is not None and (found.expires_at or 0) > time.time() else None

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        if isinstance(token, RefreshToken):
            self.refresh.pop(token.token, None)
            self.access.pop(self.pairs.pop(token.token, ""), None)
        else:
            self.access.pop(token.token, None)
            for r, a in list(self.pairs.items()):
                if a == token.token:
                    self.refresh.pop(r, None)
                    self.pairs.pop(r, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": "playground-tester",
            "aud": resource,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + ACCESS_SECONDS,
            "jti": secrets.token_hex(8),
        }
        access = jwt.encode(claims, KEY, algorithm="HS256")
        refresh = secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=now + ACCESS_SECONDS, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.pairs[refresh] = access
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=ACCESS_SECONDS,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )


def build(port: int, redirect_uri: str) -> MCPServer:
    issuer = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "sdk-auth-peer",
        version="1.0.0",
        auth_server_provider=ApproveAllProvider(issuer, redirect_uri),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(f"{issuer}/mcp"),
            validate_token_resource=True,
            required_scopes=[SCOPE],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Answers only with a valid token."""
        return "authorized"

    @server.tool()
    def echo_authorization(ctx: Context) -> str:
        """Echoes the Authorization header this request came with (a careless server that
        repeats a credential: the playground must mask it wherever it shows the answer)."""
        return f"you sent: {(ctx.headers or {}).get('authorization', '(none)')}"

    return server


if __name__ == "__main__":
    port = int(sys.argv[1])
    build(port, sys.argv[2] if len(sys.argv) > 2 else "http://127.0.0.1/callback").run(
        transport="streamable-http", host="127.0.0.1", port=port
    )
