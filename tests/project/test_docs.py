"""The documentation, checked: README.md is a front page (at most 200 lines), and every link in
it and in docs/ leads to a file of this repository — or to a heading that exists in one — and
nothing it names lies outside the repository (a design note beside the checkout, `../shared/…`,
is not there for a reader of the repository)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FRONT_PAGE_LINES = 200

# Documents the front page and the index already name, written once the code has moved (issue 29:
# docs/architecture.md). A link to one may not resolve yet; once the file exists, remove it here.
PENDING: set[str] = set()

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*<?(\S+?)>?(?:[ \t]+\"[^\"\n]*\")?[ \t]*$", re.MULTILINE)
HTML_LINK = re.compile(r"\b(?:href|src)\s*=\s*\"([^\"]*)\"")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
UP_PATH = re.compile(r"(?<![\w./-])(?:\.\./)+[\w.~/-]*")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, inside a fenced code block)."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            yield number, line, True
            continue
        yield number, line, fenced


def links(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, target) of every link outside code — inline links and images (their text
    may span lines), reference definitions, HTML href/src attributes."""
    prose = "\n".join("" if fenced else line for _n, line, fenced in _lines(path))
    prose = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), prose)  # (offsets kept)
    for pattern in (INLINE_LINK, REFERENCE_LINK, HTML_LINK):
        for match in pattern.finditer(prose):
            yield prose.count("\n", 0, match.start(1)) + 1, match.group(1)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (links as their text, code as its content)
    lower-cased, punctuation but `-` and `_` dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for _number, line, fenced in _lines(path):
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def problem(source: Path, target: str) -> str | None:
    """Why a link from `source` to `target` does not resolve inside the repository, or None."""
    if not target or SCHEME.match(target) or target.startswith("//"):
        return None if target else "an empty link"  # (http:, https:, mailto: … are not ours to check)
    if target.startswith("/"):
        return "an absolute path (write it relative to the document)"
    path_part, _, anchor = target.partition("#")
    resolved = (source.parent / path_part).resolve() if path_part else source
    if not resolved.is_relative_to(ROOT):
        return "outside the repository"
    relative = resolved.relative_to(ROOT).as_posix()
    if not resolved.exists():
        return None if relative in PENDING else f"no such file: {relative}"
    if anchor:
        if resolved.suffix != ".md":
            return f"an anchor into {relative}, which is not a Markdown document"
        if anchor not in anchors(resolved):
            return f"no heading #{anchor} in {relative}"
    return None


def test_readme_is_a_front_page() -> None:
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count <= FRONT_PAGE_LINES, (
        f"README.md has {count} lines (at most {FRONT_PAGE_LINES}): it is the front page; the reference goes to docs/"
    )


def test_the_reference_is_in_docs() -> None:
    assert (DOCS / "README.md").exists(), "docs/README.md, the index of the documentation, is missing"
    index = {target.partition("#")[0] for _n, target in links(DOCS / "README.md")}
    missing = [path.name for path in sorted(DOCS.glob("*.md")) if path.name != "README.md" and path.name not in index]
    assert missing == [], f"documents docs/README.md does not list: {missing}"


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_resolves_inside_the_repository(document: Path) -> None:
    broken = [
        f"{document.relative_to(ROOT)}:{number}: {target} — {why}"
        for number, target in links(document)
        if (why := problem(document, target))
    ]
    assert broken == [], "\n".join(broken)


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_nothing_named_lies_outside_the_repository(document: Path) -> None:
    """A path that climbs out of the repository, in a link, in code or in prose."""
    outside = []
    for number, line, _fenced in _lines(document):
        for match in UP_PATH.finditer(line):
            if not (document.parent / match.group(0)).resolve().is_relative_to(ROOT):
                outside.append(f"{document.relative_to(ROOT)}:{number}: {match.group(0)}")
    assert outside == [], "\n".join(outside)


def test_pending_documents_are_still_pending() -> None:
    written = sorted(name for name in PENDING if (ROOT / name).exists())
    assert written == [], f"{written} exist now: remove them from PENDING in {Path(__file__).name}"
