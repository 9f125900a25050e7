"""The Content-Security-Policy an app's document gets, and the permissions its frame may have.

The sandbox origin sends it as the header of the proxy page (`core/sandbox.py`): the app's
document (the proxy's `srcdoc` frame) inherits it, so the app cannot loosen it with a `<meta>` of
its own. Built from the resource's `_meta.ui.csp`, as the spec says: no network unless
`connectDomains` names it (`connect-src 'none'`), nothing loaded from elsewhere unless
`resourceDomains` names it, no nested frame unless `frameDomains` does, never a plugin
(`object-src 'none'`), framed only by the playground's page (`frame-ancestors`).

A domain is a server's text put into a header: only `scheme://host[:port]` forms (a `*.` first
label allowed) pass; anything else (a `;`, a quote, a keyword such as 'unsafe-eval') is left out
and said (`rejected`). The whole is bounded (`app_csp`: 32 domains a list, the `app policy`
budget's characters): the page is given that reduced csp, never the server's own.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from playground.budget import APP_POLICY, Limits, OverBudget

MAX_DOMAINS = 32  # of each list: a header is not the place for a server's thousand origins
MAX_SOURCE = 300  # characters of one domain (a scheme, a host name of at most 253, a port)
LISTS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")  # the spec's `McpUiResourceCsp`
_SOURCE = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:(\d{1,5}|\*))?/?$")
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+$")

# `_meta.ui.permissions` member -> the Permissions Policy feature of the frame's `allow`.
PERMISSIONS = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}


def _shown(value: Any) -> str:
    """A rejected entry as the person reads it: a string's start, or only its type."""
    if isinstance(value, str):
        return repr(value[:80]) + ("…" if len(value) > 80 else "")
    return f"a {type(value).__name__}"


def app_csp(csp: Any, rejected: list[str] | None = None, limits: Limits = APP_POLICY) -> dict[str, list[str]]:
    """A resource's `_meta.ui.csp` (untrusted, any size) reduced to what may reach the page and a
    header: the spec's four lists, each of `scheme://host[:port]` sources only, at most
    MAX_DOMAINS of them, within `limits` (`budget.APP_POLICY`). What was left out is said in
    `rejected`, in the person's words."""
    rejected = rejected if rejected is not None else []
    csp = csp if isinstance(csp, dict) else {}
    others = [k for k in itertools.islice(csp, MAX_DOMAINS + len(LISTS)) if k not in LISTS]
    if others:
        more = len(csp) - sum(1 for k in LISTS if k in csp) - len(others)
        names = ", ".join(_shown(k) for k in others[:MAX_DOMAINS])
        rejected.append(f"keys the spec does not name: {names}" + (f" and {more:,} more" if more > 0 else ""))
    budget = limits.budget()
    out: dict[str, list[str]] = {}
    for key in LISTS:
        raw = csp.get(key)
        if raw is None:
            continue
        if not isinstance(raw, list):
            rejected.append(f"{key}: {_shown(raw)}, not a list")
            continue
        kept: list[str] = []
        done = 0
        try:
            for value in raw[:MAX_DOMAINS]:
                budget.spend()
                if isinstance(value, str) and len(value) <= MAX_SOURCE and _SOURCE.match(value):
                    budget.emit(len(value) + 1)
                    kept.append(value.rstrip("/"))
                else:
                    rejected.append(f"{key}: {_shown(value)}")
                done += 1
        except OverBudget as exc:
            left = min(len(raw), MAX_DOMAINS) - done
            rejected.append(f"{key}: {left:,} more left out, {exc.reason}")
        if len(raw) > MAX_DOMAINS:
            rejected.append(f"{key}: {len(raw) - MAX_DOMAINS:,} more, beyond {MAX_DOMAINS}")
        if kept:
            out[key] = kept
    return out


def app_policy(csp: Any, frame_ancestor: str, rejected: list[str] | None = None) -> str:
    """The policy for an app whose resource declares `csp` (`_meta.ui.csp`, untrusted), framed by
    the page at `frame_ancestor` (an origin). What was left out of `csp` is added to `rejected`."""
    lists = app_csp(csp, rejected)
    resources = " ".join(lists.get("resourceDomains", []))
    connect = " ".join(lists.get("connectDomains", [])) or "'none'"
    frames = " ".join(lists.get("frameDomains", [])) or "'none'"
    base = " ".join(lists.get("baseUriDomains", [])) or "'self'"
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
