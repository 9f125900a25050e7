"""`WWW-Authenticate` parsing (RFC 9110 §11.6.1 challenges, RFC 6750 §3 Bearer parameters,
RFC 9728 §5.1 `resource_metadata`).

A header may carry several challenges (`Bearer ..., DPoP ...`) and a response may carry
several headers; parameters are `name=token` or `name="quoted string"`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf"\s*({_TOKEN})\s*=\s*(\"(?:[^\"\\]|\\.)*\"|{_TOKEN}=*)\s*", re.S)
_SCHEME = re.compile(rf"\s*({_TOKEN})(?=\s|,|$)")
_TOKEN68 = re.compile(r"\s*([A-Za-z0-9\-._~+/]+=*)\s*(?=,|$)")


@dataclass
class Challenge:
    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def scopes(self) -> list[str]:
        return self.params.get("scope", "").split()

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None

    @property
    def error(self) -> str | None:
        return self.params.get("error") or None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def parse_challenges(header: str) -> list[Challenge]:
    """Every challenge in one header value; unparsable tails are ignored (best effort)."""
    out: list[Challenge] = []
    pos = 0
    while pos < len(header):
        while pos < len(header) and header[pos] in " ,\t":
            pos += 1
        m = _SCHEME.match(header, pos)
        if not m:
            break
        challenge = Challenge(m.group(1))
        out.append(challenge)
        pos = m.end()
        t68 = _TOKEN68.match(header, pos)
        if t68 and not _PARAM.match(header, pos):
            challenge.token68 = t68.group(1)
            pos = t68.end()
        while True:
            p = _PARAM.match(header, pos)
            if not p:
                break
            challenge.params.setdefault(p.group(1).lower(), _unquote(p.group(2)))
            pos = p.end()
            if pos < len(header) and header[pos] == ",":
                nxt = _PARAM.match(header, pos + 1)
                if nxt is None:
                    break  # a new challenge follows
                pos += 1
    return out


def bearer_challenge(headers: Iterable[str]) -> Challenge | None:
    """The Bearer challenge among all `WWW-Authenticate` values (None when there is none)."""
    for value in headers:
        for challenge in parse_challenges(value):
            if challenge.scheme.lower() == "bearer":
                return challenge
    return None
