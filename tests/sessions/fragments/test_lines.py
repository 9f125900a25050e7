"""The transcript line (fragments/lines.py), built in Python, not by a template: it must escape
every value a server controls, in text and in attributes, as autoescaping did, and a batch of
big lines goes in pieces under daphne's 1 MiB message.

What the transcript lines and pages carry for the page's view of them (static/transcript-view.js):
each line's recorded time, the progress token pairing a request with its progress, and the
session's clock origin that turns `t` into a time of day (on the page, the share page and in
the JSON export)."""

from __future__ import annotations

import datetime
import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.mcp import jsontext
from playground.sessions.fragments import lines
from playground.sessions.fragments.lines import line_html
from playground.transcripts.models import Event, Session, ShareLink

HOSTILE = '"><img src=x onerror=alert(1)>'
# A value a server controls, and as escaped text shows it.
HOSTILE_VALUE = "<img src=x onerror=alert(1)>\"'&"
ESCAPED_VALUE = "&lt;img src=x onerror=alert(1)&gt;&quot;&#x27;&amp;"
LIMIT = 1024 * 1024


def rendered(message: dict, t: float = 1.23456, dir: str = "send") -> str:
    return line_html(lines.line({"seq": 7, "t": t, "dir": dir, "raw": json.dumps(message), "message": message}))


def test_a_line_carries_its_recorded_time_in_ms():
    html = rendered({"jsonrpc": "2.0", "method": "notifications/initialized"}, t=1.23456)
    assert '<span class="t" data-ms="1234.6">1234.6</span>' in html


def test_requests_and_their_progress_carry_the_same_token():
    request = rendered(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "slow", "_meta": {"progressToken": "p-3"}},
        }
    )
    progress = rendered(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p-3", "progress": 1, "total": 2},
        },
        dir="recv",
    )
    numeric = rendered(
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 12}}, dir="recv"
    )
    assert 'data-progress="p-3"' in request and 'data-progress="p-3"' in progress
    assert 'data-progress="12"' in numeric
    for message in (
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "x"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"_meta": {"progressToken": True}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"_meta": "no"}},
        {"jsonrpc": "2.0", "id": 4, "result": {"_meta": {"progressToken": "p"}}},
    ):
        assert "data-progress" not in rendered(message)


def test_a_hostile_token_stays_inside_its_attribute():
    html = rendered({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": HOSTILE}})
    assert "<img" not in html and 'data-progress="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"' in html


@pytest.mark.django_db
def test_pages_and_the_json_export_carry_the_clock_origin(client):
    user = get_user_model().objects.create_user("ann", password="pw")
    origin = datetime.datetime(2026, 11, 4, 14, 3, 7, 512_345, tzinfo=datetime.UTC)
    session = Session.objects.create(
        server_name="s",
        owner=user,
        status="ended",
        clock_origin=origin,
        started_at=origin + datetime.timedelta(seconds=2),
    )
    Event.objects.create(
        session=session,
        seq=1,
        t=0.5,
        dir="note",
        data={"seq": 1, "t": 0.5, "dir": "note", "message": None, "kind": "info", "text": "hello"},
    )
    client.force_login(user)
    origin_ms = int(origin.timestamp() * 1000 + 0.5)
    page = client.get(reverse("sessions:detail", args=[session.pk])).content.decode()
    assert f'id="transcript-lines" data-origin="{origin_ms}"' in page
    assert "data-clear-transcript" in page and "data-relative-times" in page
    link = ShareLink.objects.create(session=session, created_by=user)
    client.logout()
    shared = client.get(reverse("sessions:share_page", args=[link.token])).content.decode()
    assert f'data-origin="{origin_ms}"' in shared
    assert "data-clear-transcript" not in shared  # read-only: no Clear there
    document = json.loads(b"".join(client.get(reverse("sessions:share_json", args=[link.token])).streaming_content))
    assert datetime.datetime.fromisoformat(document["session"]["clock_origin"]) == origin
    assert document["events"][0]["t"] == 0.5  # events keep their t


@pytest.mark.django_db
def test_sessions_recorded_before_the_origin_was_kept_count_from_their_start():
    started = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    session = Session.objects.create(server_name="s", started_at=started)
    assert session.clock_origin_ms == int(started.timestamp() * 1000)


def test_edit_and_resend_is_on_the_owners_request_lines_only():
    """Only a request the client sent, and only on the owner's page (a share page has no control that acts)."""
    from playground.sessions.fragments.lines import line, line_html

    def row(dir_: str, message: dict) -> dict:
        return {"seq": 3, "t": 0.1, "dir": dir_, "raw": json.dumps(message), "message": message}

    button = 'class="small resend" data-open="raw/?from_seq=3"'
    request = row("send", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert button in line_html(line(request, owner=True))
    assert "resend" not in line_html(line(request))  # a share page's line
    for other in (
        row("send", {"jsonrpc": "2.0", "method": "notifications/initialized"}),  # a notification
        row("send", {"jsonrpc": "2.0", "id": 7, "result": {}}),  # our answer to the server
        row("recv", {"jsonrpc": "2.0", "id": 1, "result": {}}),  # a response
        row("recv", {"jsonrpc": "2.0", "id": 2, "method": "roots/list"}),
    ):  # the server's request
        assert "resend" not in line_html(line(other, owner=True)), other


def rendered_row(row: dict) -> str:
    return line_html(lines.line(row))


def test_every_server_value_is_escaped():
    message = {"jsonrpc": "2.0", "id": HOSTILE_VALUE, "method": HOSTILE_VALUE, "params": {"x": HOSTILE_VALUE}}
    html = rendered_row(
        {
            "seq": 3,
            "t": 0.5,
            "dir": "recv",
            "raw": json.dumps(message),
            "message": message,
            "problems": [HOSTILE_VALUE],
            "reply_to": 2,
            "latency_ms": 1.25,
            "sse_id": HOSTILE_VALUE,
            "http": {"method": HOSTILE_VALUE, "url": HOSTILE_VALUE, "status": HOSTILE_VALUE},
        }
    )
    assert "<img" not in html and "onerror=alert(1)>" not in html
    assert f'data-method="{ESCAPED_VALUE}"' in html  # attribute: quotes cannot break out
    assert f'<span class="rid" title="JSON-RPC id">id {ESCAPED_VALUE}</span>' in html
    assert f"<li>{ESCAPED_VALUE}</li>" in html
    assert f"SSE id {ESCAPED_VALUE}" in html and f"HTTP {ESCAPED_VALUE}" in html
    assert '<span class="lat">1.3 ms</span>' in html  # floatformat:1 rounds half up


def test_unparsable_frame_and_notes():
    html = rendered_row(
        {"seq": 1, "t": 0.0, "dir": "recv", "raw": HOSTILE_VALUE, "message": None, "parse_error": HOSTILE_VALUE}
    )
    assert 'class="ev ev-recv ev-bad"' in html and 'data-method="unparsed"' in html
    assert f"<pre>{ESCAPED_VALUE}</pre>" in html and "<img" not in html
    note = rendered_row({"seq": 2, "t": 0.0, "dir": "note", "message": None, "kind": "error", "text": HOSTILE_VALUE})
    assert 'class="ev ev-note ev-bad kind-error"' in note and '<details class="raw">' not in note
    assert f'<span class="preview">{ESCAPED_VALUE}</span>' in note


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


def test_a_batch_of_big_lines_is_split_and_a_line_is_capped():
    raw = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": '"' * 900_000}})
    rows = [
        {"seq": i, "t": 0.0, "dir": "recv", "raw": raw, "message": json.loads(raw), "size": len(raw)}
        for i in range(1, 6)
    ]
    frames = lines.transcript_append_frames(rows)
    assert len(frames) > 1 and all(len(f.encode()) < LIMIT for f in frames)
    assert all(f.startswith('<div id="transcript-lines" hx-swap-oob="beforeend">') for f in frames)
    assert sum(f.count('class="ev ') for f in frames) == 5
    assert "raw text shown up to" in frames[0]


def test_a_line_shows_its_event_number_and_the_json_rpc_id_as_an_id():
    """One numbering everywhere (issue 31): a check row's "event 18" pointed at a line shown as `#7`
    (its JSON-RPC id): the line shows its event number, and the id says it is one."""
    html = lines.line_html(
        lines.line(
            {"seq": 18, "t": 0.5, "dir": "send", "raw": "{}", "message": {"jsonrpc": "2.0", "id": 7, "method": "ping"}}
        )
    )
    assert (
        '<span class="seq" title="event 18">18</span>' in html
        and '<span class="rid" title="JSON-RPC id">id 7</span>' in html
    )
    assert "#7" not in html
