"""An SSRF guard for HTTP targets: refuse addresses a policy forbids, when the socket opens.

The policy (which addresses are allowed) belongs to the application; this module is the
mechanism. The check runs inside httpx's connection step, after name resolution, on every
address the name resolves to, and the socket is then opened to the checked address itself
— so a name whose answer changes between saving and connecting (DNS rebinding) is still
caught, and nothing is ever sent to a refused address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Returns why an address is refused, or None when it is allowed.
AddressPolicy = Callable[[IPAddress], str | None]
Resolver = Callable[[str, int], Awaitable[list[str]]]


class AddressRefused(Exception):
    """The target's address is not allowed by the policy."""


async def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (deduplicated, in resolver order)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


@dataclass
class NetGuard:
    """A policy plus the resolver it checks names with (replaceable in tests)."""

    policy: AddressPolicy
    resolver: Resolver = field(default=resolve)

    async def check(self, host: str, port: int) -> list[str]:
        """The addresses to connect to; raises AddressRefused if any of them is refused."""
        literal = _literal(host)
        try:
            addresses = [str(literal)] if literal is not None else await self.resolver(host, port)
        except OSError as exc:
            raise AddressRefused(f"cannot resolve {host!r}: {exc}") from exc
        if not addresses:
            raise AddressRefused(f"{host!r} resolves to no address")
        for address in addresses:
            reason = self.policy(ipaddress.ip_address(address.split("%", 1)[0]))
            if reason:
                shown = host if literal is not None else f"{host} ({address})"
                raise AddressRefused(f"{shown} is {reason}; refused by the address guard")
        return addresses

    async def check_url(self, url: str) -> None:
        parts = urlsplit(url)
        if not parts.hostname:
            raise AddressRefused(f"{url!r} has no host")
        await self.check(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        """An httpx client whose every connection passes this guard."""
        transport = httpx.AsyncHTTPTransport()
        pool = transport._pool  # httpx exposes no network_backend option; the pool holds it
        pool._network_backend = _GuardedBackend(pool._network_backend, self)
        return httpx.AsyncClient(transport=transport, **kwargs)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Checks the target, then connects to the checked address (pinned: no second lookup)."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, guard: NetGuard) -> None:
        self.inner = inner
        self.guard = guard

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self.guard.check(host, port)
        except AddressRefused as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        last: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are refused by the address guard")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
