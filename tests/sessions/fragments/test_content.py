"""Content blocks as the page shows them (fragments/content.py)."""

from __future__ import annotations

from playground.sessions.fragments.content import MAX_TEXT, content_item


def test_huge_text_results_are_cut_on_the_page():
    item = content_item({"type": "text", "text": "x" * (MAX_TEXT + 10)})
    assert len(item["text"]) < MAX_TEXT + 200 and f"{MAX_TEXT + 10} characters in all" in item["text"]


def test_a_block_that_breaks_the_schema_says_so_and_shows_itself():
    from playground.sessions.fragments.content import content_html, content_item, problems

    assert problems({"type": "text", "text": ""}) == []
    assert problems({"type": "text"}) == ["a text block needs `text` (a string)"]
    assert problems({"type": "image", "data": "AA=="}) == ["an image block needs `mimeType` (a string)"]
    assert problems({"type": "resource", "resource": {"uri": "x:/"}}) == [
        "its `resource` needs `text` or `blob` (a string)"
    ]
    assert problems({"type": "video"})[0].startswith("`video` is not a content type")
    assert problems({"text": "x"}) == ["a content block has no `type`"] and problems(3)[0].endswith("not integer")
    html = content_html(content_item({"type": "text", "x": "<b>"}))
    assert 'class="content-problems" role="note"' in html and "&lt;b&gt;" in html and "<b>" not in html
