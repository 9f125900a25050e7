"""The chat's elicitation card over the session page's template: url mode shows the whole URL and
opens only an http(s) one (on Accept, in server_requests.js); a shared chat has no buttons."""

from __future__ import annotations

from playground.chat import render

HOSTILE = '"><img src=x onerror="window.__pwned=1">'


def url_item(url: str, **more: object) -> dict:
    params = {"mode": "url", "url": url, "message": f"Sign in {HOSTILE}", "elicitationId": "e1"}
    return {"kind": "elicitation", "session_id": 3, "key": "q2", "server": "s", "params": params, **more}


def test_url_mode_shows_the_whole_url_and_only_an_https_one_is_openable_on_accept():
    url = "https://login.example.org/authorize?next=https://evil.example&x=" + "a" * 300
    html = render.item_html(url_item(url, state="waiting"))
    assert 'id="elicitation-3-q2"' in html and 'data-key="3-q2"' in html
    assert "login.example.org</strong>" in html and "a" * 300 in html  # the whole URL, its host marked
    assert 'data-url="https://login.example.org/authorize?next=https://evil.example&amp;x=' in html
    assert "not opened automatically" in html and 'data-elicit-action="accept"' in html
    assert "<img" not in html and "&lt;img" in html
    script = render.item_html(url_item("javascript:window.__pwned=1//", state="waiting"))
    assert 'data-url=""' in script and "will not open it" in script


def test_an_answered_or_shared_card_has_no_buttons():
    answered = render.item_html(url_item("https://example.org/", state="answered", answer="decline"))
    assert "answered (decline)" in answered and "data-elicit-action" not in answered
    assert "example.org" in answered
    shared = render.item_html(url_item("https://example.org/", state="waiting"), shared=True)
    assert "data-elicit-action" not in shared and "session transcript" not in shared


def test_a_shared_sampling_card_has_no_controls_and_a_settled_elicitation_no_form():
    waiting = {"kind": "sampling", "session_id": 3, "key": "q1", "server": "s", "state": "waiting", "messages": []}
    assert "Ask the chat's model" in render.item_html(waiting)
    shared = render.item_html(waiting, shared=True)
    assert "hx-ws:send" not in shared and "Send reply" not in shared and "Reject" not in shared
    form = {"type": "object", "properties": {"name": {"type": "string", "title": "Your name"}}}
    item = {"kind": "elicitation", "session_id": 3, "key": "q2", "server": "s"}
    item["params"] = {"message": "Who?", "requestedSchema": form}
    assert "Your name" in render.item_html({**item, "state": "waiting"})
    settled = render.item_html({**item, "state": "answered", "answer": "accept"})
    assert "Who?" in settled and "Your name" not in settled
