"""Masking of secret values (header values, env values, tokens) in what the core reports."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

MASK = "••••"
CUT = "…"  # how a text cut to length says so

# Header names whose values are always secrets.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
    }
)
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
    return {
        k: (stored[k] if k in stored and k in shown and v == shown[k] and shown[k] != stored[k] else v)
        for k, v in posted.items()
    }


def mask_headers(
    headers: Mapping[str, str] | Iterable[tuple[str, str]], extra_secrets: Iterable[str] = ()
) -> dict[str, str]:
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


# How a secret may appear in text a server wrote. A JSON encoder may write any character as
# `\uXXXX` (hex in either case), `/` as `\/` (PHP), `<`, `>`, `&`, U+2028 and U+2029 as `\u…`
# (Go), every non-ASCII character as `\u…` (Python's default, PHP), a character beyond U+FFFF as a
# surrogate pair; and a tool's text is often JSON itself, encoded once more in the message
# (`\\u00e9`, `\\\"`). Listing every spelling is exponential in a secret's length: a secret is
# matched instead by a sequence of one choice per character among that character's encodings,
# encoded once or twice (JSON_DEPTH).
#
# No backtracking by construction: the encodings of one character are prefix-free (at a given
# place at most one of them matches), and each choice is written factored by its first character
# (`(?:a|\\(?:u00(?:6…)|…))`), so from each start the engine follows one path and never returns
# into a choice it left: linear in the text, times the secret's length at worst. The pattern's
# alternatives open with a literal character, so `re` skips the places that cannot begin a secret
# without entering the matcher. A literal backslash is no JSON encoding of a backslash (it would
# be a prefix of `\\`): text as given (not JSON: stderr, a parsed value) is matched by the
# value's own characters, one more spelling.
#
# What it costs (bench/redactor.py, CPU, a shared 2-core machine): a 1 MB frame with 7 secrets,
# 10 ms (the two `json.dumps` spellings: 5 ms); its row (raw text and parsed message) 17 ms
# (11 ms). 1 MB of near-matches of a secret, in any spelling: ~10 ms. The worst case is a secret
# that repeats itself (64 × "a", a run of backslashes) in a text made of its period: each place
# begins a match as long as the secret, 0.1-0.6 s a MB (a plain search: 1-20 ms).
JSON_DEPTH = 2
_SHORT = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


@dataclass(frozen=True, eq=False)
class _Lit:
    text: str  # one or more characters, as they are
    syntax: bool = False  # an escape's own characters (of `\u00e9`, `\/`): see `_again`


@dataclass(frozen=True, eq=False)
class _Seq:
    items: tuple[_Node, ...]


@dataclass(frozen=True, eq=False)
class _Alt:
    items: tuple[_Node, ...]


_Node = _Lit | _Seq | _Alt


def _seq(*items: _Node | None) -> _Node | None:
    kept = tuple(i for i in items if i is not None)
    return None if not kept else kept[0] if len(kept) == 1 else _Seq(kept)


def _hex(code: int) -> _Node:
    """`\\uXXXX` for one UTF-16 code unit, each hex letter in either case."""
    return _Seq(
        (
            _Lit("\\u", True),
            *(_Alt((_Lit(d, True), _Lit(d.upper(), True))) if d.isalpha() else _Lit(d, True) for d in f"{code:04x}"),
        )
    )


def _once(c: str) -> _Node:
    """The ways one JSON encoding may write `c`: as it is (anything but a backslash; lenient
    about the quotes and control characters an invalid frame may hold), its short escape,
    `\\uXXXX`, or a surrogate pair beyond U+FFFF."""
    forms: list[_Node] = [] if c == "\\" else [_Lit(c)]
    if c in _SHORT:
        forms.append(_Lit("\\" + _SHORT[c], True))
    code = ord(c)
    if code > 0xFFFF:
        forms.append(_Seq((_hex(0xD800 + ((code - 0x10000) >> 10)), _hex(0xDC00 + ((code - 0x10000) & 0x3FF)))))
    else:
        forms.append(_hex(code))
    return _Alt(tuple(forms))


def _again(node: _Node) -> _Node:
    """The texts of `node` encoded once more. The value's own characters in any encoding; of an
    escape's characters, the backslash, quote and slash in any, the letters and digits (`u`,
    hex, `n`) as they are: no encoder escapes those, and each of them in every form made the
    pattern ~10 times larger (~1.5 ms of `re.compile` a character)."""
    if isinstance(node, _Lit):
        return _seq(*(_once(c) if not node.syntax or not c.isalnum() else _Lit(c, True) for c in node.text)) or node
    items = tuple(_again(i) for i in node.items)
    return _Seq(items) if isinstance(node, _Seq) else _Alt(items)


def _branches(node: _Node) -> list[tuple[str, _Node | None]]:
    """`node` as (first character, what follows it) pairs."""
    if isinstance(node, _Lit):
        return [(node.text[0], _Lit(node.text[1:]) if len(node.text) > 1 else None)]
    if isinstance(node, _Seq):
        return [(c, _seq(rest, *node.items[1:])) for c, rest in _branches(node.items[0])]
    return [pair for item in node.items for pair in _branches(item)]


def _factored(node: _Node) -> list[str]:
    """The alternatives of a regex for `node`, one per first character."""
    groups: dict[str, list[_Node]] = {}
    for c, rest in _branches(node):
        # Within one character's encodings no text is a prefix of another (no rest is None
        # where another is not): a prefix-free choice.
        groups.setdefault(c, [])
        if rest is not None:
            groups[c].append(rest)
    return [
        re.escape(c) + (_render(rests[0] if len(rests) == 1 else _Alt(tuple(rests))) if rests else "")
        for c, rests in groups.items()
    ]


def _render(node: _Node) -> str:
    if isinstance(node, _Lit):
        return re.escape(node.text)
    if isinstance(node, _Seq):
        return "".join(_render(i) for i in node.items)
    alternatives = _factored(node)
    return alternatives[0] if len(alternatives) == 1 and len(alternatives[0]) == 1 else f"(?:{'|'.join(alternatives)})"


def _cut_part(node: _Node) -> str | None:
    """A regex for a non-empty proper prefix of a text of `node` that ends the text (`\\Z`)."""
    if isinstance(node, _Lit):
        return _cut_part(_Seq(tuple(_Lit(c) for c in node.text))) if len(node.text) > 1 else None
    if isinstance(node, _Alt):
        alternatives = [p for p in map(_cut_part, node.items) if p]
        return f"(?:{'|'.join(alternatives)})" if alternatives else None
    parts = [_cut_part(i) for i in node.items]
    cut = [p for p in (parts[0], _heads([_render(i) for i in node.items], parts, 1)) if p]
    return f"(?:{'|'.join(cut)})" if cut else None


def _heads(full: Sequence[str], parts: Sequence[str | None], whole: int) -> str | None:
    """A regex for a non-empty proper prefix of a sequence (`full`: each item's regex, `parts`:
    a part of each that ends the text) that ends the text, `whole` items at least in full.
    Flat, however long the sequence: once `\\Z` has matched, each item's choice that follows
    matches by its `\\Z` again (zero-width)."""
    if len(full) <= whole:
        return None
    out = list(full[:whole])
    for i in range(whole, len(full)):
        choices = [full[i]] if i < len(full) - 1 else []  # never the whole sequence
        if part := parts[i]:
            choices.append(part)
        alternatives = "|".join([*choices, r"\Z"])
        out.append(f"(?:{alternatives})")
    return "".join(out)


def _longest(node: _Node) -> int:
    if isinstance(node, _Lit):
        return len(node.text)
    sizes = [_longest(i) for i in node.items]
    return sum(sizes) if isinstance(node, _Seq) else max(sizes)


@dataclass(frozen=True)
class _Char:
    node: _Node
    regex: str  # any of its encodings
    part: str | None  # a part of one, ending the text
    longest: int


@lru_cache(maxsize=4096)
def _encoded(c: str, depth: int) -> _Char:
    """`c` encoded `depth` times (0: as it is)."""
    node = _Lit(c) if depth == 0 else _once(c) if depth == 1 else _again(_encoded(c, depth - 1).node)
    return _Char(node, _render(node), _cut_part(node), _longest(node))


class _Patterns:
    """The regexes for one set of values (longest first: a value containing another is masked
    whole), each compiled when first used: compiling costs ~0.1 ms a character of the values
    for the whole spellings, twice that for the heads, and a redactor is often made where only
    one of them is used, or neither (the OAuth flow makes one for each token it learns)."""

    def __init__(self, values: tuple[str, ...]) -> None:
        self.values = values
        # Each depth covers the shallower ones, but for a backslash: its encodings differ at each depth.
        self.spellings = [
            [_encoded(c, depth) for c in value]
            for value in values
            for depth in (range(JSON_DEPTH, -1, -1) if "\\" in value else [JSON_DEPTH])
        ]
        # How far from the end of a text a head may begin.
        self.window = max((sum(c.longest for c in chars) for chars in self.spellings), default=0)

    @cached_property
    def whole(self) -> re.Pattern[str]:
        """Every spelling of every value. Its alternatives open with a literal character (a
        spelling's first choice, factored, each followed by the rest): `re` then skips the
        places where no value begins without entering the matcher."""
        return re.compile(
            "|".join(
                opening + "".join(c.regex for c in chars[1:])
                for chars in self.spellings
                for opening in _factored(chars[0].node)
            )
        )

    @cached_property
    def plain(self) -> re.Pattern[str]:
        """The values as they are: all a text without a backslash can hold (every other spelling
        has one). Parsed values rarely have one, a frame's raw text mostly does: half the work
        on a typical frame, which is masked in both forms."""
        return re.compile("|".join(re.escape(v) for v in self.values))

    @cached_property
    def heads(self) -> re.Pattern[str] | None:
        """A cut head of some spelling (4 characters of it at least) that ends a text."""
        heads = [h for chars in self.spellings if (h := _heads([c.regex for c in chars], [c.part for c in chars], 4))]
        return re.compile("|".join(heads)) if heads else None


@lru_cache(maxsize=32)
def _patterns(values: tuple[str, ...]) -> _Patterns:
    """One per set of values (a share page makes its redactor on every request)."""
    return _Patterns(values)


class Redactor:
    """Replaces known secret values wherever they appear in text (servers may echo them back),
    in every spelling a JSON encoder may give them (above)."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        # Ignore trivially short values.
        plain = {v for v in values if v and len(v) >= 4}
        self.originals = sorted(plain)  # as given (another Redactor may be made of them)
        self._patterns = _patterns(tuple(sorted(plain, key=lambda v: (-len(v), v)))) if plain else None

    def __bool__(self) -> bool:
        return self._patterns is not None

    def text(self, s: str) -> str:
        if not self._patterns:
            return s
        return (self._patterns.whole if "\\" in s else self._patterns.plain).sub(MASK, s)

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
        if not self._patterns or mark not in text:
            return text
        pieces = text.split(mark)
        return mark.join([*(self._head_masked(p) for p in pieces[:-1]), pieces[-1]])

    def _head_masked(self, text: str) -> str:
        """`text` with its longest ending that begins some secret (its first 4 characters or
        more, in any spelling, a part of the next one's encoding maybe, never all of it) masked."""
        if self._patterns is None or (heads := self._patterns.heads) is None:
            return text
        found = heads.search(text, max(0, len(text) - self._patterns.window))
        return text if found is None else text[: found.start()] + MASK

    def obj(self, value):
        """Redact inside any JSON value (strings, keys, nested)."""
        if not self._patterns:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.obj(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.obj(v) for k, v in value.items()}
        return value


NO_SECRETS = Redactor()
