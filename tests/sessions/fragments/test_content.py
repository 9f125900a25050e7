"""Content blocks as the page shows them (fragments/content.py)."""
from __future__ import annotations

from playground.sessions.fragments.content import MAX_TEXT, content_item


def test_huge_text_results_are_cut_on_the_page():
    item = content_item({"type": "text", "text": "x" * (MAX_TEXT + 10)})
    assert len(item["text"]) < MAX_TEXT + 200 and f"{MAX_TEXT + 10} characters in all" in item["text"]
