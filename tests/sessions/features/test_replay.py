"""Replay in the live path (worker ↔ consumer, no browser), against two builds of an SDK server
that differ in one tool's output: a recorded session replayed in a session of its own, its
Differences saved and shown (page, share page), the ignore rules, and the session's export
replayed by the CLI; what a replay reads of its source, and the rows compared again."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import AsyncClient, Client
from django.test.utils import CaptureQueriesContext

from playground.mcp.replay import RAW_KEPT
from playground.mcp.replay.replayer import VALUE_KEPT
from playground.mcp.secrets import CUT, MASK
from playground.registry.models import Server
from playground.sessions.features.replay.region import ENDED_EARLY
from playground.sessions.live.worker import start_session
from playground.transcripts.models import Event, Session, ShareLink
from playground.transcripts.replays import recorded_rows
from tests.mcp_cli import mcp
from tests.sessions.helpers import (
    VARIANT,
    a_stranger,
    card_key,
    communicator,
    events,
    logged_in,
    make_user_and_server,
    receive_fragment,
    receive_until,
    record_session,
    send,
    share,
    stop_all,
    viewer,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def replay_of(session: Session, server, user) -> tuple[Session, str]:
    """Replay `session` against `server`; what its tab saw until the Differences were done."""
    replay = await start_session(server, user, replay_of=session)
    comm = communicator(replay.pk, user)
    try:
        await comm.connect()
        seen = await receive_until(comm, 'data-state="done"', timeout=60)
    finally:
        await comm.disconnect()
        await stop_all()
    return await database_sync_to_async(Session.objects.get)(pk=replay.pk), seen


@database_sync_to_async
def other_build(user, build: str, **fields) -> Server:
    return Server.objects.create(
        owner=user,
        name=f"build {build}",
        transport="stdio",
        command=sys.executable,
        args=[VARIANT, "stdio", build],
        **fields,
    )


def differences(page: str) -> str:
    """The Differences region of a page."""
    return page.split('aria-label="Differences"', 1)[1].split("</section>", 1)[0]


async def replayed_on_build_b() -> tuple[Any, Server, Server, Session, Session, str]:
    """(user, build a, build b, a session recorded on build a, its replay on build b, what the
    replay's tab saw until its Differences were done)."""
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    build_b = await other_build(user, "b")
    original = await record_session(user, build_a)
    replay, seen = await replay_of(original, build_b, user)
    return user, build_a, build_b, original, replay, seen


async def test_a_replay_against_a_changed_server_shows_that_request_changed():
    _, _, build_b, original, replay, seen = await replayed_on_build_b()
    assert replay.kind == "replay" and replay.source_id == original.pk and replay.server_id == build_b.pk
    assert 'aria-label="Server request"' not in seen  # the elicitation was answered from the recording
    report = replay.report
    requests = [(r["status"], r["method"], r["name"]) for r in report["rows"] if r["kind"] == "request"]
    assert ("changed", "tools/call", "version") in requests
    assert [r for r in requests if r[0] != "same"] == [("changed", "tools/call", "version")]
    assert ("same", "tools/call", "ask_name") in requests and ("same", "tools/call", "echo") in requests
    assert [r["method"] for r in report["rows"] if r["kind"] == "request"][:4] == [
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    ]
    assert report["answered_from_recording"] == 1 and report["state"] == "done"
    assert report["about"]["source"] == original.pk and report["about"]["target"] == "build b"
    version = next(r for r in report["rows"] if r["name"] == "version")
    assert {"path": "/result/content/0/text", "old": "release 1.0 (stable)", "new": "release 2.0 (beta)"} in version[
        "changes"
    ]
    # The live tab got the rows as they came, then the region as saved.
    assert 'id="diff-row-' in seen and "release 2.0 (beta)" in seen
    rows = await events(replay.pk)
    assert any(r.get("kind") == "diff" and r["data"]["status"] == "changed" for r in rows)


async def test_the_saved_differences_are_on_the_replays_page_and_read_only_on_its_share():
    user, _, _, original, replay, _ = await replayed_on_build_b()
    version = next(r for r in replay.report["rows"] if r["name"] == "version")
    client = await logged_in(user)
    page = (await client.get(f"/sessions/{replay.pk}/")).content.decode()
    region = differences(page)
    assert region.count('data-status="changed"') == 1 and "release 2.0 (beta)" in region
    assert "Ignore rules" in region and f'href="/sessions/{original.pk}/#ev-{version["seq"]}"' in region
    link = await database_sync_to_async(ShareLink.objects.create)(session=replay, created_by=user)
    shared = (await AsyncClient().get(f"/share/{link.token}/")).content.decode()
    region = differences(shared)
    assert region.count('data-status="changed"') == 1 and "release 2.0 (beta)" in region
    assert (
        "Ignore rules" not in shared and "Edit and resend" not in shared and f"/sessions/{original.pk}/" not in shared
    )
    assert "Edit and resend" in page


async def test_ignore_rules_are_saved_on_the_server_and_the_next_replay_uses_them():
    """Saved on the server, the rows compared again; not by another user."""
    user, _, build_b, original, replay, _ = await replayed_on_build_b()
    client = await logged_in(user)
    stranger = await logged_in(await a_stranger(user))
    response = await stranger.post(f"/sessions/{replay.pk}/differences/ignore/", {"ignore": "/result"})
    assert response.status_code == 404
    assert (await database_sync_to_async(Server.objects.get)(pk=build_b.pk)).replay_ignore == []
    response = await client.post(f"/sessions/{replay.pk}/differences/ignore/", {"ignore": "result/x"})
    assert "must start with /" in response.content.decode()
    assert (await database_sync_to_async(Server.objects.get)(pk=build_b.pk)).replay_ignore == []
    response = await client.post(
        f"/sessions/{replay.pk}/differences/ignore/",
        {"ignore": "/result/content/*/text\n/result/structuredContent/result\n"},
    )
    html = response.content.decode()
    assert 'data-status="changed"' not in html and 'data-state="done"' in html
    assert (await database_sync_to_async(Server.objects.get)(pk=build_b.pk)).replay_ignore == [
        "/result/content/*/text",
        "/result/structuredContent/result",
    ]
    saved = await database_sync_to_async(Session.objects.get)(pk=replay.pk)
    assert set(saved.report["counts"]) == {"same"} and saved.report["ignore"][0] == "/result/content/*/text"

    # The next replay against that server uses its rules.
    build_b = await database_sync_to_async(Server.objects.get)(pk=build_b.pk)
    again, _ = await replay_of(original, build_b, user)
    assert set(again.report["counts"]) == {"same"}


async def test_the_cli_replays_a_sessions_jsonl_export(tmp_path):
    """FILE may be a session's JSONL export: the CLI replays it too."""
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    original = await record_session(user, build_a)
    client = await logged_in(user)
    export = tmp_path / "session.jsonl"
    export.write_bytes(
        b"".join(
            [chunk async for chunk in (await client.get(f"/sessions/{original.pk}/export.jsonl")).streaming_content]
        )
    )
    proc = await database_sync_to_async(mcp)("--replay", str(export), "--", sys.executable, VARIANT, "stdio", "b")
    assert proc.returncode == 5 and "changed  tools/call version" in proc.stdout, proc.stdout + proc.stderr


@database_sync_to_async
def recorded_with_a_secret(
    user, server, *, ask: bool = False, text: str = "hi", answer: dict | None = None, secret_values=("s3cret-value",)
) -> Session:
    """A saved session (no server needed) whose server echoed its own secret in a response
    (`answer`) to an echo of `text`; with `ask`, then a call of ask_name whose question was not
    recorded (a replay asks the person)."""
    from playground.transcripts.models import Event

    session = Session.objects.create(
        server=server,
        server_name="old build",
        owner=user,
        status="ended",
        secret_values=list(secret_values),
        oauth_secret_values=["oauth-tok3n"],
    )
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": text}}}
    answer = answer or {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "key=s3cret-value token=oauth-tok3n"}]},
    }
    steps = [(1, "send", call, {}), (2, "recv", answer, {"reply_to": 1})]
    if ask:
        steps += [
            (3, "send", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask_name"}}, {}),
            (
                4,
                "recv",
                {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Hello, Ada!"}]}},
                {"reply_to": 3},
            ),
        ]
    for seq, dir_, message, extra in steps:
        Event.objects.create(
            session=session,
            seq=seq,
            t=seq / 10,
            dir=dir_,
            method=message.get("method", ""),
            data={"seq": seq, "t": seq / 10, "dir": dir_, "raw": json.dumps(message), "message": message, **extra},
        )
    return session


async def test_the_originals_secrets_stay_masked_on_the_replays_pages():
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    original = await recorded_with_a_secret(user, build_a)
    replay, _ = await replay_of(original, build_a, user)
    assert "s3cret-value" in replay.secret_values and "oauth-tok3n" in replay.oauth_secret_values
    echo = next(r for r in replay.report["rows"] if r.get("name") == "echo")
    assert echo["status"] == "changed"
    link = await database_sync_to_async(ShareLink.objects.create)(session=replay, created_by=user)
    shared = (await AsyncClient().get(f"/share/{link.token}/")).content.decode()
    assert 'data-status="changed"' in shared
    assert "s3cret-value" not in shared and "oauth-tok3n" not in shared
    page = (await (await logged_in(user)).get(f"/sessions/{replay.pk}/")).content.decode()
    assert "oauth-tok3n" not in page  # OAuth values are masked for the owner too


async def test_a_secret_cut_to_length_stays_masked_on_the_replays_pages():
    """A changed value is kept to VALUE_KEPT characters of JSON, a response's raw text to
    RAW_KEPT: a share page masks whole values, so the head of a secret a cut leaves is masked
    where it is cut — in the server's echo of its configured secret, in the recording, and when
    the rows are compared again."""
    secret = "zq-s3cr3t-7788-cut"
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"], env={"API_TOKEN": secret})
    # Each value's JSON text ('"' then the text) is cut 6 characters into the secret.
    said = "b" * (VALUE_KEPT - 7) + secret + " (echoed now)"
    answer = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [
                {"type": "text", "text": "a" * (VALUE_KEPT - 7) + secret + " (then)"},
                {"type": "text", "text": ""},
            ]
        },
    }
    raw = json.dumps(answer)
    answer["result"]["content"][1]["text"] = "c" * (RAW_KEPT - 7 - raw.rindex('""')) + secret
    assert json.dumps(answer).rindex(secret) == RAW_KEPT - 6  # and its raw text 6 characters in
    original = await recorded_with_a_secret(user, build_a, text=said, answer=answer, secret_values=[secret])
    replay, _ = await replay_of(original, build_a, user)
    link = await database_sync_to_async(ShareLink.objects.create)(session=replay, created_by=user)

    async def check(rules: str = "") -> None:
        report = (await database_sync_to_async(Session.objects.get)(pk=replay.pk)).report
        echo = next(r for r in report["rows"] if r.get("name") == "echo")
        text = next(c for c in echo["changes"] if c["path"] == "/result/content/0/text")
        assert echo["status"] == "changed" and text["cut"] and report["ignore"] == rules.split(), rules
        assert text["old"] == '"' + "a" * (VALUE_KEPT - 7) + MASK + CUT
        assert text["new"] == '"' + "b" * (VALUE_KEPT - 7) + MASK + CUT
        assert echo["old_raw"].endswith("c" * 10 + MASK) and secret in echo["new_raw"]  # (not cut: shown whole)
        shared = (await AsyncClient().get(f"/share/{link.token}/")).content.decode()
        assert 'data-status="changed"' in shared and secret[:4] not in shared, rules

    await check()
    rules = "/result/structuredContent\n"
    await (await logged_in(user)).post(f"/sessions/{replay.pk}/differences/ignore/", {"ignore": rules})
    await check(rules)


async def test_rows_are_compared_again_off_the_database_thread():
    """Comparing again diffs every response of two sessions (a megabyte each, at most): not in
    the one database thread every live session saves through. The comparison waits here until
    a query has run meanwhile."""
    from playground.sessions.features.replay import views as replay_views
    from playground.transcripts.models import Event
    from tests.sessions.offthread import computed_off_the_database_thread

    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    original = await recorded_with_a_secret(user, build_a)

    @database_sync_to_async
    def replayed() -> Session:
        row = {
            "status": "changed",
            "kind": "request",
            "method": "tools/call",
            "name": "echo",
            "seq": 1,
            "old_response_seq": 2,
            "new_response_seq": 2,
            "changes": [{"path": "/result/content/0/text", "old": "x", "new": "y"}],
        }
        replay = Session.objects.create(
            server=build_a,
            server_name="build a",
            owner=user,
            status="ended",
            kind=Session.Kind.REPLAY,
            source=original,
            report={"state": "done", "requests": 1, "rows": [row]},
            secret_values=original.secret_values,  # (as start_session gives them)
            oauth_secret_values=original.oauth_secret_values,
        )
        for event in original.events.all():
            Event.objects.create(session=replay, seq=event.seq, t=event.t, dir=event.dir, data=event.data)
        return replay

    replay = await replayed()
    response, count = await computed_off_the_database_thread(
        replay_views.replays,
        "compared_again",
        (await logged_in(user)).post(f"/sessions/{replay.pk}/differences/ignore/", {"ignore": "/result/x"}),
    )
    html = response.content.decode()
    assert count == 2 and 'data-status="same"' in html and 'data-status="changed"' not in html  # one answer, twice


async def test_rows_compared_again_reach_every_tab_of_a_live_replay():
    """The ignore rules' view tells a live replay's worker: the tab open on it shows the new
    comparison, and a tab that connects afterwards gets that one too (not the worker's first)."""
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    original = await recorded_with_a_secret(user, build_a)  # its echo answered otherwise than build a does
    replay = await start_session(build_a, user, replay_of=original)
    open_tab = communicator(replay.pk, user)
    try:
        await open_tab.connect()
        seen = await receive_until(open_tab, 'data-state="done"', "1 request replayed: 1 changed", timeout=60)
        # The view compares the saved rows again: wait for the replayed answer's line (a tab gets
        # only saved rows), as a person reading it would have.
        answer = re.search(r'replayed · <a href="#ev-(\d+)">', seen).group(1)
        if f'id="ev-{answer}"' not in seen:
            await receive_until(open_tab, f'id="ev-{answer}"')
        rules = "/result/content/*/text\n/result/structuredContent\n/result/isError\n"  # all the echo changed
        html = (
            await (await logged_in(user)).post(f"/sessions/{replay.pk}/differences/ignore/", {"ignore": rules})
        ).content.decode()
        assert "1 request replayed: 1 same" in html  # the view's answer, to the tab that asked

        region = await receive_fragment(open_tab, 'id="differences"', "1 request replayed: 1 same")
        assert 'data-status="same"' in region and 'data-status="changed"' not in region

        later_tab = communicator(replay.pk, user)
        try:
            await later_tab.connect()
            region = await receive_fragment(later_tab, 'id="differences"', 'data-state="done"')
            assert "1 request replayed: 1 same" in region and 'data-status="changed"' not in region
        finally:
            await later_tab.disconnect()
    finally:
        await open_tab.disconnect()
        await stop_all()


async def test_a_live_share_of_a_running_replay_gets_its_rows_as_they_come():
    """A share link of a replay still running (waiting for the person, here): its page says it
    is replaying (not "stopped"); its viewer gets the rows done so far, then each row as it
    comes and the region once saved — masked for a share, without the owner's links or rules."""
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    original = await recorded_with_a_secret(user, build_a, ask=True)
    replay = await start_session(build_a, user, replay_of=original)
    owner = communicator(replay.pk, user)
    watching = None
    try:
        await owner.connect()
        card = await receive_until(owner, 'aria-label="Server request"', timeout=60)  # the echo's row is done
        link = await share(replay, user)
        region = differences((await AsyncClient().get(f"/share/{link.token}/")).content.decode())
        assert "replaying…" in region and "stopped" not in region and ENDED_EARLY not in region

        watching = viewer(link.token)
        await watching.connect()
        region = await receive_fragment(watching, 'id="differences"', 'data-method="tools/call"')
        assert 'data-state="running"' in region and region.count('class="diff-row diff-') == 1
        assert "s3cret-value" not in region and "oauth-tok3n" not in region and "key=••••" in region
        await send(
            owner,
            action="answer",
            key=card_key(card),
            result=json.dumps({"action": "accept", "content": {"name": "Ada"}}),
        )
        row = await receive_fragment(watching, 'id="differences-rows" hx-swap-oob="beforeend"', "ask_name")
        assert 'id="diff-row-1"' in row and "Hello, Ada!" in row
        await receive_fragment(watching, 'id="differences-summary"', "replaying · 2 requests replayed")
        region = await receive_fragment(watching, 'id="differences"', 'data-state="done"')
        # (and the question nobody recorded: a request the server sends now, "new")
        assert region.count('class="diff-row diff-') == 3 and 'data-status="new"' in region
        assert "s3cret-value" not in region
        for shown in (row, region):  # a share page shows one session, and acts on nothing
            assert f"/sessions/{original.pk}/" not in shown and "Ignore rules" not in shown
    finally:
        if watching is not None:
            await watching.disconnect()
        await owner.disconnect()
        await stop_all()


@pytest.fixture
def owner(client: Client) -> Any:
    user = get_user_model().objects.create_user("replayer", password="pw")
    client.force_login(user)
    return user


def compare_again(client: Client, replay: Session, rules: list[str]) -> dict[str, Any]:
    """The view's comparison, as saved."""
    assert client.post(f"/sessions/{replay.pk}/differences/ignore/", {"ignore": "\n".join(rules)}).status_code == 200
    return Session.objects.get(pk=replay.pk).report


def _response(session: Session, seq: int, text: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}
    Event.objects.create(
        session=session,
        seq=seq,
        t=0.1,
        dir="recv",
        data={"seq": seq, "t": 0.1, "dir": "recv", "raw": str(message), "message": message},
    )


@pytest.mark.django_db
def test_rows_are_compared_again_from_saved_responses_only(client, owner):
    source = Session.objects.create(server_name="a", owner=owner)
    replay = Session.objects.create(server_name="b", kind=Session.Kind.REPLAY, source=source, owner=owner)
    _response(source, 2, "10:00")
    _response(source, 4, "10:01")
    _response(replay, 12, "11:00")  # the second replayed response: not saved yet (seq 14)
    rows = [
        {
            "kind": "request",
            "method": "tools/call",
            "status": "changed",
            "old_response_seq": 2,
            "new_response_seq": 12,
            "changes": [{"path": "/result/content/0/text"}],
        },
        {
            "kind": "request",
            "method": "tools/call",
            "status": "changed",
            "old_response_seq": 4,
            "new_response_seq": 14,
            "changes": [{"path": "/result/content/0/text"}],
        },
    ]
    replay.report = {"rows": rows}
    replay.save()

    report = compare_again(client, replay, ["/result/content/*/text"])
    saved, pending = report["rows"]
    assert saved["status"] == "same" and not saved.get("changes")  # compared again under the rule
    assert pending["status"] == "changed" and pending["changes"] == rows[1]["changes"]  # left as it was


@pytest.mark.django_db
def test_rows_compared_again_mask_the_original_sessions_oauth_values(client, owner):
    """The original's responses reach the replay's report masked as its owner reads them (as the
    replay's recording did): an OAuth value of the original only is not in the report."""
    token = "tok-only-the-original-had-0123456789"
    source = Session.objects.create(server_name="a", oauth_secret_values=[token], owner=owner)
    replay = Session.objects.create(server_name="b", kind=Session.Kind.REPLAY, source=source, owner=owner)
    _response(source, 2, f"you are {token}")
    _response(replay, 12, "you are someone else")
    replay.report = {
        "rows": [
            {"kind": "request", "method": "tools/call", "status": "same", "old_response_seq": 2, "new_response_seq": 12}
        ]
    }
    replay.save()

    report = compare_again(client, replay, [])
    (row,) = report["rows"]
    assert row["status"] == "changed" and row["old_raw"] and "you are" in row["old_raw"]
    assert token not in str(report) and token not in str(Session.objects.get(pk=replay.pk).report)


@pytest.mark.django_db
def test_recorded_rows_are_read_lazily_and_masked():
    token = "ya29.replayed-secret-token"
    session = Session.objects.create(server_name="s", status="ended", oauth_secret_values=[token])
    Event.objects.bulk_create(
        [
            Event(
                session=session,
                seq=seq,
                t=seq,
                dir="stderr",
                data={"seq": seq, "dir": "stderr", "text": f"line {seq} {token}", "raw": json.dumps(seq)},
            )
            for seq in range(1, 4502)
        ]
    )
    with CaptureQueriesContext(connection) as queries:
        rows = recorded_rows(session)
        assert isinstance(rows, Iterator) and len(queries) == 0  # nothing read yet
        first = next(rows)
    assert first["seq"] == 1 and token not in first["text"] and "••••" in first["text"]
    rest = list(rows)
    assert [r["seq"] for r in rest] == list(range(2, 4502))


def test_changed_strings_are_shown_as_a_word_level_diff_escaped():
    from playground.sessions.features.replay.region import MAX_WORDS, row_view, words

    assert words("release 1.0 (stable)", "release 2.0 (beta)") == [
        ("=", "release "),
        ("-", "1.0"),
        ("+", "2.0"),
        ("=", " ("),
        ("-", "stable"),
        ("+", "beta"),
        ("=", ")"),
    ]
    assert words("a " * MAX_WORDS, "b") is None  # too long: the two values whole
    row = {
        "status": "changed",
        "kind": "request",
        "method": "tools/call",
        "n": 1,
        "changes": [{"path": "/x", "old": "say <b>hi</b>", "new": "say <i>hi</i>"}, {"path": "/n", "old": 1, "new": 2}],
    }
    view = row_view(row, None, owner=False)
    assert view["changes_shown"][0]["words"] and "words" not in view["changes_shown"][1]
    from playground.sessions.features.base import render

    html = render("sessions/features/replay_row.html", {"row": view})
    assert '<del class="diff-was">b</del>' in html and "&lt;" in html and "<b>" not in html and "<i>" not in html
