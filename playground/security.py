"""The app's security policy, from settings: which HTTP targets and stdio commands are allowed,
and whether the bind address is worth a warning.

A local tool (the default) reaches loopback servers and may start any command the logged-in
user types; a hosted one turns stdio off or limits it to an allow-list, and may forbid
loopback. Private, link-local and cloud-metadata addresses are refused unless
PLAYGROUND_HTTP_ALLOW_PRIVATE is on. The same checks run when a server is saved (a clear
form error) and when a session connects (DNS may have changed; the settings may have too).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from playground.mcp.config import ServerConfig
from playground.mcp.netguard import IPAddress, NetGuard

# Cloud metadata services (AWS/GCP/Azure/OpenStack, AWS ECS, AWS IPv6, Alibaba, Oracle).
METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "192.0.0.192")
)
SHARED_NAT = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not global, not "private" to Python
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # well-known NAT64 prefix: the last 32 bits are an IPv4 address
# IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291 §2.5.5.1): Python calls most of it global,
# and some stacks route it to the IPv4 address; refused whatever the settings (:: and ::1 aside).
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


class PolicyError(Exception):
    """A server's settings are not allowed here; the message says which setting to change."""


def address_refusal(ip: IPAddress) -> str | None:
    """Why the settings refuse `ip` as an HTTP target, or None if they allow it."""
    if isinstance(ip, ipaddress.IPv6Address) and ip in IPV4_COMPATIBLE and int(ip) > 1:
        return f"an IPv4-compatible IPv6 address (::{ipaddress.IPv4Address(int(ip))}, a deprecated form); refused"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    elif isinstance(ip, ipaddress.IPv6Address) and ip in NAT64:  # reaches that IPv4 address through a gateway
        ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.is_loopback or ip.is_unspecified:
        if settings.PLAYGROUND_HTTP_ALLOW_LOOPBACK:
            return None
        return "a loopback address (PLAYGROUND_HTTP_ALLOW_LOOPBACK is off)"
    if settings.PLAYGROUND_HTTP_ALLOW_PRIVATE:
        return None
    hint = " (set PLAYGROUND_HTTP_ALLOW_PRIVATE=true to allow)"
    if ip in METADATA:
        return "a cloud metadata address" + hint
    if ip.is_link_local:
        return "a link-local address" + hint
    if ip.is_multicast:
        return "a multicast address" + hint
    if ip.is_private or ip in SHARED_NAT or not ip.is_global:
        return "a private or reserved address" + hint
    return None


def net_guard() -> NetGuard:
    """The guard the worker hands to the client core for every HTTP connection."""
    return NetGuard(address_refusal)


def check_url(url: str) -> None:
    """At save time: refuse a URL whose host is (or resolves to) a refused address.

    A name that does not resolve now is accepted (it may later); connecting checks again."""
    host = urlsplit(url).hostname or ""
    try:
        addresses = [str(ipaddress.ip_address(host.split("%", 1)[0]))]
    except ValueError:
        try:
            addresses = list(
                dict.fromkeys(str(i[4][0]) for i in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM))
            )
        except (OSError, UnicodeError):
            return
    for address in addresses:
        reason = address_refusal(ipaddress.ip_address(address.split("%", 1)[0]))
        if reason:
            shown = host if address == host else f"{host} ({address})"
            raise PolicyError(f"{shown} is {reason}.")


def check_command(command: str) -> None:
    """Refuse a stdio command when stdio is off, or not on the allow-list.

    An entry matches the command exactly: `npx` allows the `npx` found on PATH, not
    `/tmp/x/npx`; list absolute paths to allow those."""
    if not settings.PLAYGROUND_ALLOW_STDIO:
        raise PolicyError("Starting stdio servers is turned off here (PLAYGROUND_ALLOW_STDIO=false).")
    allowed = settings.PLAYGROUND_STDIO_COMMANDS
    if allowed and command not in allowed:
        raise PolicyError(
            f"The command {command!r} is not allowed here; allowed: {', '.join(allowed)} (PLAYGROUND_STDIO_COMMANDS)."
        )


# Variables that change what a program runs or loads: with an allow-list of commands, a server's
# settings may not set them (PATH would pick another `npx`, LD_PRELOAD or NODE_OPTIONS load code).
RUN_CHANGING = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "CLASSPATH",
        "GCONV_PATH",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "GIT_SSH_COMMAND",
        "NPM_CONFIG_NODE_OPTIONS",
        "UV_PYTHON",
        "PYENV_VERSION",
        "HOME",
    }
)
RUN_CHANGING_PREFIXES = ("LD_", "DYLD_", "PYTHON", "BASH_FUNC_", "NPM_CONFIG_", "UV_", "DENO_")


def check_stdio(command: str, env: dict[str, str] | None = None, cwd: str | None = None) -> None:
    """A stdio server's settings, wherever they come from (form, import, admin, connect): the
    command (check_command) and, while an allow-list is set, nothing that would run another
    program in its place: no variable that changes what runs, no working directory holding a
    program of the command's name (a PATH with a relative entry would pick it)."""
    check_command(command)
    if not settings.PLAYGROUND_STDIO_COMMANDS:
        return
    refused = sorted(
        name for name in env or {} if name.upper() in RUN_CHANGING or name.upper().startswith(RUN_CHANGING_PREFIXES)
    )
    if refused:
        raise PolicyError(
            f"With an allow-list of commands (PLAYGROUND_STDIO_COMMANDS), a server may not set "
            f"{', '.join(refused)}: it would change which program runs."
        )
    if cwd and os.sep not in command and os.path.exists(os.path.join(cwd, command)):
        raise PolicyError(
            f"The working directory {cwd!r} holds a file named {command!r}: with an allow-list of "
            "commands, it may not (it could run instead of the allowed one)."
        )


def check_stdio_user(user: Any) -> None:
    """PLAYGROUND_STDIO_USERS=staff: only staff may save or start stdio servers."""
    if settings.PLAYGROUND_STDIO_USERS == "staff" and not (user is not None and getattr(user, "is_staff", False)):
        raise PolicyError("Only staff may save or start stdio servers here (PLAYGROUND_STDIO_USERS=staff).")


def check_config(config: ServerConfig) -> None:
    """At connect time, before anything starts (the HTTP address check is the NetGuard's)."""
    if config.transport == "stdio":
        check_stdio(config.command, config.env, config.cwd)


def is_loopback_bind(host: str) -> bool:
    host = host.strip().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_warning(host: str | None = None) -> str | None:
    """The warning to print when the app listens beyond this machine."""
    host = settings.PLAYGROUND_BIND if host is None else host
    if is_loopback_bind(host):
        return None
    return (
        f"MCP Playground listens on {host}, not on loopback: anyone who can reach it and log in can start "
        "processes on this machine (stdio servers). Set PLAYGROUND_ALLOWED_HOSTS, use strong passwords, and "
        "consider PLAYGROUND_ALLOW_STDIO=false or PLAYGROUND_STDIO_COMMANDS."
    )


class WebsocketOriginValidator:
    """ASGI middleware for websockets: the Host must be allowed (ALLOWED_HOSTS, the rule Django
    applies to every HTTP request), and the Origin must be exactly the app's own — the scheme,
    host and port the page was served from (as the Host says) — or one of
    PLAYGROUND_TRUSTED_ORIGINS. A page on another local port (a dev server, a page a server's
    URL elicitation opens) is another origin and gets nothing; so does a missing or `null` Origin.
    Comparing host names only (Channels' AllowedHostsOriginValidator) let every port in."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not websocket_allowed(scope):
            await receive()  # the websocket.connect message
            await send({"type": "websocket.close", "code": 4403})
            return None
        return await self.app(scope, receive, send)


def websocket_allowed(scope: dict[str, Any]) -> bool:
    from django.http.request import split_domain_port, validate_host

    headers: dict[bytes, bytes] = {}
    for name, value in scope.get("headers") or []:
        headers.setdefault(name.lower(), value)  # the first of a repeated header
    host = headers.get(b"host", b"").decode("latin-1").strip().lower()
    domain, _port = split_domain_port(host)
    if not (domain and validate_host(domain, settings.ALLOWED_HOSTS)):
        return False
    origin = headers.get(b"origin", b"").decode("latin-1").strip().lower().rstrip("/")
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    own = {f"{scheme}://{host}"}
    default_port = ":443" if scheme == "https" else ":80"
    if host.endswith(default_port):
        own.add(f"{scheme}://{host[: -len(default_port)]}")
    trusted = {o.strip().lower().rstrip("/") for o in settings.PLAYGROUND_TRUSTED_ORIGINS}
    return bool(origin) and origin != "null" and (origin in own or origin in trusted)
