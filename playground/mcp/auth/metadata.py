"""Where the metadata documents are and whether they can be used: Protected Resource
Metadata (RFC 9728) and authorization server metadata (RFC 8414 / OpenID Connect
Discovery), in the spec's order, and the 2025-03-26 fallbacks."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


def origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), "", "", ""))


def canonical_resource(url: str) -> str:
    """The canonical server URI (RFC 8707 §2): lower-case scheme and host, no fragment or
    query, no trailing slash unless the path is the slash alone... which is dropped too."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def prm_urls(server_url: str) -> list[str]:
    """The well-known PRM URLs to try when the challenge names none: path-aware, then root."""
    path = urlsplit(server_url).path.rstrip("/")
    base = origin(server_url)
    urls = [f"{base}{PRM_WELL_KNOWN}{path}"] if path else []
    return urls + [f"{base}{PRM_WELL_KNOWN}"]


def as_metadata_urls(issuer: str) -> list[tuple[str, str]]:
    """(URL, kind) to try for an issuer, in the spec's priority order (path-aware issuers included)."""
    parts = urlsplit(issuer)
    base = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    path = parts.path.rstrip("/")
    if path:
        return [
            (f"{base}{OAUTH_WELL_KNOWN}{path}", "oauth"),
            (f"{base}{OIDC_WELL_KNOWN}{path}", "oidc"),
            (f"{base}{path}{OIDC_WELL_KNOWN}", "oidc"),
        ]
    return [(f"{base}{OAUTH_WELL_KNOWN}", "oauth"), (f"{base}{OIDC_WELL_KNOWN}", "oidc")]


def resource_matches(prm_resource: str, server_url: str) -> bool:
    """RFC 9728 §3.3 / §7.3: the PRM's `resource` must identify this server: same origin, and
    its path a prefix (by whole segments) of the server's path."""
    a, b = urlsplit(prm_resource), urlsplit(server_url)
    if (a.scheme.lower(), (a.hostname or "").lower(), a.port) != (b.scheme.lower(), (b.hostname or "").lower(), b.port):
        return False
    if a.fragment:
        return False
    prefix, path = a.path.rstrip("/"), b.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def as_metadata_problems(doc: Any, issuer: str) -> tuple[str | None, list[str]]:
    """(fatal reason, warnings) for an authorization server metadata document."""
    if not isinstance(doc, dict):
        return "the document is not a JSON object", []
    if doc.get("issuer") != issuer:
        return (
            f"its issuer {doc.get('issuer')!r} is not the issuer {issuer!r} the URL was built from "
            "(RFC 8414 §3.3: the client MUST NOT use this metadata)"
        ), []
    for name in ("authorization_endpoint", "token_endpoint"):
        if not isinstance(doc.get(name), str) or not doc[name]:
            return f"it has no {name}", []
    methods = doc.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        return (
            "it does not list S256 in code_challenge_methods_supported: the server may not support PKCE, "
            "and the spec says the client MUST refuse to proceed"
        ), []
    warnings = []
    rtypes = doc.get("response_types_supported")
    if isinstance(rtypes, list) and "code" not in rtypes:
        warnings.append("response_types_supported does not list 'code'")
    return None, warnings


def default_endpoints(server_url: str) -> dict[str, Any]:
    """The 2025-03-26 fallback when the server's origin publishes no metadata."""
    base = origin(server_url)
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "code_challenge_methods_supported": ["S256"],
        "x-playground-defaults": True,
    }
