"""Schema lint through the live path: a server that breaks the MCP schema of its version once
(tests/peers/schema_breaker.py) → the frame's saved row, its line on the live page, the
header's count, the session page, the export and the share page all say so, exactly. A flood is
checked in part, and a note says how much."""

from __future__ import annotations

import json
import re
import sys

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Session, ShareLink
from playground.transcripts.recorder import save_events
from tests.conftest import PEERS
from tests.sessions.helpers import BREAKER, BROKEN, communicator, events, make_user_and_server, receive_until, stop_all

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def pages(user, session_id: int) -> tuple[str, str, list[dict]]:
    """The session page, its share page and its JSONL export, as a browser gets them."""
    browser = Client()
    browser.force_login(user)
    page = browser.get(f"/sessions/{session_id}/").content.decode()
    export = [
        json.loads(line)
        for line in b"".join(browser.get(f"/sessions/{session_id}/export.jsonl").streaming_content)
        .decode()
        .splitlines()
    ]
    link = ShareLink.objects.create(session_id=session_id, created_by=user)
    share = Client().get(f"/share/{link.token}/").content.decode()
    return page, share, export


@pytest.mark.parametrize("version", list(BROKEN))
async def test_one_broken_message_per_version_is_found_shown_counted_and_exported(version):
    definition, pointer, message = BROKEN[version]
    user, server = await make_user_and_server(
        name=f"breaker {version}",
        command=sys.executable,
        args=[BREAKER, version],
        era="modern" if version >= "2026" else "legacy",
    )
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', ">go<")
        await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "go"}))
        seen = await receive_until(
            comm,
            'aria-label="Result"',
            'class="schema-flag"',
            '<span id="schema-lint" class="schema-count has-problems"',
            "1 schema problem<",
        )
    finally:
        await comm.disconnect()
        await stop_all()
    # The live line: the flag in its summary, the problem (escaped) under a link to the spec.
    line = re.search(
        r'<details class="ev[^"]*" id="ev-\d+"[^>]*>(?:(?!</details>\n?<details).)*?schema-flag.*?'
        r"</div>",
        seen,
        re.S,
    ).group(0)
    assert 'aria-label="schema problem"' in line
    assert f'<code class="pointer">{pointer}</code> {message.replace(chr(39), "&#x27;")}' in line
    assert (
        f"Breaks {definition} of MCP {version}" in line
        and 'href="https://modelcontextprotocol.io/specification/' in line
    )

    rows = await events(session.pk)
    flagged = [r for r in rows if r.get("schema_problems")]
    assert len(flagged) == 1, flagged
    [row] = flagged
    assert row["dir"] == "recv"
    assert [(p["pointer"], p["message"]) for p in row["schema_problems"]] == [(pointer, message)]
    assert row["schema_lint"]["version"] == version and row["schema_lint"]["definition"] == definition
    saved = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    assert saved.schema_problems == 1 and saved.protocol_version == version

    page, share, export = await pages(user, session.pk)
    assert [r.get("schema_problems") for r in export if r.get("schema_problems")] == [row["schema_problems"]]
    for html in (page, share):  # reloaded and shared: the same flag, problem and header count
        assert '<span class="schema-flag">schema problem</span>' in html
        assert f'<code class="pointer">{pointer}</code>' in html and 'aria-label="schema problem"' in html
        assert re.search(r'<span id="schema-lint" class="schema-count has-problems"[^>]*>1 schema problem</span>', html)


async def test_a_flood_is_checked_in_part_and_a_note_says_how_much():
    user, server = await make_user_and_server(
        name="flood", command=sys.executable, args=[str(PEERS / "misbehaving.py"), "flood", "20000"]
    )
    session = await start_session(server, user)
    worker = WORKERS[session.pk]
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', ">go<")
        await comm.send_to(text_data=json.dumps({"action": "call_tool", "name": "go"}))
        await receive_until(comm, "flood done", timeout=60)
        linter = worker.feature("schema_lint").linter
    finally:
        await comm.disconnect()
        await stop_all()
    rows = await events(session.pk)
    [note] = [r for r in rows if r["dir"] == "note" and r.get("kind") == "lint"]
    checked, seen = note["data"]["checked"], note["data"]["seen"]
    # (The note counts the frames seen until it was written: as the session ends, a few may still
    # wait to be saved, and are checked whole then.)
    assert linter.seen >= 20_000 and 10_000 <= seen <= linter.seen and 0 < checked < seen / 4
    assert note["text"] == (
        f"schema lint: {checked:,} of {seen:,} frames checked (at most 200 frames a second from "
        f"the server, within 10% of a CPU and the process's sessions together within 25%); "
        f"the other {seen - checked:,} were not checked"
    )
    assert not any(r.get("schema_problems") for r in rows)  # what it checked of this flood was valid


async def test_saving_a_batch_again_counts_its_problems_once():
    user, server = await make_user_and_server()
    session = await database_sync_to_async(Session.objects.create)(server=server, server_name="x", owner=user)
    problem = {"pointer": "/params", "message": "m", "schema_path": "#/x"}
    on_purpose = {"version": "2025-11-25", "definition": "JSONRPCRequest", "on_purpose": "the server check: why"}
    rows = [
        {"seq": 1, "t": 0.0, "dir": "recv", "message": {}, "schema_problems": [problem, problem]},
        {"seq": 2, "t": 0.1, "dir": "recv", "message": {}},
        {"seq": 3, "t": 0.2, "dir": "recv", "message": {}, "schema_problems": [problem]},
        {"seq": 4, "t": 0.3, "dir": "send", "message": {}, "schema_problems": [problem], "schema_lint": on_purpose},
    ]
    await database_sync_to_async(save_events)(session.pk, rows[:2])
    await database_sync_to_async(save_events)(session.pk, rows)  # the first two again, and two more
    saved = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    assert saved.schema_problems == 3 and saved.event_count == 4  # sent invalid on purpose: not counted
    assert [r.get("schema_problems") for r in await events(session.pk)] == [
        [problem, problem],
        None,
        [problem],
        [problem],
    ]


def test_the_badge_escapes_what_it_shows_and_links_only_to_the_spec():
    """Rows come from the database (a server's text is in the messages): escaped, and only a
    link into the specification's own site is a link."""
    from playground.sessions.fragments import lines

    row = {
        "seq": 5,
        "t": 0.1,
        "dir": "recv",
        "message": {"jsonrpc": "2.0", "id": 1, "result": {}},
        "schema_problems": [{"pointer": "/a<b>", "message": "'<script>x()</script>' is bad", "schema_path": '#/"x'}],
        "schema_lint": {"version": "<v>", "definition": "<d>", "spec": "javascript:alert(1)"},
    }
    html = lines.transcript_lines([row])
    assert "<script>" not in html and "&lt;script&gt;x()&lt;/script&gt;" in html and "javascript:" not in html
    assert '<code class="pointer">/a&lt;b&gt;</code>' in html and "Breaks &lt;d&gt; of MCP &lt;v&gt;" in html
    row["schema_lint"]["spec"] = "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#calling-tools"
    html = lines.transcript_lines([row])
    assert (
        '<a href="https://modelcontextprotocol.io/specification/2025-11-25/server/tools#calling-tools" '
        'target="_blank" rel="noopener noreferrer">spec: Calling tools</a>'
    ) in html
    assert '<details class="ev ev-recv ev-schema" id="ev-5"' in html
    two = lines.transcript_lines([{**row, "schema_problems": row["schema_problems"] * 2}])
    assert '<span class="schema-flag">2 schema problems</span>' in two
    # A frame sent invalid on purpose (the server check's probes) says so, in grey, and why.
    sent = lines.transcript_lines(
        [{**row, "dir": "send", "schema_lint": {**row["schema_lint"], "on_purpose": "<why>"}}]
    )
    assert '<details class="ev ev-send ev-schema-on-purpose" id="ev-5"' in sent
    assert '<span class="schema-flag on-purpose">schema problem, sent on purpose</span>' in sent
    assert "Sent invalid on purpose (&lt;why&gt;): not counted among the session's schema problems." in sent
    # A frame too large to check says so, without a flag.
    big = lines.transcript_lines(
        [
            {
                "seq": 6,
                "t": 0.2,
                "dir": "recv",
                "message": {"jsonrpc": "2.0", "method": "x"},
                "schema_lint": {"version": "2025-11-25", "unchecked": "larger than 1,000,000 bytes"},
            }
        ]
    )
    assert "schema-flag" not in big and "schema: not checked (larger than 1,000,000 bytes)" in big
    assert "schema" not in lines.transcript_lines([{**row, "schema_problems": None, "schema_lint": None}])


async def test_a_check_cut_short_as_the_session_ends_still_reaches_its_events():
    """The recorder's save is cancelled as a session ends and its batch saved again by the final
    flush: the findings of the check under way still land on the events before that save."""
    import asyncio

    from tests.sessions.fakes import FakeSession

    ctx = FakeSession()
    lint = ctx.add("schema_lint")
    events: list = []
    ctx.tap.subscribe(events.append)
    ctx.tap.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    ctx.tap.recv(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "no schema"}]}}))
    first = asyncio.ensure_future(lint.check_frames(events))
    async with asyncio.timeout(5):  # the frames are picked: their check is under way in the pool
        while lint.linter.seen < 2:
            await asyncio.sleep(0)
    first.cancel()
    await lint.check_frames(events)  # the final flush: waits for it, checks nothing twice
    assert first.cancelled()
    assert [p["pointer"] for p in events[1].schema_problems] == ["/result/tools/0"]
    assert lint.problems == 1 and lint.linter.checked == 2
