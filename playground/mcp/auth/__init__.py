"""OAuth 2.1 authorization for remote MCP servers (no Django): discovery, registration,
the authorization code flow with PKCE, tokens, step-up — every step on the tap."""

from .authorizer import AuthorizationAborted, AuthorizationRequest, Authorizer, HeadlessAuthorizer
from .flow import OAuth, Outcome
from .httpx_auth import OAuthHttpxAuth
from .records import AuthRecord, AuthSettings, AuthStore, ClientInfo, MemoryStore, TokenSet

__all__ = [
    "AuthRecord",
    "AuthSettings",
    "AuthStore",
    "AuthorizationAborted",
    "AuthorizationRequest",
    "Authorizer",
    "ClientInfo",
    "HeadlessAuthorizer",
    "MemoryStore",
    "OAuth",
    "OAuthHttpxAuth",
    "Outcome",
    "TokenSet",
]
