"""The MCP Apps sandbox's origin, computed in one place and in the form a browser names an origin
(`MessageEvent.origin`, `location.origin`): scheme and host in lower case, no default port. The
page compares it with each message's origin as is, the page's policy frames it, and the sandbox
wrapper (core/sandbox.py) recognises its requests by it."""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def browser_origin(scheme: str, netloc: str) -> str:
    """`scheme://netloc` as a browser serialises the origin."""
    scheme = scheme.lower()
    try:
        split = urlsplit(f"//{netloc}")
        host, port = split.hostname or "", split.port
    except ValueError:  # (a port that is not one: keep the text, lowercased)
        return f"{scheme}://{netloc.lower()}"
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != DEFAULT_PORTS.get(scheme) else "")


def sandbox_origin(setting: str, scheme: str, page_host: str) -> str | None:
    """The sandbox's origin for a page served at `scheme://page_host`, from
    `PLAYGROUND_APPS_SANDBOX` (`setting`): a host name (the page's scheme and port on that name)
    or a whole origin. None: apps are off."""
    setting = setting.strip()
    if not setting:
        return None
    if "://" in setting:
        split = urlsplit(setting.rstrip("/"))
        return browser_origin(split.scheme, split.netloc)
    try:
        port = urlsplit(f"//{page_host}").port
    except ValueError:
        port = None
    return browser_origin(scheme, setting + (f":{port}" if port is not None else ""))
