"""Masking of secret values (header values, env values, tokens) in what the core reports."""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

MASK = "••••"
CUT = "…"           # how a text cut to length says so

# Header names whose values are always secrets.
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
})
_SECRET_NAME = re.compile(r"(auth|token|secret|key|password|passwd|credential|session-token|cookie)", re.I)
# Names the pattern catches that carry no credential: an id, and the challenges a debugger of
# authorization must show (`WWW-Authenticate: Bearer scope=…, resource_metadata=…`).
SHOWN_HEADERS = frozenset({"mcp-session-id", "www-authenticate", "proxy-authenticate"})


def is_secret_name(name: str) -> bool:
    """Whether a header or environment variable name suggests its value is a secret."""
    return name.lower() in SECRET_HEADERS or bool(_SECRET_NAME.search(name))


def mask_value(value: str) -> str:
    """Keep an auth scheme word (`Bearer`, `Basic`) so the reader still sees what kind it was."""
    scheme, sep, rest = value.partition(" ")
    if sep and rest and scheme.isalpha() and len(scheme) <= 12:
        return f"{scheme} {MASK}"
    return MASK


def mask_env(env: Mapping[str, str]) -> dict[str, str]:
    """Environment values shown on pages and in forms: secret-looking names (TOKEN, API_KEY, …) masked."""
    return {k: (mask_value(v) if v and is_secret_name(k) else v) for k, v in env.items()}


def unmask(posted: Mapping[str, str], stored: Mapping[str, str], shown: Mapping[str, str]) -> dict[str, str]:
    """A form's values, where a value posted back exactly as it was shown masked keeps the stored
    one (the form never prints a secret, and saving it unchanged must not replace it by the mask)."""
    return {k: (stored[k] if k in stored and k in shown and v == shown[k] and shown[k] != stored[k] else v)
            for k, v in posted.items()}


def mask_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]],
                 extra_secrets: Iterable[str] = ()) -> dict[str, str]:
    """Headers as a dict with secret values masked; SHOWN_HEADERS are shown (no credential in them)."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    secrets = {name.lower() for name in extra_secrets}
    out: dict[str, str] = {}
    for name, value in items:
        lname = name.lower()
        if lname in SECRET_HEADERS or lname in secrets or (_SECRET_NAME.search(lname) and lname not in SHOWN_HEADERS):
            out[name] = mask_value(value)
        else:
            out[name] = value
    return out


class Redactor:
    """Replaces known secret values wherever they appear in text (servers may echo them back)."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        # Longest first so a secret containing another is replaced whole; ignore trivially short values.
        # Raw frames hold JSON text: a value with quotes, backslashes or non-ASCII appears escaped there.
        plain = {v for v in values if v and len(v) >= 4}
        escaped = {json.dumps(v, ensure_ascii=a)[1:-1] for v in plain for a in (True, False)}
        self.originals = sorted(plain)          # as given (another Redactor may be made of them)
        self.values = sorted(plain | escaped, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in self.values)) if self.values else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, s: str) -> str:
        return self._pattern.sub(MASK, s) if self._pattern else s

    # A secret cut in two is no longer the value `text` masks: where a server's text is cut to
    # length, the head of a secret left at the cut is masked there (whoever reads it later).

    def cut(self, text: str, n: int, mark: str = "") -> str:
        """`text` cut to `n` characters, then `mark`; a secret's head (4 characters or more) left
        at the end is masked. Whole values are left to whoever shows the text (the owner sees
        the server's header values; a share page masks them)."""
        if len(text) <= n:
            return text
        return self._head_masked(text[:n]) + mark

    def at_cuts(self, text: str, mark: str = CUT) -> str:
        """`text` as cut by a helper that had no secrets at hand (a check's `clip`, the schema
        lint's message cap), each cut marked by `mark`: a secret's head right before a mark is
        masked. For short texts (a reason, a message): each mark is looked at."""
        if not self._pattern or mark not in text:
            return text
        pieces = text.split(mark)
        return mark.join([*(self._head_masked(p) for p in pieces[:-1]), pieces[-1]])

    def _head_masked(self, text: str) -> str:
        """`text` with its longest ending that begins some secret (but is not all of it) masked."""
        start = len(text)
        for value in self.values:
            window = text[-(len(value) - 1):]
            begin = len(text) - len(window)
            i = window.find(value[:4])
            while i != -1 and begin + i < start:
                if value.startswith(window[i:]):
                    start = begin + i
                    break
                i = window.find(value[:4], i + 1)
        return text if start == len(text) else text[:start] + MASK

    def obj(self, value):
        """Redact inside any JSON value (strings, keys, nested)."""
        if not self._pattern:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.obj(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.obj(v) for k, v in value.items()}
        return value


NO_SECRETS = Redactor()
