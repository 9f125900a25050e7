"""A person's search words, made safe for each database, and the excerpt that shows them.

What a person types is never database syntax: it is cut into terms — a bare word, or a
"quoted phrase" — and each term into words (runs of letters and digits, as both databases'
tokenizers cut text: `get_weather` is the words get and weather). A term matches where its
words appear one after the other; a bare term's last word also matches as a prefix
(`initial` finds `initialize`). Every term must match. The words are then written in each
database's own syntax, quoted, so no input can make a syntax error (FTS5 MATCH, tsquery).

Both indexes keep each word behind its owner's id (`owned`: "12x" + "weather"), and a query asks
for the searching person's words only: a lookup — a prefix's among them — reaches that person's
entries and never another user's (filtering by owner after the match walked every other user's
matches: 50,000 of alice's events holding a word made bob's search for it 0.7 -> 15-31 ms on
SQLite, 1.3 -> 47-49 ms on PostgreSQL, bench/README.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from django.utils.html import escape as esc
from django.utils.safestring import SafeString

MAX_QUERY = 200  # characters of a query considered
MAX_TERMS = 12
EXCERPT_CHARS = 220

_WORD = re.compile(r"[^\W_]+")
_PART = re.compile(r'"([^"]*)"?|([^\s"]+)')


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]
    prefix: bool  # the last word matches as a prefix


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[Term, ...]

    def __bool__(self) -> bool:
        return bool(self.terms)

    def fts5(self, owner_id: int | None) -> str:
        """An FTS5 MATCH expression of the owner's words: each term a quoted phrase
        ("12xget 12xweather"*), ANDed."""
        return " AND ".join(
            '"' + " ".join(owned(owner_id, word) for word in t.words) + '"' + ("*" if t.prefix else "")
            for t in self.terms
        )

    def tsquery(self, owner_id: int | None) -> str:
        """A `tsquery` literal of the owner's words: each word quoted, followed by <->, the terms
        ANDed. Cast, not parsed (`to_tsquery`): the lexemes are exactly those `tsvector` indexed."""
        out = []
        for term in self.terms:
            words = [f"'{owned(owner_id, word)}'" for word in term.words]
            if term.prefix:
                words[-1] += ":*"
            out.append("(" + " <-> ".join(words) + ")")
        return " & ".join(out)

    @cached_property
    def _highlighter(self) -> re.Pattern[str]:
        """Where the words occur in a text: at a word's start; whole words unless a prefix."""
        alternatives: dict[str, str] = {}
        for term in self.terms:
            for i, word in enumerate(term.words):
                prefix = term.prefix and i == len(term.words) - 1
                if alternatives.get(word) != "":
                    alternatives[word] = "" if prefix else r"(?![^\W_])"
        ordered = sorted(alternatives, key=len, reverse=True)
        return re.compile(
            r"(?<![^\W_])(?:" + "|".join(re.escape(w) + alternatives[w] for w in ordered) + ")", re.IGNORECASE
        )

    def excerpt(self, text: str, chars: int = EXCERPT_CHARS) -> SafeString:
        """`chars` characters of `text` around its first match, escaped, each match in <mark>."""
        text = " ".join(text.split())
        matches = list(self._highlighter.finditer(text)) if self.terms else []
        start = 0
        if matches and matches[0].start() > chars // 4:
            start = matches[0].start() - chars // 4
            space = text.find(" ", start, matches[0].start())
            start = space + 1 if space != -1 else start
        end = min(len(text), start + chars)
        out = ["…" if start else ""]
        pos = start
        for match in matches:
            if match.start() < start:
                continue
            if match.end() > end:
                break
            out += [esc(text[pos : match.start()]), "<mark>", esc(match.group()), "</mark>"]
            pos = match.end()
        out.append(esc(text[pos:end]))
        if end < len(text):
            out.append("…")
        return SafeString("".join(out))


def words(text: str) -> list[str]:
    """The words of a text, as the index and the query cut it."""
    return _WORD.findall(text)


def owned(owner_id: int | None, word: str) -> str:
    """A word as the index keeps it: behind its owner's id ("12x" + word; nobody's sessions: 0).
    The id's digits end at the "x", so one owner's words are never a prefix of another's.
    Migration 0011 writes the same (its own copy: a migration does not change with the code)."""
    return f"{owner_id or 0}x{word}"


def index_words(owner_id: int | None, text: str) -> list[str]:
    """The words of an event's searchable text as the index keeps them: lower case (as
    `parse_query` makes a query's), each behind its owner (`owned`)."""
    return [owned(owner_id, word.lower()) for word in _WORD.findall(text)]


def parse_query(text: str) -> Query:
    """Terms of a person's query (at most MAX_TERMS, from its first MAX_QUERY characters)."""
    terms: list[Term] = []
    for match in _PART.finditer(text[:MAX_QUERY]):
        phrase, bare = match.group(1), match.group(2)
        words = tuple(word.lower() for word in _WORD.findall(phrase if phrase is not None else bare))
        term = Term(words, prefix=phrase is None)
        if words and term not in terms:
            terms.append(term)
    return Query(text=text[:MAX_QUERY], terms=tuple(terms[:MAX_TERMS]))
