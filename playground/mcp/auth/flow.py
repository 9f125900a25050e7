"""OAuth 2.1 authorization for one MCP server, as the MCP spec (2025-11-25 and 2026-07-28)
asks of a client: a 401 leads to Protected Resource Metadata, then authorization server
metadata, then a client identity (pre-registered, Client ID Metadata Document, or Dynamic
Client Registration), then the authorization code flow with PKCE S256, `resource`, the
spec's scope selection, `iss` validation, and tokens; a 403 `insufficient_scope` leads to
step-up with the union of scopes; an expired token is refreshed.

Every step is a note of kind "auth" ({step, status, ...}; status ok | info | failed |
refused) and every HTTP exchange an `http` note, so the page can show the flow as it goes.
A *refusal* is the client declining on purpose because the spec says it must (wrong
`iss`, foreign `resource`, mismatched metadata issuer, a step-up that cannot help); a
*failure* is something that went wrong. Either way the original 401/403 goes back to the
transport, and the request fails with it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx

from ..events import Tap
from ..secrets import Redactor
from .authorizer import AuthorizationAborted, AuthorizationRequest, Authorizer, HeadlessAuthorizer
from .challenge import Challenge, bearer_challenge
from .metadata import (
    as_metadata_problems,
    as_metadata_urls,
    canonical_resource,
    default_endpoints,
    origin,
    prm_urls,
    resource_matches,
)
from .recorder import Exchange, Recorder
from .records import TOKEN_AUTH_METHODS, AuthRecord, AuthSettings, AuthStore, ClientInfo, MemoryStore, TokenSet

SPEC = "https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization"
# The last protocol version whose authorization works without Protected Resource Metadata:
# 2025-03-26 discovers the authorization server at the MCP server's origin (RFC 8414) and
# falls back to /authorize, /token, /register. From 2025-06-18 on, clients MUST use PRM.
BACKCOMPAT_VERSION = "2025-03-26"


def backcompat_applies(protocol_version: str | None) -> bool:
    """The 2025-03-26 discovery rules apply to a request made under 2025-03-26 (or 2024-11-05,
    which defined no authorization: 2025-03-26's rules are the closest); never to a later or
    an unknown version."""
    return (
        isinstance(protocol_version, str)
        and len(protocol_version) == 10
        and protocol_version[4] == "-"
        and protocol_version <= BACKCOMPAT_VERSION
    )


class AuthStop(Exception):
    """The flow stops at `step`; `refused` when the client declines because the spec says so."""

    def __init__(self, step: str, reason: str, *, expected: str = "", refused: bool = False) -> None:
        super().__init__(reason)
        self.step = step
        self.reason = reason
        self.expected = expected
        self.refused = refused


@dataclass
class Discovery:
    resource: str
    issuer: str
    metadata: dict[str, Any]
    prm: dict[str, Any] | None = None
    scopes_supported: list[str] | None = None
    backcompat: bool = False


@dataclass
class Outcome:
    """How the last flow ended (the adapter and the page read it)."""

    status: str = "idle"  # idle | ok | failed | refused
    step: str = ""
    reason: str = ""
    at: float = field(default_factory=time.time)


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def client_authentication(client: ClientInfo, form: dict[str, str]) -> dict[str, str]:
    """Authenticate at the token (or revocation) endpoint: client_secret_basic (the id and
    secret form-urlencoded, RFC 6749 §2.3.1) as a header, client_secret_post or none in `form`.
    `client_id` is in the form every time (RFC 6749 §3.2.1 allows it): the official SDK's
    authorization server answers `invalid_client` ("Missing client_id") to Basic without it."""
    form["client_id"] = client.client_id
    if client.auth_method == "client_secret_basic" and client.client_secret:
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    if client.auth_method == "client_secret_post" and client.client_secret:
        form["client_secret"] = client.client_secret
    return {}


def _is_loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")


class OAuth:
    """Authorization state and flow for one MCP server URL. Shared by the transports of one
    connection attempt; concurrent 401s run one flow (the others then retry with its token)."""

    def __init__(
        self,
        tap: Tap,
        server_url: str,
        *,
        settings: AuthSettings | None = None,
        authorizer: Authorizer | None = None,
        store: AuthStore | None = None,
        server_key: str | None = None,
        timeout: float = 30.0,
        on_secret: Callable[[list[str]], None] | None = None,
        state_prefix: str = "",
        client_factory: Callable[..., httpx.AsyncClient] | None = None,
    ) -> None:
        self.tap = tap
        self.server_url = server_url
        self.settings = settings or AuthSettings()
        self.authorizer: Authorizer = authorizer or HeadlessAuthorizer()
        self.store: AuthStore = store or MemoryStore()
        self.server_key = server_key or canonical_resource(server_url)
        self.on_secret = on_secret
        self.state_prefix = state_prefix  # lets a shared callback URL find the session a response belongs to
        self.record: AuthRecord | None = None
        self.outcome = Outcome()
        self.waiting_on_user = False
        self._secrets: set[str] = {s for s in (self.settings.client_secret,) if s}
        self._redactor = Redactor(self._secrets)
        self._lock = asyncio.Lock()
        self._loaded = False
        self._prereg_issuer = self.settings.issuer
        # client_factory: metadata and token requests go through the same network guard as MCP traffic.
        self.recorder = Recorder(tap, lambda: self._secrets, timeout, client_factory)

    # secrets and notes -------------------------------------------------------------------------

    def secret_values(self) -> list[str]:
        return sorted(self._secrets)

    def redactor(self) -> Redactor:
        """Masks what the flow obtained (tokens, codes, client secrets) where a server may echo
        it: what a page is sent, what the CLI prints. Made anew only when a value is learnt."""
        return self._redactor

    def _learn(self, *values: str | None) -> None:
        new = [v for v in values if v and v not in self._secrets]
        if new:
            self._secrets.update(new)
            self._redactor = Redactor(self._secrets)
            if self.on_secret is not None:
                self.on_secret(new)

    def step(self, step: str, status: str, text: str, **data: Any) -> None:
        self.tap.note("auth", text, step=step, status=status, **{k: v for k, v in data.items() if v is not None})

    def _stop(self, stop: AuthStop) -> None:
        self.outcome = Outcome("refused" if stop.refused else "failed", stop.step, stop.reason)
        self.step(stop.step, self.outcome.status, stop.reason, expected=stop.expected or None)

    @property
    def refusal(self) -> str | None:
        return self.outcome.reason if self.outcome.status == "refused" else None

    # the token for a request -----------------------------------------------------------------

    async def authorization_header(self) -> str | None:
        """`Bearer …` for the next request (loading a stored token first; refreshing an expired one)."""
        if not self._loaded:
            self._loaded = True
            stored = await self.store.latest(self.server_key)
            if stored is not None and stored.tokens is not None and not self._issued_here(stored):
                stored = None
            if stored is not None and stored.tokens is not None:
                self.record = stored
                self._learn(*stored.secrets())
                self.step(
                    "stored-token",
                    "info",
                    f"using the stored token from {stored.issuer}",
                    issuer=stored.issuer,
                    **self.token_facts(),
                )
        record = self.record
        if record is None or record.tokens is None:
            return None
        if record.tokens.expired() and record.tokens.refresh_token:
            async with self._lock:
                if self.record is record and record.tokens is not None and record.tokens.expired():
                    await self._refresh(record)
        tokens = self.record.tokens if self.record else None
        return f"Bearer {tokens.access_token}" if tokens else None

    def _issued_here(self, record: AuthRecord) -> bool:
        """Whether `record`'s tokens were issued for this server's URL (RFC 8707: a token is for
        the resource it names). A server whose URL changed keeps its stored tokens, unsent."""
        if record.issued_for(self.server_url):
            return True
        self.step(
            "stored-token",
            "info",
            f"the stored token from {record.issuer} was issued for "
            f"{record.resource or 'an unrecorded resource'}, not {canonical_resource(self.server_url)}: "
            "not sent (the server's URL changed?). It stays stored until you forget it.",
            issuer=record.issuer,
            resource=record.resource or None,
        )
        return False

    def token_facts(self) -> dict[str, Any]:
        """What the page shows about the current token (never the token itself)."""
        tokens = self.record.tokens if self.record else None
        if tokens is None:
            return {}
        return {
            "token_type": tokens.token_type,
            "scope": tokens.scope,
            "expires_at": tokens.expires_at,
            "has_refresh_token": bool(tokens.refresh_token),
        }

    # challenges ------------------------------------------------------------------------------

    async def handle(
        self, status: int, www_authenticate: Iterable[str], sent: str | None, *, protocol_version: str | None = None
    ) -> bool:
        """React to a 401/403 of the MCP server; True when the request should be retried.
        `protocol_version`: what the request was made under (httpx_auth.protocol_version_of)."""
        challenge = bearer_challenge(www_authenticate)
        async with self._lock:
            current = await self.authorization_header_nolock()
            if current and current != sent:
                return True  # another request re-authorized meanwhile
            try:
                if status == 403:
                    await self._step_up(challenge)
                else:
                    await self._unauthorized(challenge, had_token=sent is not None, protocol_version=protocol_version)
            except AuthStop as stop:
                self._stop(stop)
                return False
            self.outcome = Outcome("ok", "token", "")
            return True

    async def authorization_header_nolock(self) -> str | None:
        tokens = self.record.tokens if self.record else None
        return f"Bearer {tokens.access_token}" if tokens else None

    async def _unauthorized(
        self, challenge: Challenge | None, *, had_token: bool, protocol_version: str | None
    ) -> None:
        disc = await self.discover(challenge, protocol_version=protocol_version)
        record = await self._record_for(disc)
        same_as = self.record is not None and self.record.issuer == record.issuer
        if had_token and same_as and record.tokens and record.tokens.refresh_token:
            if await self._refresh(record):
                return
        previous = set(record.tokens.requested_scope.split()) if record.tokens else set()
        scopes = self._scopes(challenge.scopes if challenge else [], disc.scopes_supported, record, previous)
        await self._authorize(record, scopes)

    async def _step_up(self, challenge: Challenge | None) -> None:
        record = self.record
        if challenge is None or challenge.error != "insufficient_scope":
            raise AuthStop(
                "step-up",
                "HTTP 403 without a Bearer insufficient_scope challenge: not something re-authorization can fix",
                expected="403 with WWW-Authenticate: Bearer "
                'error="insufficient_scope", scope="…" (Scope Challenge Handling)',
            )
        if record is None or record.tokens is None:
            raise AuthStop("step-up", "HTTP 403 insufficient_scope but the client holds no token to step up from")
        needed = set(challenge.scopes)
        granted = record.tokens.scopes
        if needed and needed <= granted:
            raise AuthStop(
                "step-up",
                f"the server still answers insufficient_scope for {' '.join(sorted(needed))}, "
                "which the current token already carries: another authorization cannot help "
                "(retry limit, Step-Up Authorization Flow)",
                refused=True,
            )
        previous = set(record.tokens.requested_scope.split()) | granted
        self.step(
            "step-up",
            "info",
            f"step-up: the server needs {' '.join(sorted(needed)) or '(unspecified)'}; "
            "re-authorizing with the union of the scopes",
            challenged=sorted(needed),
            previous=sorted(previous),
        )
        scopes = self._scopes(sorted(needed), None, record, previous)
        await self._authorize(record, scopes)

    def _scopes(
        self, challenged: list[str], supported: list[str] | None, record: AuthRecord, previous: set[str]
    ) -> list[str]:
        """The spec's selection: the challenge's scope, else PRM scopes_supported, else none;
        plus the settings' scopes, what was asked before, and offline_access when offered."""
        base = list(challenged) if challenged else list(supported or [])
        source = "WWW-Authenticate scope" if challenged else ("scopes_supported" if supported else "none")
        scopes = list(dict.fromkeys([*sorted(previous), *base, *self.settings.scopes]))
        as_scopes = record.metadata.get("scopes_supported")
        if (
            scopes
            and self.settings.offline_access
            and isinstance(as_scopes, list)
            and "offline_access" in as_scopes
            and "offline_access" not in scopes
        ):
            scopes.append("offline_access")
        text = (
            f"scopes to request: {' '.join(scopes)} (from {source})"
            if scopes
            else "no scope to request: neither the WWW-Authenticate challenge nor scopes_supported names one (the "
            "scope parameter is omitted)"
        )
        self.step("scope", "info", text, scopes=scopes, source=source)
        return scopes

    # discovery ---------------------------------------------------------------------------------

    async def discover(self, challenge: Challenge | None, *, protocol_version: str | None = None) -> Discovery:
        """PRM, then the authorization server's metadata. Without PRM, only a request made under
        2025-03-26 takes that version's path (metadata at the server's origin, default endpoints);
        from 2025-06-18 on the client MUST use PRM, and the flow stops here (the 2025-11-25
        discovery diagram: "Abort or use pre-configured values")."""
        prm, prm_url = await self._fetch_prm(challenge)
        if prm is None:
            speaks = protocol_version or "a protocol version not known yet"
            if not backcompat_applies(protocol_version):
                raise AuthStop(
                    "resource-metadata",
                    f"no Protected Resource Metadata was found (the request was made under {speaks})",
                    expected="from 2025-06-18 on, the MCP server MUST publish Protected Resource Metadata "
                    "(RFC 9728), named by resource_metadata in WWW-Authenticate or at a well-known URL, "
                    "and the client MUST use it to find the authorization server; the fallback to the "
                    "server's origin and default endpoints belongs to 2025-03-26 and applies only to a "
                    "session speaking that version",
                )
            issuer = origin(self.server_url)
            self.step(
                "backcompat",
                "info",
                f"no Protected Resource Metadata; the request was made under {speaks}: "
                f"2025-03-26 behaviour, the server's origin {issuer} is the authorization server",
                issuer=issuer,
                protocol_version=protocol_version,
            )
            metadata = await self._fetch_as_metadata(issuer, allow_defaults=True)
            return Discovery(canonical_resource(self.server_url), issuer, metadata, backcompat=True)
        resource = prm.get("resource")
        if not isinstance(resource, str) or not resource:
            self.step("resource-metadata", "info", "the metadata has no `resource`; using the server's canonical URL")
            resource = canonical_resource(self.server_url)
        elif not resource_matches(resource, self.server_url):
            raise AuthStop(
                "resource-metadata",
                f"the metadata's resource {resource!r} does not identify this server "
                f"({self.server_url}); not proceeding",
                refused=True,
                expected="`resource` identical to (or a path prefix of) the MCP server URL the metadata "
                "was fetched for (RFC 9728 §3.3, RFC 8707)",
            )
        servers = [s for s in prm.get("authorization_servers") or [] if isinstance(s, str) and s]
        if not servers:
            raise AuthStop(
                "resource-metadata",
                "the metadata lists no authorization_servers",
                expected="at least one entry in authorization_servers",
            )
        issuer = servers[0]
        if len(servers) > 1:
            self.step(
                "resource-metadata",
                "info",
                f"{len(servers)} authorization servers listed; using the first, {issuer}",
                authorization_servers=servers,
            )
        supported = prm.get("scopes_supported")
        metadata = await self._fetch_as_metadata(issuer, allow_defaults=False)
        return Discovery(
            resource,
            issuer,
            metadata,
            prm=prm,
            scopes_supported=[s for s in supported if isinstance(s, str)] if isinstance(supported, list) else None,
        )

    async def _fetch_prm(self, challenge: Challenge | None) -> tuple[dict[str, Any] | None, str | None]:
        urls = []
        if challenge and challenge.resource_metadata:
            urls.append(challenge.resource_metadata)
        else:
            self.step(
                "resource-metadata",
                "info",
                "no resource_metadata in WWW-Authenticate: trying the well-known URLs (path-aware, then root)",
            )
        urls += [u for u in prm_urls(self.server_url) if u not in urls]
        for url in urls:
            ex = await self.recorder.send("resource-metadata", "GET", url)
            doc = ex.json() if ex.ok else None
            if isinstance(doc, dict):
                self.step(
                    "resource-metadata",
                    "ok",
                    f"Protected Resource Metadata from {url}",
                    url=url,
                    resource=doc.get("resource"),
                    authorization_servers=doc.get("authorization_servers"),
                    scopes_supported=doc.get("scopes_supported"),
                )
                return doc, url
            why = ex.describe() if not ex.ok else "the body is not a JSON object"
            self.step("resource-metadata", "info", f"no metadata at {url} ({why})", url=url)
        return None, None

    async def _fetch_as_metadata(self, issuer: str, *, allow_defaults: bool) -> dict[str, Any]:
        rejected: str | None = None
        for url, kind in as_metadata_urls(issuer):
            ex = await self.recorder.send("authorization-server-metadata", "GET", url)
            doc = ex.json() if ex.ok else None
            if doc is None:
                why = ex.describe() if not ex.ok else "not JSON"
                self.step("authorization-server-metadata", "info", f"no metadata at {url} ({why})", url=url)
                continue
            fatal, warnings = as_metadata_problems(doc, issuer)
            if fatal:
                rejected = f"metadata at {url} rejected: {fatal}"
                self.step(
                    "authorization-server-metadata",
                    "failed",
                    rejected,
                    url=url,
                    expected=f"issuer {issuer!r}, authorization and token endpoints, S256 in "
                    "code_challenge_methods_supported (RFC 8414 §3.3)",
                )
                continue
            self.step(
                "authorization-server-metadata",
                "ok",
                f"{'OpenID' if kind == 'oidc' else 'OAuth'} metadata of {issuer} from {url}",
                url=url,
                issuer=issuer,
                warnings=warnings or None,
                registration=bool(doc.get("registration_endpoint")),
                cimd=doc.get("client_id_metadata_document_supported") is True,
            )
            return doc
        if rejected:
            raise AuthStop(
                "authorization-server-metadata",
                rejected,
                refused=True,
                expected="metadata whose issuer is identical to the issuer the well-known URL was built from",
            )
        if allow_defaults:
            self.step(
                "authorization-server-metadata",
                "info",
                f"no metadata at {issuer}: using the 2025-03-26 default endpoints /authorize, /token, /register",
                issuer=issuer,
            )
            return default_endpoints(self.server_url)
        raise AuthStop(
            "authorization-server-metadata",
            f"no authorization server metadata for {issuer}",
            expected="RFC 8414 or OpenID Connect Discovery metadata at one of the well-known URLs",
        )

    async def _record_for(self, disc: Discovery) -> AuthRecord:
        if self.record is not None and self.record.issuer != disc.issuer:
            self.step(
                "as-change",
                "info",
                f"the authorization server changed from {self.record.issuer} to "
                f"{disc.issuer}: its own registration is used; credentials of {self.record.issuer} are never "
                "sent to it",
                previous=self.record.issuer,
                issuer=disc.issuer,
            )
        record = await self.store.get(self.server_key, disc.issuer) or AuthRecord(disc.issuer)
        if record.tokens is not None and not self._issued_here(record):
            record.tokens = None  # a new authorization replaces them; until then they stay stored
        record.metadata, record.resource = disc.metadata, disc.resource
        return record

    # client identity ---------------------------------------------------------------------------

    async def _client(self, record: AuthRecord) -> ClientInfo:
        if record.client is not None:
            return record.client
        meta = record.metadata
        s = self.settings
        if s.client_id:
            bound = self._prereg_issuer or await self._stored_binding() or record.issuer
            if bound == record.issuer:
                self._prereg_issuer = bound
                method = (
                    s.auth_method
                    if s.auth_method in TOKEN_AUTH_METHODS
                    else self._method_for(meta, bool(s.client_secret))
                )
                record.client = ClientInfo(s.client_id, s.client_secret, method, "pre-registered")
                self.step(
                    "registration",
                    "ok",
                    f"pre-registered client {s.client_id} ({method})",
                    source="pre-registered",
                    client_id=s.client_id,
                    auth_method=method,
                )
                return record.client
            self.step(
                "registration",
                "info",
                f"the pre-registered client {s.client_id} belongs to {bound}, not "
                f"{record.issuer}: not used here (credentials are bound to their authorization server; set "
                "the issuer in the server's settings, or forget the stored clients, if it changed)",
            )
        if s.client_metadata_url and meta.get("client_id_metadata_document_supported") is True:
            record.client = ClientInfo(s.client_metadata_url, "", "none", "cimd")
            self.step(
                "registration",
                "ok",
                f"Client ID Metadata Document: client_id {s.client_metadata_url}",
                source="cimd",
                client_id=s.client_metadata_url,
                auth_method="none",
            )
            return record.client
        endpoint = meta.get("registration_endpoint")
        if isinstance(endpoint, str) and endpoint:
            record.client = await self._register(endpoint, meta)
            return record.client
        raise AuthStop(
            "registration",
            "no way to obtain a client id: no pre-registered client for this "
            "authorization server, and it supports neither Client ID Metadata Documents nor Dynamic "
            "Client Registration",
            expected="enter a pre-registered client id in the server's settings",
        )

    async def _stored_binding(self) -> str | None:
        """The issuer an earlier session used the pre-registered client with (the settings named
        none): credentials stay bound to it across sessions, not only within one."""
        for stored in await self.store.records(self.server_key):
            client = stored.client
            if client is not None and client.source == "pre-registered" and client.client_id == self.settings.client_id:
                return stored.issuer
        return None

    @staticmethod
    def _method_for(meta: dict[str, Any], has_secret: bool) -> str:
        supported = meta.get("token_endpoint_auth_methods_supported")
        supported = supported if isinstance(supported, list) else ["client_secret_basic"]
        if not has_secret:
            return "none"
        for method in ("client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return "none" if "none" in supported else "client_secret_basic"

    async def _register(self, endpoint: str, meta: dict[str, Any]) -> ClientInfo:
        supported = meta.get("token_endpoint_auth_methods_supported")
        supported = supported if isinstance(supported, list) else ["client_secret_basic"]
        wanted = next((m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported), "none")
        redirect = self.authorizer.redirect_uri(self.settings.redirect_uri)
        body = {
            "client_name": self.settings.client_name,
            "redirect_uris": [redirect],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted,
            "application_type": "native" if _is_loopback(redirect) else "web",
        }
        ex = await self.recorder.send("registration", "POST", endpoint, json_body=body)
        doc = ex.json() if ex.ok else None
        if not isinstance(doc, dict) or not isinstance(doc.get("client_id"), str):
            raise AuthStop(
                "registration",
                f"Dynamic Client Registration failed ({ex.describe()}"
                f"{': ' + str(doc.get('error_description') or doc.get('error')) if isinstance(doc, dict) else ''})",
                expected="HTTP 201 with a client_id (RFC 7591 §3.2.1)",
            )
        secret = _text(doc, "client_secret")
        self._learn(
            secret,
            doc.get("registration_access_token") if isinstance(doc.get("registration_access_token"), str) else None,
        )
        method = doc.get("token_endpoint_auth_method")
        if method not in TOKEN_AUTH_METHODS:
            method = wanted if wanted != "none" or not secret or "none" in supported else self._method_for(meta, True)
        if method != "none" and not secret:
            method = "none"
        shown = {k: v for k, v in doc.items() if k not in ("client_secret", "registration_access_token")}
        self.step(
            "registration",
            "ok",
            f"registered as {doc['client_id']} ({method})",
            source="dcr",
            client_id=doc["client_id"],
            auth_method=method,
            url=endpoint,
        )
        return ClientInfo(doc["client_id"], secret, method, "dcr", shown)

    # authorization code flow -----------------------------------------------------------------------

    async def _authorize(self, record: AuthRecord, scopes: list[str]) -> None:
        client = await self._client(record)
        meta = record.metadata
        verifier, code_challenge = pkce_pair()
        state = self.state_prefix + secrets.token_urlsafe(24)
        redirect = self.authorizer.redirect_uri(self.settings.redirect_uri)
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect,
            "state": state,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
            "resource": record.resource,
        }
        if scopes:
            params["scope"] = " ".join(scopes)
        endpoint = meta["authorization_endpoint"]
        url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
        self._learn(verifier)
        self.step(
            "authorization-request",
            "info",
            f"authorization request to {endpoint}",
            url=endpoint,
            params={k: v for k, v in params.items() if k != "state"},
            issuer=record.issuer,
        )
        self.waiting_on_user = True
        try:
            answer = await self.authorizer.authorize(
                AuthorizationRequest(url, redirect, state, record.issuer, params), self.recorder
            )
        except AuthorizationAborted as exc:
            raise AuthStop("authorization-response", str(exc)) from None
        finally:
            self.waiting_on_user = False
        self._learn(answer.get("code"))
        self._check_response(answer, state, record)
        code = answer.get("code")
        if not code:
            raise AuthStop(
                "authorization-response",
                "the authorization response has no code",
                expected="code and state in the redirect (OAuth 2.1 §4.1.2)",
            )
        self.step(
            "authorization-response",
            "ok",
            "authorization response: code received, state and iss checked",
            iss=answer.get("iss"),
        )
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect,
            "code_verifier": verifier,
            "resource": record.resource,
        }
        tokens = await self._token_request(record, client, form, "token")
        tokens.requested_scope = " ".join(scopes)
        tokens.scope = tokens.scope or tokens.requested_scope
        await self._keep(record, tokens)

    def _check_response(self, answer: dict[str, str], state: str, record: AuthRecord) -> None:
        """RFC 9207 §2.4 as the spec's table has it, then state, then error — before any code is sent."""
        advertised = record.metadata.get("authorization_response_iss_parameter_supported") is True
        iss = answer.get("iss")
        if iss is not None and iss != record.issuer:
            raise AuthStop(
                "authorization-response",
                f"the response's iss {iss!r} is not the recorded issuer "
                f"{record.issuer!r}; the code is not used (possible mix-up attack)",
                refused=True,
                expected="iss identical to the issuer (simple string comparison, no normalization; RFC 9207)",
            )
        if iss is None and advertised:
            raise AuthStop(
                "authorization-response",
                "the authorization server advertises "
                "authorization_response_iss_parameter_supported but its response has no iss; rejected",
                refused=True,
                expected="an iss parameter in the authorization response (RFC 9207 §2.4)",
            )
        if answer.get("state") != state:
            raise AuthStop(
                "authorization-response",
                "the response's state does not match the request's; discarded",
                refused=True,
                expected="the state value sent in the authorization request",
            )
        if answer.get("error"):
            raise AuthStop(
                "authorization-response",
                f"the authorization server answered error={answer['error']}"
                + (f": {answer['error_description']}" if answer.get("error_description") else ""),
            )

    async def _token_request(self, record: AuthRecord, client: ClientInfo, form: dict[str, str], step: str) -> TokenSet:
        form = dict(form)
        headers = client_authentication(client, form)
        endpoint = record.metadata["token_endpoint"]
        ex = await self.recorder.send(step, "POST", endpoint, headers=headers, form=form)
        return self._tokens_from(ex, step)

    def _tokens_from(self, ex: Exchange, step: str) -> TokenSet:
        doc = ex.json()
        if not ex.ok or not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str):
            raise AuthStop(
                step,
                f"the token endpoint answered {ex.describe()}{_oauth_error(doc)}",
                expected="HTTP 200 with a JSON access_token and token_type (OAuth 2.1 §3.2.3)",
            )
        expires_in = doc.get("expires_in")
        tokens = TokenSet(
            access_token=doc["access_token"],
            token_type=str(doc.get("token_type") or "Bearer"),
            refresh_token=_text(doc, "refresh_token"),
            expires_at=time.time() + expires_in if isinstance(expires_in, (int, float)) else None,
            scope=_text(doc, "scope"),
            id_token=_text(doc, "id_token"),
        )
        self._learn(tokens.access_token, tokens.refresh_token, tokens.id_token)
        if tokens.token_type.lower() != "bearer":
            self.step(step, "info", f"token_type is {tokens.token_type!r}; it is sent as a Bearer token")
        self.step(
            step,
            "ok",
            f"token received ({tokens.token_type}"
            + (f", expires in {expires_in} s" if expires_in is not None else "")
            + (", with a refresh token" if tokens.refresh_token else "")
            + ")",
            scope=tokens.scope or None,
            expires_in=expires_in,
            refresh_token=bool(tokens.refresh_token),
        )
        return tokens

    async def _keep(self, record: AuthRecord, tokens: TokenSet) -> None:
        record.tokens = tokens
        self.record = record
        await self.store.put(self.server_key, record)

    async def _refresh(self, record: AuthRecord) -> bool:
        tokens = record.tokens
        if tokens is None or not tokens.refresh_token or record.client is None:
            return False
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": record.resource}
        try:
            new = await self._token_request(record, record.client, form, "refresh")
        except AuthStop as stop:
            self.step("refresh", "failed", f"refresh failed ({stop.reason}); a new authorization is needed")
            tokens.refresh_token = ""
            return False
        new.refresh_token = new.refresh_token or tokens.refresh_token
        new.requested_scope = tokens.requested_scope
        new.scope = new.scope or tokens.scope
        await self._keep(record, new)
        return True

    # the page's buttons ---------------------------------------------------------------------------

    async def refresh(self) -> bool:
        """Refresh now (the page's Refresh button)."""
        async with self._lock:
            if self.record is None:
                return False
            return await self._refresh(self.record)

    async def revoke(self) -> None:
        """Revoke at the AS (RFC 7009) when it offers an endpoint, and forget the tokens either
        way; a revocation the AS did not confirm is said to be one."""
        async with self._lock:
            record = self.record
            if record is None or record.tokens is None:
                self.step("revoke", "info", "no token to revoke")
                return
            endpoint = record.metadata.get("revocation_endpoint")
            refused: list[str] = []
            if isinstance(endpoint, str) and endpoint and record.client is not None:
                for token, hint in (
                    (record.tokens.refresh_token, "refresh_token"),
                    (record.tokens.access_token, "access_token"),
                ):
                    if token:
                        ex = await self._revoke_one(record, endpoint, token, hint)
                        if ex.status != 200:
                            refused.append(f"{hint}: {ex.describe()}{_oauth_error(ex.json())}")
            else:
                self.step(
                    "revoke", "info", "the authorization server has no revocation_endpoint: tokens forgotten here only"
                )
            record.tokens = None
            await self.store.put(self.server_key, record)
            if refused:
                self.step(
                    "revoke",
                    "failed",
                    f"the revocation endpoint did not confirm ({'; '.join(refused)}): the "
                    "tokens are forgotten here but may still be valid at the authorization server",
                    expected="HTTP 200 from the revocation endpoint, the client authenticated as at the token "
                    "endpoint (RFC 7009 §2.1, §2.2)",
                )
            else:
                self.step("revoke", "ok", "tokens revoked and forgotten")

    async def _revoke_one(self, record: AuthRecord, endpoint: str, token: str, hint: str) -> Exchange:
        client = record.client
        assert client is not None
        form = {"token": token, "token_type_hint": hint}
        headers = client_authentication(client, form)
        return await self.recorder.send("revoke", "POST", endpoint, headers=headers, form=form)


def _oauth_error(doc: Any) -> str:
    """`: error=… (description)` from an OAuth error response (RFC 6749 §5.2), or ""."""
    if not isinstance(doc, dict) or not doc.get("error"):
        return ""
    return f": error={doc['error']}" + (f" ({doc['error_description']})" if doc.get("error_description") else "")


def _text(doc: dict[str, Any], key: str) -> str:
    """A string member of a server's JSON document, or "" when absent or not a string."""
    value = doc.get(key)
    return value if isinstance(value, str) else ""
