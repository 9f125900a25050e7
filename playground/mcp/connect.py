"""From a ServerConfig to a connected McpClient: pick the transport and the era.

Era per server: `legacy` (the default, as the official Inspector does), `modern`, or
`auto`, which follows the spec's detection — stdio probes `server/discover` (a modern
error or a result means modern; any other error or a timeout means legacy; the timeout does not
run out on a server that has written nothing yet, within stdio.STARTUP_GRACE), HTTP sends
a modern request and inspects a 4xx body, then falls back to `initialize`, then to the
deprecated HTTP+SSE transport. The verdict and its evidence are notes in the transcript.
"""

from __future__ import annotations

import asyncio
from typing import Any

from . import jsonrpc
from .auth import OAuth
from .client import LATEST_LEGACY, LATEST_MODERN, MODERN_VERSIONS, McpClient, RequestTimeout
from .config import ServerConfig
from .events import Tap
from .jsonrpc import JsonRpcError
from .netguard import AddressRefused, NetGuard
from .responder import Responder
from .transports.base import HttpStatusError, Transport, TransportError
from .transports.http_common import header_problems

# How long the stdio probe waits for an answer to `server/discover` before deciding "legacy".
STDIO_PROBE_TIMEOUT = 5.0


class ConnectError(Exception):
    """Could not connect or complete the handshake; the message says where it failed. `hint`:
    what the evidence suggests trying instead (`transport_hint`), if anything."""

    def __init__(self, message: str, hint: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.hint = hint


# What each transport's failure looks like on an endpoint of the other kind.
_LOOKS_LIKE = {"sse": "an SSE endpoint", "http": "a Streamable HTTP endpoint"}


def transport_hint(kind: str, transport: Transport, exc: BaseException | None) -> dict[str, Any] | None:
    """When a configured transport failed the way it fails on the other transport's endpoint,
    what to try and the evidence: Streamable HTTP POSTing to an SSE endpoint gets 405 (it takes
    only GET); HTTP+SSE GETting a Streamable HTTP endpoint gets 4xx for a GET without a session
    (the SDK's "Missing session ID", a JSON-RPC error body) or 405 (no GET stream at all)."""
    if not isinstance(exc, HttpStatusError) or exc.status in (401, 403, 404):
        return None
    body = (exc.body or "").strip()
    if kind == "http" and exc.status == 405:
        looks_like, method = "sse", "POST"
    elif (
        kind == "sse"
        and getattr(transport, "endpoint", None) is None
        and 400 <= exc.status < 500
        and (
            exc.status == 405
            or "session" in body.lower()
            or (isinstance(exc.json, dict) and isinstance(exc.json.get("error"), dict))
        )
    ):
        looks_like, method = "http", "GET"
    else:
        return None
    error = exc.json.get("error") if isinstance(exc.json, dict) else None
    detail = error.get("message") if isinstance(error, dict) and isinstance(error.get("message"), str) else body
    evidence = f"{method} answered HTTP {exc.status}" + (f' "{detail[:200]}"' if detail else "")
    return {
        "looks_like": looks_like,
        "suggest": "auto",
        "status": exc.status,
        "evidence": evidence,
        "text": f"This looks like {_LOOKS_LIKE[looks_like]} ({evidence}): try Auto, which tries Streamable "
        "HTTP, then HTTP+SSE.",
    }


def make_transport(
    config: ServerConfig, tap: Tap, kind: str | None = None, guard: NetGuard | None = None, auth: OAuth | None = None
) -> Transport:
    kind = kind or config.transport
    if kind == "stdio":
        from .transports.stdio import StdioTransport

        if not config.command:
            raise ConnectError("stdio server has no command")
        return StdioTransport(
            tap, config.command, list(config.args), dict(config.env), config.cwd, inherit_env=config.inherit_env
        )
    if not config.url:
        raise ConnectError(f"{kind} server has no URL")
    if kind == "sse":
        from .transports.sse import SseTransport

        return SseTransport(tap, config.url, dict(config.headers), timeout=config.timeout, guard=guard, auth=auth)
    from .transports.streamable_http import StreamableHttpTransport

    return StreamableHttpTransport(
        tap, config.url, dict(config.headers), timeout=config.timeout, guard=guard, auth=auth
    )


def _modern_error(exc: BaseException) -> JsonRpcError | None:
    """A recognized modern JSON-RPC error, from a response or inside an HTTP 4xx body."""
    if isinstance(exc, JsonRpcError):
        return exc if exc.code in jsonrpc.MODERN_ERROR_CODES else None
    if isinstance(exc, HttpStatusError) and isinstance(exc.json, dict) and isinstance(exc.json.get("error"), dict):
        err = JsonRpcError.from_error(exc.json["error"])
        return err if err.code in jsonrpc.MODERN_ERROR_CODES else None
    return None


def _supported_from(err: JsonRpcError) -> list[str]:
    data = err.data if isinstance(err.data, dict) else {}
    return [v for v in data.get("supported") or [] if isinstance(v, str)]


async def _discover_modern(client: McpClient, version: str) -> None:
    """`server/discover`, retrying once with a supported version on -32022."""
    try:
        await client.discover(version)
    except (JsonRpcError, HttpStatusError) as exc:
        err = _modern_error(exc)
        if err is None or err.code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
            raise
        supported = _supported_from(err)
        common = [v for v in MODERN_VERSIONS if v in supported]
        if not common:
            raise ConnectError(f"server supports {supported}; this client speaks {list(MODERN_VERSIONS)}") from exc
        client.tap.note("info", f"server does not support {version}; retrying with {common[0]}")
        await client.discover(common[0])


async def open_client(
    config: ServerConfig,
    *,
    tap: Tap | None = None,
    responder: Responder | None = None,
    protocol_version: str | None = None,
    client_info: dict[str, Any] | None = None,
    guard: NetGuard | None = None,
    auth: OAuth | None = None,
) -> McpClient:
    """Start the transport, decide the era, and complete the handshake or discovery.
    `auth` (HTTP only) authorizes with OAuth 2.1 when the server answers 401.

    `guard` (HTTP only) refuses target addresses its policy forbids: checked here first for a
    clear message, then again by every connection the transport opens (DNS may change).
    Raises ConnectError (with the transport closed) when no connection could be made."""
    protocol_version = protocol_version or config.protocol_version or None
    tap = tap or Tap()
    if guard is not None and config.transport != "stdio" and config.url:
        try:
            await guard.check_url(config.url)
        except AddressRefused as exc:
            tap.note("error", f"could not connect: {exc}", guard="address")
            raise ConnectError(str(exc)) from exc
    if config.transport != "stdio" and (problems := header_problems(config.headers)):
        # A server saved before header names were checked (issue 30): refused here, with its
        # reason, before a request (and its recorded facts) could carry the header.
        message = "the server's headers cannot be sent: " + "; ".join(problems)
        tap.note("error", f"could not connect: {message}")
        raise ConnectError(message)
    kinds = ["http", "sse"] if config.transport == "auto" else [config.transport]
    era = config.era
    last_error: BaseException | None = None
    for index, kind in enumerate(kinds):
        transport = make_transport(config, tap, kind, guard, auth)
        client = McpClient(
            transport,
            tap=tap,
            responder=responder,
            era="modern" if era == "modern" else "legacy",
            timeout=config.timeout,
            client_info=client_info,
        )
        try:
            await client.start()
            if era == "modern":
                await _discover_modern(client, protocol_version or LATEST_MODERN)
                tap.note("era", "modern: selected in the server's settings", era="modern", evidence="configured")
            elif era == "auto" and kind != "sse":
                await _auto(client, kind, protocol_version)
            else:
                await client.initialize(protocol_version or LATEST_LEGACY)
                tap.note(
                    "era",
                    "legacy: "
                    + (
                        "the HTTP+SSE transport is legacy only"
                        if kind == "sse" and era == "auto"
                        else "selected in the server's settings"
                    ),
                    era="legacy",
                    evidence="configured" if era == "legacy" else "transport",
                )
            return client
        except asyncio.CancelledError:
            await client.close()
            raise
        except (JsonRpcError, TransportError, RequestTimeout, ConnectError, OSError) as exc:
            last_error = exc
            await client.close()
            # 401/403 are authorization answers, not a sign of the older transport.
            if (
                index + 1 < len(kinds)
                and isinstance(exc, HttpStatusError)
                and 400 <= exc.status < 500
                and exc.status not in (401, 403)
            ):
                tap.note(
                    "fallback",
                    f"Streamable HTTP refused with HTTP {exc.status}; trying the HTTP+SSE transport",
                    status=exc.status,
                )
                continue
            break
        except Exception as exc:  # a protocol surprise: report it, leave nothing open
            last_error = exc
            await client.close()
            break
    message = _describe(last_error)
    tap.note("error", f"could not connect: {message}")
    hint = transport_hint(kind, transport, last_error) if config.transport in ("http", "sse") else None
    if hint is not None:
        tap.note("hint", hint["text"], **{k: v for k, v in hint.items() if k != "text"})
    raise ConnectError(message, hint) from last_error


def _describe(exc: BaseException | None) -> str:
    if isinstance(exc, JsonRpcError):
        return f"server answered with error {exc.code}: {exc.message}"
    return str(exc) or type(exc).__name__


async def _auto(client: McpClient, kind: str, protocol_version: str | None) -> None:
    """The spec's era detection for stdio and Streamable HTTP."""
    tap = client.tap
    version = protocol_version if protocol_version in MODERN_VERSIONS else LATEST_MODERN
    client.era = "modern"
    # stdio has no status code to go by: a legacy server may stay silent, so the probe is short.
    probe_timeout = STDIO_PROBE_TIMEOUT if kind == "stdio" else client.timeout
    try:
        await client.discover(version, timeout=probe_timeout, patient_start=kind == "stdio")
        tap.note("era", "modern: server/discover returned a result", era="modern", evidence="discover-result")
        return
    except (JsonRpcError, HttpStatusError) as exc:
        err = _modern_error(exc)
        if err is not None:
            tap.note(
                "era",
                f"modern: server/discover answered with modern error {err.code}",
                era="modern",
                evidence="modern-error",
                code=err.code,
            )
            await _discover_modern(client, version)
            return
        evidence = (
            f"HTTP {exc.status} without a modern error body"
            if isinstance(exc, HttpStatusError)
            else f"error {exc.code} ({exc.message})"
        )
    except RequestTimeout:
        evidence = f"no answer to server/discover within {probe_timeout:g} s"
    client.era = "legacy"
    client.protocol_version = None
    tap.note(
        "era", f"legacy: server/discover got {evidence}; falling back to initialize", era="legacy", evidence=evidence
    )
    legacy_version = protocol_version if protocol_version and protocol_version not in MODERN_VERSIONS else LATEST_LEGACY
    await client.initialize(legacy_version)
