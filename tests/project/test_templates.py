"""Django's `{# … #}` comment is one line only: one that goes on to the next line is shown on the
page as text (the chat page once showed its own comment to the person)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNCLOSED = re.compile(r"\{#(?!.*?#\})")  # a comment opened and not closed on its line


def test_no_template_comment_spans_lines() -> None:
    templates = [*ROOT.glob("templates/**/*.html"), *ROOT.glob("playground/*/templates/**/*.html")]
    assert len(templates) > 20
    broken = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in templates
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if UNCLOSED.search(line)
    ]
    assert broken == [], "use {% comment %} for a comment over several lines: " + ", ".join(broken)
