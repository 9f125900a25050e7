"""The Content-Security-Policy an app's document gets, and the permissions its frame may have.

The sandbox origin sends it as the header of the proxy page (`core/sandbox.py`): the app's
document (the proxy's `srcdoc` frame) inherits it, so the app cannot loosen it with a `<meta>` of
its own. Built from the resource's `_meta.ui.csp`, as the spec says: no network unless
`connectDomains` names it (`connect-src 'none'`), nothing loaded from elsewhere unless
`resourceDomains` names it, no nested frame unless `frameDomains` does, never a plugin
(`object-src 'none'`), framed only by the playground's page (`frame-ancestors`).

A domain is a server's text put into a header: only `scheme://host[:port]` forms (a `*.` first
label allowed) pass; anything else (a `;`, a quote, a keyword such as 'unsafe-eval') is left out
and said (`rejected`).
"""

from __future__ import annotations

import re
from typing import Any

MAX_DOMAINS = 32  # of each list: a header is not the place for a server's thousand origins
_SOURCE = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:(\d{1,5}|\*))?/?$")
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+$")

# `_meta.ui.permissions` member -> the Permissions Policy feature of the frame's `allow`.
PERMISSIONS = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}


def _sources(csp: dict[str, Any], key: str, rejected: list[str]) -> list[str]:
    raw = csp.get(key)
    if not isinstance(raw, list):
        return []
    out: list[str] = []
    for value in raw[:MAX_DOMAINS]:
        if isinstance(value, str) and _SOURCE.match(value):
            out.append(value.rstrip("/"))
        else:
            rejected.append(f"{key}: {str(value)[:80]!r}")
    if len(raw) > MAX_DOMAINS:
        rejected.append(f"{key}: {len(raw) - MAX_DOMAINS} more, beyond {MAX_DOMAINS}")
    return out


def app_policy(csp: Any, frame_ancestor: str, rejected: list[str] | None = None) -> str:
    """The policy for an app whose resource declares `csp` (`_meta.ui.csp`, untrusted), framed by
    the page at `frame_ancestor` (an origin). What was left out of `csp` is added to `rejected`."""
    csp = csp if isinstance(csp, dict) else {}
    rejected = rejected if rejected is not None else []
    resources = " ".join(_sources(csp, "resourceDomains", rejected))
    connect = " ".join(_sources(csp, "connectDomains", rejected)) or "'none'"
    frames = " ".join(_sources(csp, "frameDomains", rejected)) or "'none'"
    base = " ".join(_sources(csp, "baseUriDomains", rejected)) or "'self'"
    extra = f" {resources}" if resources else ""
    ancestor = frame_ancestor if _ORIGIN.match(frame_ancestor) else "'none'"
    return (
        "default-src 'none'; "
        f"script-src 'self' 'unsafe-inline'{extra}; style-src 'self' 'unsafe-inline'{extra}; "
        f"img-src 'self' data: blob:{extra}; font-src 'self' data:{extra}; media-src 'self' data: blob:{extra}; "
        f"connect-src {connect}; frame-src {frames}; base-uri {base}; "
        f"object-src 'none'; form-action 'none'; frame-ancestors {ancestor}"
    )


def requested_permissions(permissions: Any) -> list[str]:
    """The Permissions Policy features a resource asks for (`_meta.ui.permissions`): what the page
    offers the person to allow, each left out of the frame's `allow` until they do."""
    permissions = permissions if isinstance(permissions, dict) else {}
    return [feature for key, feature in PERMISSIONS.items() if key in permissions]
