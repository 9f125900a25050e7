"""The Result region (fragments/result.py), built in Python, not by a template: it must escape
every value a server controls, as autoescaping did. No fragment may exceed daphne's 1 MiB
websocket message limit (a larger one closes the page's socket): big results go in pieces."""

from __future__ import annotations

import asyncio
import html
import re

import pytest

from playground.sessions.fragments import result
from playground.sessions.live import calls
from tests.sessions.fakes import FakeTab

HOSTILE = "<img src=x onerror=alert(1)>\"'&"
ESCAPED = "&lt;img src=x onerror=alert(1)&gt;&quot;&#x27;&amp;"


LIMIT = 1024 * 1024


def test_a_big_result_goes_in_pieces_under_the_limit_and_nothing_is_lost():
    text = ('"quoted" <b> & ' * 30_000) + "THE END"  # 450K characters, ~1 MB once escaped
    outcome = {
        "call_id": "c1",
        "command": "call_tool",
        "name": "big",
        "result": {"content": [{"type": "text", "text": text}], "structuredContent": {"t": text}},
    }
    frames = result.result_frames(outcome)
    assert len(frames) > 3 and all(len(f.encode()) < LIMIT for f in frames)
    assert 'id="result"' in frames[0]
    # The rest of the text goes into a closed <details> (laid out only when opened), in pieces.
    assert re.search(
        r'<details class="more"><summary>\d+ more characters</summary>'
        r'<pre class="text" id="result-text-0-more"></pre></details>',
        frames[0],
    )
    pieces = re.findall(r'<div id="result-text-0-more" hx-swap-oob="beforeend">(.*?)</div>', "".join(frames[1:]), re.S)
    # Its Copy button copies all of it: the first part names the element the rest goes into.
    first = re.search(r'<pre class="text" data-copy-more="result-text-0-more">(.*?)</pre>', frames[0], re.S).group(1)
    assert html.unescape(first + "".join(pieces)) == text
    assert any('id="result-structured-more" hx-swap-oob="beforeend"' in f for f in frames)
    assert any('id="result-raw-more" hx-swap-oob="beforeend"' in f for f in frames)


def test_a_small_result_is_one_fragment_with_everything():
    outcome = {
        "call_id": "c1",
        "command": "call_tool",
        "name": "t",
        "result": {"content": [{"type": "text", "text": "hello <b>"}], "structuredContent": {"a": 1}},
    }
    catalogue = {"tools": [{"name": "t", "outputSchema": {"type": "object"}}]}
    asyncio.run(calls.check_structured(outcome, catalogue))  # (the worker does, where the call ends)
    frames = result.result_frames(outcome)
    assert len(frames) == 1
    assert '<pre class="text">hello &lt;b&gt;</pre>' in frames[0]
    assert "matches outputSchema" in frames[0] and "structuredContent" in frames[0]
    assert 'class="more"' not in frames[0]


def test_the_result_region_escapes_every_server_value():
    """The Result is built in Python (fragments/result.py): a hostile string in every field a server
    controls, across every content kind, stays text."""
    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    content = [
        {"type": "text", "text": HOSTILE},
        {"type": "image", "mimeType": "image/png", "data": png},
        {"type": "image", "mimeType": HOSTILE, "data": HOSTILE},
        {"type": "audio", "mimeType": HOSTILE, "data": png},
        {"type": "resource_link", "uri": HOSTILE, "name": HOSTILE, "mimeType": HOSTILE, "description": HOSTILE},
        {"type": "resource", "resource": {"uri": HOSTILE, "mimeType": HOSTILE, "text": HOSTILE}},
        {
            "type": "resource",
            "resource": {"uri": HOSTILE, "mimeType": "text/plain", "blob": base64.b64encode(HOSTILE.encode()).decode()},
        },
        {"type": HOSTILE, HOSTILE: HOSTILE},
    ]
    outcomes = [
        {
            "call_id": HOSTILE,
            "command": "call_tool",
            "name": HOSTILE,
            "announced": True,
            "result": {"content": content, "structuredContent": {HOSTILE: HOSTILE}, "isError": True},
            "rounds": [{"round": 1, "method": HOSTILE, "keys": [HOSTILE], "request_state": HOSTILE, "state_size": 1}],
        },
        {
            "call_id": "c2",
            "command": "call_tool",
            "name": "t",
            "result": {
                "task": {"taskId": HOSTILE, "status": HOSTILE, "statusMessage": HOSTILE, "pollInterval": HOSTILE}
            },
        },
        {"call_id": "c3", "command": "call_tool", "name": "t", "error": {"code": HOSTILE, "message": HOSTILE}},
        {
            "call_id": "c4",
            "command": "get_prompt",
            "name": "p",
            "result": {"messages": [{"role": HOSTILE, "content": {"type": "text", "text": HOSTILE}}]},
        },
    ]
    catalogue = {"tools": [{"name": HOSTILE, "outputSchema": {"type": "object", "required": [HOSTILE + "x"]}}]}
    for outcome in outcomes:
        asyncio.run(calls.check_structured(outcome, catalogue))  # (its errors quote the server too)
        html_ = "".join(result.result_frames(outcome))
        assert "onerror=alert(1)>" not in html_ and ESCAPED in html_
        assert html_.count("<img") == html_.count('<img src="data:image/png;base64,')  # only checked images


def test_url_elicitation_shows_the_whole_url_and_links_only_http():
    """The server's URL is shown whole with its host stressed; only http(s) URLs get a link or are opened."""
    from playground.sessions.fragments.result import describe_result

    def outcome(url: str) -> dict:
        return {
            "command": "call_tool",
            "call_id": "c1",
            "name": "x",
            "error": {
                "code": -32042,
                "message": "needs a URL",
                "data": {"elicitations": [{"mode": "url", "url": url, "message": "Open it", "elicitationId": "e1"}]},
            },
        }

    good = result.result(outcome("https://login.example.org:8443/a?b=1"))
    assert (
        '<span class="url-rest">https://</span><strong class="url-host">login.example.org:8443</strong>'
        '<span class="url-rest">/a?b=1</span>'
    ) in good
    assert 'href="https://login.example.org:8443/a?b=1" target="_blank" rel="noopener noreferrer"' in good
    bad = result.result(outcome("javascript:alert(1)//https://x.org"))
    assert "javascript:alert(1)//https://x.org</code>" in bad and 'href="javascript' not in bad
    assert describe_result(outcome("https://x.org"))["url_elicitations"][0]["id"] == "e1"
    from playground.sessions.features import BY_NAME

    (card,) = BY_NAME["server_requests"].fragments(
        {
            "key": "q1",
            "method": "elicitation/create",
            "context": None,
            "params": {"mode": "url", "url": "file:///etc/passwd", "message": "m", "elicitationId": "e2"},
        },
        FakeTab(),
    )
    assert 'data-url=""' in card and "will not open it" in card


@pytest.mark.django_db
def test_result_fragments_stay_under_the_websocket_message_limit():
    """daphne closes the socket for a message over 1 MiB: big media must not end up inline."""
    import base64

    from playground.sessions.fragments.result import result_frames

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 3_000_000).decode()
    outcome = {
        "call_id": "c1",
        "command": "call_tool",
        "name": "big",
        "result": {
            "content": [
                {"type": "image", "mimeType": "image/png", "data": png},
                {"type": "resource", "resource": {"uri": "x://blob", "mimeType": "image/png", "blob": png}},
                {"type": "text", "text": "é" * 2_000_000},
            ]
        },
    }
    frames = result_frames(outcome)
    assert all(len(frame.encode()) < 1024 * 1024 for frame in frames)
    assert "too large to show in the page" in frames[0]
    small = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 100).decode()
    outcome["result"]["content"] = [{"type": "image", "mimeType": "image/png", "data": small}]
    assert f"data:image/png;base64,{small}" in result_frames(outcome)[0]


def test_the_result_is_labelled_by_the_protocols_method_not_an_internal_name():
    """`call_tool` showed above every result (issue 31)."""
    from playground.sessions.fragments.result import call_started, result

    html = result({"call_id": "c1", "command": "call_tool", "name": "echo", "result": {"content": []}})
    assert "<strong>tools/call</strong> echo" in html and "call_tool" not in html
    assert "<strong>resources/read</strong>" in result(
        {"call_id": "c2", "command": "read_resource", "name": "x:/", "result": {"contents": []}}
    )
    assert '<span class="command">prompts/get</span>' in call_started(
        {"call_id": "c3", "command": "get_prompt", "name": "p", "started": 1.0}
    )
