"""Fragments sent over the websocket. The transcript line is built in Python (lines.py), not by a
template: it must escape every value a server controls, in text and in attributes, as
autoescaping did. No fragment may exceed daphne's 1 MiB websocket message limit (a larger one
closes the page's socket): big results and batches go in pieces."""
from __future__ import annotations

import asyncio
import html
import json
import re

from playground.mcp import jsontext
from playground.sessions.fragments import lines, result
from playground.sessions.live import calls
from playground.sessions.fragments.lines import line_html

from tests.sessions.fakes import FakeSession, FakeTab

HOSTILE = '<img src=x onerror=alert(1)>"\'&'
ESCAPED = "&lt;img src=x onerror=alert(1)&gt;&quot;&#x27;&amp;"


def rendered(row: dict) -> str:
    return line_html(lines.line(row))


def test_every_server_value_is_escaped():
    message = {"jsonrpc": "2.0", "id": HOSTILE, "method": HOSTILE, "params": {"x": HOSTILE}}
    html = rendered({"seq": 3, "t": 0.5, "dir": "recv", "raw": json.dumps(message), "message": message,
                     "problems": [HOSTILE], "reply_to": 2, "latency_ms": 1.25, "sse_id": HOSTILE,
                     "http": {"method": HOSTILE, "url": HOSTILE, "status": HOSTILE}})
    assert "<img" not in html and "onerror=alert(1)>" not in html
    assert f'data-method="{ESCAPED}"' in html                     # attribute: quotes cannot break out
    assert f'<span class="rid">#{ESCAPED}</span>' in html
    assert f"<li>{ESCAPED}</li>" in html
    assert f"SSE id {ESCAPED}" in html and f"HTTP {ESCAPED}" in html
    assert '<span class="lat">1.3 ms</span>' in html                # floatformat:1 rounds half up


def test_unparsable_frame_and_notes():
    html = rendered({"seq": 1, "t": 0.0, "dir": "recv", "raw": HOSTILE, "message": None, "parse_error": HOSTILE})
    assert 'class="ev ev-recv ev-bad"' in html and 'data-method="unparsed"' in html
    assert f"<pre>{ESCAPED}</pre>" in html and "<img" not in html
    note = rendered({"seq": 2, "t": 0.0, "dir": "note", "message": None, "kind": "error", "text": HOSTILE})
    assert 'class="ev ev-note ev-bad kind-error"' in note and "<details class=\"raw\">" not in note
    assert f'<span class="preview">{ESCAPED}</span>' in note


def test_append_fragment_is_an_oob_swap_of_every_line():
    rows = [{"seq": i, "t": 0.0, "dir": "stderr", "raw": "x", "text": "x", "message": None} for i in (1, 2)]
    html = lines.transcript_append(rows)
    assert html.startswith('<div id="transcript-lines" hx-swap-oob="beforeend"><details')
    assert 'id="ev-1"' in html and 'id="ev-2"' in html and html.endswith("</details></div>")


def test_pretty_json_matches_the_stdlib_layout_and_falls_back_where_orjson_differs():
    message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "é <b>", "n": [1, 2.5, None, True], "o": {}}}
    assert jsontext.pretty(message, json.dumps(message)) == json.dumps(message, indent=2, ensure_ascii=False)
    for raw in ('{"x": NaN}', '{"x": -Infinity}', '{"x": 1180591620717411303424}', '{"x": "\\ud800"}'):
        parsed = json.loads(raw)
        assert jsontext.pretty(parsed, raw) == json.dumps(parsed, indent=2, ensure_ascii=False)


LIMIT = 1024 * 1024


def test_a_big_result_goes_in_pieces_under_the_limit_and_nothing_is_lost():
    text = ('"quoted" <b> & ' * 30_000) + "THE END"           # 450K characters, ~1 MB once escaped
    outcome = {"call_id": "c1", "command": "call_tool", "name": "big",
               "result": {"content": [{"type": "text", "text": text}], "structuredContent": {"t": text}}}
    frames = result.result_frames(outcome)
    assert len(frames) > 3 and all(len(f.encode()) < LIMIT for f in frames)
    assert 'id="result"' in frames[0]
    # The rest of the text goes into a closed <details> (laid out only when opened), in pieces.
    assert re.search(r'<details class="more"><summary>\d+ more characters</summary>'
                     r'<pre class="text" id="result-text-0-more"></pre></details>', frames[0])
    pieces = re.findall(r'<div id="result-text-0-more" hx-swap-oob="beforeend">(.*?)</div>', "".join(frames[1:]), re.S)
    # Its Copy button copies all of it: the first part names the element the rest goes into.
    first = re.search(r'<pre class="text" data-copy-more="result-text-0-more">(.*?)</pre>', frames[0], re.S).group(1)
    assert html.unescape(first + "".join(pieces)) == text
    assert any('id="result-structured-more" hx-swap-oob="beforeend"' in f for f in frames)
    assert any('id="result-raw-more" hx-swap-oob="beforeend"' in f for f in frames)


def test_a_batch_of_big_lines_is_split_and_a_line_is_capped():
    raw = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": '"' * 900_000}})
    rows = [{"seq": i, "t": 0.0, "dir": "recv", "raw": raw, "message": json.loads(raw), "size": len(raw)}
            for i in range(1, 6)]
    frames = lines.transcript_append_frames(rows)
    assert len(frames) > 1 and all(len(f.encode()) < LIMIT for f in frames)
    assert all(f.startswith('<div id="transcript-lines" hx-swap-oob="beforeend">') for f in frames)
    assert sum(f.count('class="ev ') for f in frames) == 5
    assert "raw text shown up to" in frames[0]


def test_a_small_result_is_one_fragment_with_everything():
    outcome = {"call_id": "c1", "command": "call_tool", "name": "t",
               "result": {"content": [{"type": "text", "text": "hello <b>"}], "structuredContent": {"a": 1}}}
    catalogue = {"tools": [{"name": "t", "outputSchema": {"type": "object"}}]}
    asyncio.run(calls.check_structured(outcome, catalogue))    # (the worker does, where the call ends)
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
        {"type": "resource", "resource": {"uri": HOSTILE, "mimeType": "text/plain",
                                          "blob": base64.b64encode(HOSTILE.encode()).decode()}},
        {"type": HOSTILE, HOSTILE: HOSTILE},
    ]
    outcomes = [
        {"call_id": HOSTILE, "command": "call_tool", "name": HOSTILE, "announced": True,
         "result": {"content": content, "structuredContent": {HOSTILE: HOSTILE}, "isError": True},
         "rounds": [{"round": 1, "method": HOSTILE, "keys": [HOSTILE], "request_state": HOSTILE, "state_size": 1}]},
        {"call_id": "c2", "command": "call_tool", "name": "t",
         "result": {"task": {"taskId": HOSTILE, "status": HOSTILE, "statusMessage": HOSTILE, "pollInterval": HOSTILE}}},
        {"call_id": "c3", "command": "call_tool", "name": "t", "error": {"code": HOSTILE, "message": HOSTILE}},
        {"call_id": "c4", "command": "get_prompt", "name": "p",
         "result": {"messages": [{"role": HOSTILE, "content": {"type": "text", "text": HOSTILE}}]}},
    ]
    catalogue = {"tools": [{"name": HOSTILE, "outputSchema": {"type": "object", "required": [HOSTILE + "x"]}}]}
    for outcome in outcomes:
        asyncio.run(calls.check_structured(outcome, catalogue))   # (its errors quote the server too)
        html_ = "".join(result.result_frames(outcome))
        assert "onerror=alert(1)>" not in html_ and ESCAPED in html_
        assert html_.count("<img") == html_.count('<img src="data:image/png;base64,')    # only checked images


def test_listen_panel_shows_what_the_server_did_not_honour():
    """The acknowledged-vs-requested difference of subscriptions/listen (the SDK peer honours all)."""
    requested = {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["a://1", "b://2"]}
    acknowledged = {"toolsListChanged": True, "resourceSubscriptions": ["a://1"]}
    listen = FakeSession().add("listen")
    listen.stream = {"id": 7, "requested": requested, "acknowledged": acknowledged, "status": "open", "count": 0}
    got = listen.snapshot()[0]["event"]["html"]
    honoured = got.split("<dt>not honoured</dt>")[1].split("</dd>")[0]
    assert re.findall(r'<span class="cap">([^<]+)</span>', honoured) == ["promptsListChanged", "b://2"]


def test_url_elicitation_shows_the_whole_url_and_links_only_http():
    """The server's URL is shown whole with its host stressed; only http(s) URLs get a link or are opened."""
    from playground.sessions.fragments.result import describe_result

    def outcome(url: str) -> dict:
        return {"command": "call_tool", "call_id": "c1", "name": "x", "error": {
            "code": -32042, "message": "needs a URL", "data": {"elicitations": [
                {"mode": "url", "url": url, "message": "Open it", "elicitationId": "e1"}]}}}
    good = result.result(outcome("https://login.example.org:8443/a?b=1"))
    assert ('<span class="url-rest">https://</span><strong class="url-host">login.example.org:8443</strong>'
            '<span class="url-rest">/a?b=1</span>') in good
    assert 'href="https://login.example.org:8443/a?b=1" target="_blank" rel="noopener noreferrer"' in good
    bad = result.result(outcome("javascript:alert(1)//https://x.org"))
    assert "javascript:alert(1)//https://x.org</code>" in bad and "href=\"javascript" not in bad
    assert describe_result(outcome("https://x.org"))["url_elicitations"][0]["id"] == "e1"
    from playground.sessions.features import BY_NAME

    card, = BY_NAME["server_requests"].fragments({"key": "q1", "method": "elicitation/create", "context": None, "params": {
        "mode": "url", "url": "file:///etc/passwd", "message": "m", "elicitationId": "e2"}}, FakeTab())
    assert 'data-url=""' in card and "will not open it" in card
