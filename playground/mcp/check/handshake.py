"""Version negotiation, in both eras, each on a connection of its own.

Legacy (2025-11-25, Lifecycle › Version Negotiation): "If the server supports the requested
protocol version, it MUST respond with the same version. Otherwise, the server MUST respond
with another protocol version it supports."
Modern (2026-07-28, Versioning › Protocol Version Negotiation): a server that does not implement
the requested version "MUST respond with an UnsupportedProtocolVersionError" (-32022) whose
`data.supported` lists the versions it does support; over HTTP (Streamable HTTP › Protocol
Version Header) "it MUST respond with `400 Bad Request` and an UnsupportedProtocolVersionError".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..client import LATEST_LEGACY, LEGACY_VERSIONS, MODERN_VERSIONS, McpClient
from ..config import TransportName
from ..connect import ConnectError
from ..jsonrpc import UNSUPPORTED_PROTOCOL_VERSION
from ..transports.base import TransportError
from .context import CheckContext
from .probe import Answer, ask
from .result import FAIL, PASS, SKIP, WARN, Status, clip

OLDER_LEGACY = LEGACY_VERSIONS[1]  # the revision before the latest
UNKNOWN_VERSION = "2099-12-31"  # a version no server can know
OLDER_FOR_MODERN = LATEST_LEGACY  # a modern request naming a handshake-era version
TRANSPORT_CONFIG: dict[str, TransportName] = {"stdio": "stdio", "streamable-http": "http", "sse": "sse"}


async def this_session(ctx: CheckContext) -> None:
    """The session the check runs in: its era and version (the handshake the other rows build on)."""
    seqs = ctx.trace.seqs(0, ("initialize", "notifications/initialized", "server/discover"), until=ctx.start)
    offered = ctx.config.protocol_version or "the latest"
    how = "initialize" if ctx.era == "legacy" else "server/discover"
    await ctx.row(
        "handshake: this session",
        PASS,
        f"{ctx.era} era over {ctx.client.transport.name}: {how} settled on {ctx.version or '?'} (offered {offered})",
        seqs,
    )


async def run(ctx: CheckContext) -> None:
    speaks_legacy = await _legacy(ctx, OLDER_LEGACY, older=True)
    await _legacy(ctx, UNKNOWN_VERSION, older=False, speaks=speaks_legacy)
    await _modern(ctx)


def _config(ctx: CheckContext, **changes: Any) -> Any:
    kind = TRANSPORT_CONFIG.get(ctx.client.transport.name, ctx.config.transport)
    return replace(ctx.config, transport=kind, timeout=ctx.options.timeout, **changes)


async def _close(client: McpClient) -> None:
    try:
        await client.close()
    except (TransportError, OSError):
        pass


async def _legacy(ctx: CheckContext, version: str, *, older: bool, speaks: bool | None = None) -> bool | None:
    """One `initialize` offering `version`; whether the server speaks the legacy era (None: unknown)."""
    name = f"handshake: legacy, {'older' if older else 'unknown newer'} version {version}"
    since = ctx.trace.mark()
    if speaks is False:
        await ctx.row(name, SKIP, "the server does not speak the legacy era (see the row above)")
        return False
    try:
        extra = await ctx.connect(_config(ctx, era="legacy", protocol_version=version))
    except ConnectError as exc:
        seqs = ctx.trace.seqs(since, ("initialize",))
        if ctx.era == "modern" and older:
            await ctx.row(name, SKIP, f"the server does not speak the legacy era (initialize: {clip(str(exc))})", seqs)
            return False
        await ctx.row(
            name,
            FAIL,
            f"initialize offering {version} failed: {clip(str(exc))}; a server MUST answer "
            "with the same version or another one it supports (Lifecycle, Version Negotiation)",
            seqs,
        )
        return None
    chosen = extra.protocol_version
    await _close(extra)
    seqs = ctx.trace.seqs(since, ("initialize",))
    status, reason = _judge_legacy(version, chosen, older)
    await ctx.row(name, status, reason, seqs)
    return True


def _judge_legacy(offered: str, chosen: Any, older: bool) -> tuple[Status, str]:
    if not isinstance(chosen, str) or not chosen:
        return FAIL, f"offered {offered}; the result has no protocolVersion"
    if older:
        if chosen == offered:
            return PASS, f"offered {offered}; the server answered {chosen}"
        if chosen in LEGACY_VERSIONS:
            return WARN, (
                f"offered {offered}; the server answered {chosen}: it does not support {offered} "
                f"(allowed), so clients of {offered} cannot use it"
            )
        return FAIL, f"offered {offered}; the server answered {clip(chosen, 60)!r}, not a protocol version"
    if chosen == offered:
        return FAIL, (
            f"offered {offered}, a version that does not exist; the server echoed it. It MUST answer "
            "with a version it supports (Lifecycle, Version Negotiation)"
        )
    if chosen in LEGACY_VERSIONS:
        return PASS, f"offered {offered}; the server answered {chosen}, a version it supports"
    return WARN, f"offered {offered}; the server answered {clip(chosen, 60)!r}, which this client does not know"


async def _modern(ctx: CheckContext) -> None:
    rows = (
        f"handshake: modern, older version {OLDER_FOR_MODERN}",
        f"handshake: modern, unknown newer version {UNKNOWN_VERSION}",
    )
    since = ctx.trace.mark()
    try:
        extra = await ctx.connect(_config(ctx, era="modern", protocol_version=""))
    except ConnectError as exc:
        seqs = ctx.trace.seqs(since, ("server/discover",))
        if ctx.era == "modern":
            for name in rows:
                await ctx.row(name, FAIL, f"server/discover on a new connection failed: {clip(str(exc))}", seqs)
        else:
            for name in rows:
                await ctx.row(
                    name, SKIP, f"the server does not speak the modern era (server/discover: {clip(str(exc))})", seqs
                )
        return
    try:
        settled = extra.protocol_version
        for name, version in zip(rows, (OLDER_FOR_MODERN, UNKNOWN_VERSION)):
            extra.protocol_version = version  # _meta and the MCP-Protocol-Version header alike
            try:
                answer = await ask(
                    extra,
                    ctx.trace,
                    "server/discover",
                    {},
                    timeout=ctx.options.timeout,
                    on_purpose=f"the server check: a server/discover naming {version}, not the "
                    "version this connection settled on",
                )
            finally:
                extra.protocol_version = settled
            status, reason = judge_modern(
                version, answer, older=version == OLDER_FOR_MODERN, http=extra.transport.name == "streamable-http"
            )
            await ctx.row(name, status, reason, answer.seqs)
    finally:
        await _close(extra)


def judge_modern(version: str, answer: Answer, *, older: bool, http: bool) -> tuple[Status, str]:
    """A `server/discover` naming `version` (a handshake-era one when `older`); `http`: over Streamable HTTP."""
    result, code, error, said = answer.result, answer.code, answer.error, answer.describe()
    if code == UNSUPPORTED_PROTOCOL_VERSION and error is not None:
        data = error.data if isinstance(error.data, dict) else {}
        supported = data.get("supported")
        if not isinstance(supported, list) or not supported or not all(isinstance(v, str) for v in supported):
            return FAIL, (
                f"asked for {version}: -32022 without data.supported, the list of versions a client "
                "needs to retry (UnsupportedProtocolVersionError)"
            )
        if http and answer.http_status != 400:
            status = f"HTTP {answer.http_status}" if answer.http_status else "a success status (2xx)"
            return FAIL, (
                f"asked for {version}: -32022 with {status}; over HTTP it MUST come with 400 Bad Request "
                "(Streamable HTTP, Protocol Version Header)"
            )
        listed = ", ".join(clip(v, 40) for v in supported[:10])
        if not any(v in MODERN_VERSIONS for v in supported):
            return WARN, f"asked for {version}: -32022, supported [{listed}] names no modern version this client knows"
        return PASS, f"asked for {version}: UnsupportedProtocolVersionError (-32022), supported [{listed}]"
    if code is None and isinstance(result, dict):
        if older:
            return WARN, (
                f"asked for {version} (a handshake-era version) in _meta: the server answered "
                "server/discover as if it served it; -32022 would tell the client what to use"
            )
        return FAIL, (
            f"asked for {version}, a version that does not exist: the server answered as if it "
            "implemented it. It MUST answer UnsupportedProtocolVersionError (-32022) "
            "(Versioning, Protocol Version Negotiation)"
        )
    if older and code is not None:
        # No modern revision is older than 2026-07-28: a request naming a handshake-era version may
        # be served as legacy traffic by a dual-era server (over HTTP the version header says so).
        return WARN, (
            f"asked for {version} (a handshake-era version) in _meta: {said}; -32022 listing the "
            "supported versions would tell such a client what to use"
        )
    return (
        FAIL,
        f"asked for {version}: {said}; expected UnsupportedProtocolVersionError (-32022) listing the supported versions",
    )
