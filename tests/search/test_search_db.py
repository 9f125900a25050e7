"""Search on the database the suite runs on: SQLite (FTS5) by default, PostgreSQL (tsvector and
GIN) when DATABASE_URL points at one — test_postgresql.py runs this file there too.

Events are saved the way a session saves them (`save_events`), indexed the way the app indexes
them (the deferred indexer, or the search itself catching up), and searched through the page.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from datetime import UTC
from typing import Any
from urllib.parse import urlsplit

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection
from django.urls import reverse

from playground.transcripts.models import Session
from playground.transcripts.recorder import Limits, save_and_index, save_events
from playground.transcripts.search import catch_up, engine, indexer, search
from playground.transcripts.search.checks import check_fts5, has_fts5
from playground.transcripts.search.text import TEXT_CAP, stored_text

pytestmark = pytest.mark.django_db

FLOOD = Limits().batch_events  # a full batch of small events: the recorder's flood


def request(seq: int, method: str, params: dict, rpc_id: int | None = None) -> dict:
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    if rpc_id is not None:
        message["id"] = rpc_id
    return {"seq": seq, "t": seq / 10, "dir": "send", "raw": json.dumps(message), "message": message}


def response(seq: int, rpc_id: int, result: dict, reply_to: int) -> dict:
    message = {"jsonrpc": "2.0", "id": rpc_id, "result": result}
    return {
        "seq": seq,
        "t": seq / 10,
        "dir": "recv",
        "raw": json.dumps(message),
        "message": message,
        "reply_to": reply_to,
    }


def stderr(seq: int, text: str) -> dict:
    return {"seq": seq, "t": seq / 10, "dir": "stderr", "raw": text, "message": None, "text": text}


def weather_rows(city: str, start: int = 1) -> list[dict]:
    return [
        request(start, "tools/call", {"name": "get_weather", "arguments": {"city": city}}, rpc_id=start),
        response(start + 1, start, {"content": [{"type": "text", "text": f"Sunny in {city}, 21.5 C"}]}, start),
        stderr(start + 2, f"Traceback: KeyError 'humidity' for {city}"),
    ]


def user(name: str, **extra):
    return get_user_model().objects.create_user(name, password="pw", **extra)


def session_with(owner, rows: list[dict], name: str = "weather-server", **fields) -> Session:
    session = Session.objects.create(server_name=name, owner=owner, status="ended", **fields)
    if rows:
        save_events(session.pk, rows)
    return session


def hits(results) -> list[tuple[int, int]]:
    return [(group.session.pk, hit.seq) for group in results.groups for hit in group.hits]


def index_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM transcripts_event_search")
        return cursor.fetchone()[0]


def test_the_suite_runs_on_the_database_DATABASE_URL_names():
    """test_postgresql.py runs this file with DATABASE_URL set: its passing means PostgreSQL's
    search only if the settings took the URL (SQLite would pass every other test here too)."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        assert connection.vendor == "sqlite"
        return
    parts = urlsplit(url)
    assert connection.vendor == ("postgresql" if parts.scheme in ("postgres", "postgresql", "pgsql") else parts.scheme)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_database()")
            assert cursor.fetchone()[0].startswith(f"test_{parts.path.lstrip('/')}")  # pytest-django's copy of it


def test_this_database_has_full_text_search():
    assert engine() is not None
    if connection.vendor == "sqlite":
        assert has_fts5() and check_fts5() == []


def test_finds_method_names_text_and_stderr_in_the_users_own_sessions_only():
    alice, eve, staff = user("alice"), user("eve"), user("root", is_staff=True, is_superuser=True)
    mine = session_with(alice, weather_rows("Reykjavik"))
    theirs = session_with(eve, weather_rows("Reykjavik"))
    session_with(None, weather_rows("Reykjavik"))  # ownerless: nobody's
    assert hits(search(alice, "get_weather")) == [(mine.pk, 1)]
    assert hits(search(alice, "reykjavik")) == [(mine.pk, 3), (mine.pk, 2), (mine.pk, 1)]
    assert hits(search(alice, "humidity")) == [(mine.pk, 3)]  # stderr
    assert hits(search(alice, "tools/call")) == [(mine.pk, 1)]  # the method
    assert hits(search(eve, "reykjavik")) == [(theirs.pk, 3), (theirs.pk, 2), (theirs.pk, 1)]
    assert hits(search(staff, "reykjavik")) == []  # staff see all in the admin only
    labels = [hit.label for group in search(alice, "reykjavik").groups for hit in group.hits]
    assert labels == ["stderr", "response", "tools/call"]


def test_words_phrases_and_prefixes_match_as_the_page_says():
    alice = user("alice")
    session = session_with(alice, weather_rows("Reykjavik"))
    assert hits(search(alice, "reyk")) == hits(search(alice, "REYKJAVIK"))  # a prefix, any case
    assert hits(search(alice, '"Sunny in Reykjavik"')) == [(session.pk, 2)]
    assert hits(search(alice, '"in Sunny"')) == []  # a phrase keeps its order
    assert hits(search(alice, '"reyk"')) == []  # quoted: a whole word
    assert hits(search(alice, "sunny humidity")) == []  # every word, in one event
    assert hits(search(alice, "get weather")) == [(session.pk, 1)]


def test_no_query_makes_a_database_error():
    alice = user("alice")
    session_with(alice, weather_rows("Reykjavik"))
    for text in [
        '" OR *',
        "NEAR(a b)",
        "body:x",
        "a:* & !b | c <-> d",
        "'; DROP TABLE transcripts_event; --",
        '\\"',
        "\x00",
        "((((",
        "-x",
        "^start",
        '"unclosed',
        "ü" * 300,
        "AND",
        "NOT reykjavik",
        "*",
        "\ufffd",
        "x²",
        "日本語",
        "1e5",
        "reykjavik:*",
        "'reykjavik'",
    ]:
        results = search(alice, text)  # raises on a syntax error in either database
        assert results.available
    assert len(hits(search(alice, "'reykjavik':*"))) == 3  # the words of the syntax, searched
    assert hits(search(alice, "NOT reykjavik")) == []  # "not" is a word no event has


def test_newest_first_a_page_at_a_time():
    alice = user("alice")
    older = session_with(alice, weather_rows("Oslo") + weather_rows("Oslo", start=4))
    newer = session_with(alice, weather_rows("Oslo"))
    first = search(alice, "oslo", page=4)
    assert hits(first) == [(newer.pk, 3), (newer.pk, 2), (newer.pk, 1), (older.pk, 6)]
    assert [group.session.pk for group in first.groups] == [newer.pk, older.pk]
    second = search(alice, "oslo", before=first.more_before, page=4)
    assert hits(second) == [(older.pk, 5), (older.pk, 4), (older.pk, 3), (older.pk, 2)]
    third = search(alice, "oslo", before=second.more_before, page=4)
    assert hits(third) == [(older.pk, 1)] and third.more_before is None


def test_a_huge_frame_is_searched_by_its_first_characters_only():
    alice = user("alice")
    text = "alpha " + "filler " * 200_000 + "omega"
    session = session_with(alice, [response(1, 1, {"content": [{"type": "text", "text": text}]}, 1)])
    assert hits(search(alice, "alpha")) == [(session.pk, 1)]
    assert hits(search(alice, "omega")) == []
    rows = engine().find(alice.pk, search(alice, "alpha").query, None, 10)
    assert len(rows[0][-1]) <= TEXT_CAP


def test_deleting_a_session_takes_its_index_rows():
    alice = user("alice")
    kept = session_with(alice, weather_rows("Lima"))
    gone = session_with(alice, weather_rows("Lima"))
    catch_up()
    assert index_rows() == 6
    gone.delete()
    assert index_rows() == 3
    assert hits(search(alice, "lima")) == [(kept.pk, 3), (kept.pk, 2), (kept.pk, 1)]


def test_events_saved_before_more_arrive_are_indexed_once():
    """A batch saved again (a retried save: ON CONFLICT DO NOTHING) indexes nothing twice."""
    alice = user("alice")
    session = session_with(alice, weather_rows("Quito"))
    save_events(session.pk, weather_rows("Quito"))
    save_events(session.pk, weather_rows("Quito", start=4))
    assert hits(search(alice, "quito")) == [(session.pk, s) for s in (6, 5, 4, 3, 2, 1)]
    assert index_rows() == 6


def test_the_page_escapes_excerpts_masks_secrets_and_links_to_the_line(client):
    alice, eve = user("alice"), user("eve")
    token = "ya29.secret-access-token-value"
    hostile = '<img src=x onerror="alert(1)"> Nairobi'
    session = session_with(
        alice,
        [
            response(1, 1, {"content": [{"type": "text", "text": hostile}]}, 1),
            stderr(2, f"got token {token} for Nairobi"),
        ],
        oauth_secret_values=[token],
    )
    session_with(eve, weather_rows("Nairobi"), name="eves-server")
    url = reverse("sessions:search")
    assert client.get(url, {"q": "nairobi"}).status_code == 302  # log in first
    client.force_login(alice)
    home = client.get(reverse("registry:home")).content.decode()
    assert re.search(r'<label for="search-sessions">Search sessions</label>', home)
    page = client.get(url, {"q": "nairobi"}).content.decode()
    assert "<img" not in page and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; <mark>Nairobi</mark>" in page
    assert token not in page and "••••" in page
    assert "eves-server" not in page
    assert f'href="/sessions/{session.pk}/?at=2"' in page and f'href="/sessions/{session.pk}/?at=1"' in page
    assert "weather-server" in page and session.started_at.strftime("%Y-%m-%d %H:%M") in page
    empty = client.get(url, {"q": "zanzibar"}).content.decode()
    assert "No event in your sessions matches" in empty


@pytest.mark.django_db(transaction=True)
async def test_indexing_waits_for_a_flood_to_end_and_for_small_batches_to_pause(monkeypatch):
    """The recorder tells the indexer after each save: a full batch (a flood) is indexed once
    no full batch came for QUIET seconds; small ones once none came for SETTLE seconds (a
    session's ordinary traffic is indexed a moment after it, not beside it)."""
    alice = await database_sync_to_async(user)("alice")
    session = await database_sync_to_async(session_with)(alice, [])
    flood = [
        request(seq, "notifications/message", {"level": "info", "data": f"line {seq} of the flood"})
        for seq in range(1, FLOOD + 1)
    ]
    await database_sync_to_async(save_events)(session.pk, flood)
    loop = asyncio.get_running_loop()
    started = loop.time()
    indexer.saved(True)
    task = indexer.INDEXER.task()
    assert task is not None and await database_sync_to_async(index_rows)() == 0
    await asyncio.wait_for(task, 30)
    assert loop.time() - started >= indexer.QUIET * 0.9
    assert await database_sync_to_async(index_rows)() == FLOOD

    await database_sync_to_async(save_events)(session.pk, weather_rows("Bogota", start=FLOOD + 1))
    monkeypatch.setattr(indexer, "SETTLE", 2.0)  # (room for a loaded machine between the saves below)
    started = loop.time()
    indexer.saved(False)
    task = indexer.INDEXER.task()
    for _ in range(3):  # more small batches saved meanwhile: it waits for them to pause
        await asyncio.sleep(0.5)
        assert not task.done() and await database_sync_to_async(index_rows)() == FLOOD
        indexer.saved(False)
    await asyncio.wait_for(task, 30)
    assert loop.time() - started >= 1.5 + 2.0 * 0.9
    assert await database_sync_to_async(index_rows)() == FLOOD + 3
    found = await database_sync_to_async(lambda: hits(search(alice, "bogota")))()
    assert found == [(session.pk, FLOOD + s) for s in (3, 2, 1)]


@pytest.mark.django_db(transaction=True)
async def test_a_batch_full_by_its_characters_is_a_flood_too():
    """The recorder cuts a batch at its events or its characters: three large frames that fill
    one by their size hold indexing back like five hundred small ones."""
    alice = await database_sync_to_async(user)("alice")
    session = await database_sync_to_async(session_with)(alice, [])
    big = [request(seq, "notifications/message", {"level": "info", "data": "x" * 400}) for seq in (1, 2, 3)]
    loop = asyncio.get_running_loop()
    started = loop.time()
    await save_and_index(session.pk, big, limits=Limits(batch_chars=1000))
    task = indexer.INDEXER.task()
    assert task is not None and await database_sync_to_async(index_rows)() == 0
    await asyncio.wait_for(task, 30)
    assert loop.time() - started >= indexer.QUIET * 0.9
    assert await database_sync_to_async(index_rows)() == 3


def test_a_search_that_could_not_index_everything_says_so(client, monkeypatch):
    import playground.transcripts.search as search_module

    alice = user("alice")
    saved, chunk = 1200, engine().CHUNK
    assert chunk < saved
    flood = [
        request(seq, "notifications/message", {"level": "info", "data": f"Accra line {seq}"})
        for seq in range(1, saved + 1)
    ]
    session_with(alice, flood)
    monkeypatch.setattr(search_module, "CATCH_UP_SECONDS", 0)  # one chunk, then it stops
    client.force_login(alice)
    page = client.get(reverse("sessions:search"), {"q": "accra"}).content.decode()
    assert re.search(rf"\b{saved - chunk} recently saved events are not searchable yet", page)
    assert page.count('class="hit hit-send"') == 50 and "Older matches" in page
    monkeypatch.setattr(search_module, "CATCH_UP_SECONDS", 60)
    assert search(alice, "accra").pending == 0 and engine().pending() == 0


def test_the_management_command_indexes_everything_pending():
    from io import StringIO

    from django.core.management import call_command

    alice = user("alice")
    session_with(alice, weather_rows("Lagos") + weather_rows("Lagos", start=4))
    assert engine().pending() == 6
    out = StringIO()
    call_command("search_index", stdout=out)
    assert out.getvalue().startswith("Indexed 6 events in ") and engine().pending() == 0 and index_rows() == 6


def _event_ids_from(first: int) -> None:
    """Make the next saved events' ids start at `first` (a long-lived database's ids)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = 'transcripts_event'", [first - 1])
            if cursor.rowcount == 0:
                cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('transcripts_event', %s)", [first - 1])
        else:
            cursor.execute("SELECT setval(pg_get_serial_sequence('transcripts_event', 'id'), %s)", [first - 1])


def test_older_matches_beyond_two_to_the_31_event_ids(client):
    """`before` is an event id (64 bits), not a seq: past 2**31 the next page still moves on."""
    alice = user("alice")
    _event_ids_from(2**31 + 7)
    session = session_with(alice, [stderr(seq, f"Lusaka line {seq}") for seq in range(1, 61)])
    client.force_login(alice)
    url = reverse("sessions:search")
    first = client.get(url, {"q": "lusaka"}).content.decode()
    before = re.search(r"before=(\d+)", first)
    assert before and int(before.group(1)) > 2**31 and first.count(f"/sessions/{session.pk}/?at=") == 50
    older = client.get(url, {"q": "lusaka", "before": before.group(1)}).content.decode()
    shown = sorted(int(s) for s in re.findall(rf"/sessions/{session.pk}/\?at=(\d+)", older))
    assert shown == list(range(1, 11)) and "Older matches" not in older
    assert client.get(url, {"q": "lusaka", "before": str(2**63)}).status_code == 200  # out of range: page one


def test_a_hit_is_timed_from_the_sessions_clock_origin():
    from datetime import datetime, timedelta

    alice = user("alice")
    origin = datetime(2026, 11, 20, 10, 0, 5, tzinfo=UTC)
    session_with(alice, weather_rows("Harare"), clock_origin=origin)
    (hit,) = search(alice, "humidity").groups[0].hits
    assert hit.at == origin + timedelta(seconds=0.3)


def test_a_chunk_is_bounded_by_the_size_of_its_events_not_only_their_count():
    """Three events of ~3 MB each (a 1.4 MB text, in the raw frame and the parsed message): one
    chunk reads and parses one of them, not all three; small events still go 500 at a time."""
    alice = user("alice")
    big = "harbour " * 180_000
    session_with(alice, [response(seq, seq, {"content": [{"type": "text", "text": big}]}, seq) for seq in (1, 2, 3)])
    assert engine().index_pending() and index_rows() == 1
    assert engine().index_pending() and index_rows() == 2
    session_with(alice, [stderr(seq, f"small {seq}") for seq in range(1, 601)])
    assert engine().index_pending() and index_rows() == 3  # the last big one alone
    assert engine().index_pending() and index_rows() == 503
    assert engine().index_pending() and index_rows() == 603 and not engine().index_pending()


@pytest.mark.django_db(transaction=True)
async def test_the_search_page_catches_up_a_chunk_per_database_call(monkeypatch):
    """Catching up before a search does not hold the database thread (the one every live
    session's saves use): a query made while it runs gets in between two chunks."""
    import threading

    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    import playground.transcripts.search as search_module

    alice = await database_sync_to_async(user)("alice")
    await database_sync_to_async(session_with)(alice, weather_rows("Dakar"))
    backend = engine()
    real = backend.index_pending
    chunks, first_done, queried = [], threading.Event(), threading.Event()

    def index_pending(*args):
        chunks.append(queried.is_set())
        first_done.set()
        if queried.is_set() or len(chunks) > 200:
            return real(*args)
        return True  # "more to do": as a long backlog would say

    monkeypatch.setattr(backend, "index_pending", index_pending)
    monkeypatch.setattr(search_module, "CATCH_UP_SECONDS", 60)
    browser = AsyncClient()
    await browser.aforce_login(alice)
    page = asyncio.create_task(browser.get(reverse("sessions:search"), {"q": "dakar"}))
    assert await asyncio.to_thread(first_done.wait, 20)
    await asyncio.wait_for(sync_to_async(Session.objects.count)(), 20)
    queried.set()
    response = await asyncio.wait_for(page, 60)
    assert response.status_code == 200 and "Dakar" in response.content.decode()
    assert True in chunks and len(chunks) <= 200  # the query ran between two chunks


def test_a_lone_surrogate_or_nul_in_a_message_is_indexed_and_found():
    """A server's "\\ud800" (an unpaired surrogate) or "\\u0000" in its JSON: neither database
    can store them in the index's text; the event is indexed without them, and the rest found."""
    owner = user("surrogate-owner")
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "Quokka \ud800 and \x00 nul"}]},
    }
    row = {"seq": 1, "t": 0.1, "dir": "recv", "raw": json.dumps(message), "message": message}
    session_with(owner, [row])
    while engine().index_pending():
        pass
    assert engine().pending() == 0
    assert [hit.seq for group in search(owner, "quokka").groups for hit in group.hits] == [1]


def test_the_backlog_shown_to_a_person_counts_only_their_own_events(client, monkeypatch):
    """ "Not searchable yet" is the person's own backlog: another user's flood waiting to be indexed
    is neither shown nor counted on their page (it told bob how much alice had just saved)."""
    import playground.transcripts.search as search_module

    alice, bob = user("alice"), user("bob")
    session_with(bob, weather_rows("Hanoi"))
    catch_up()
    assert engine().CHUNK == 500  # a search below indexes one chunk: 2400 outlast four of them
    flood = [
        request(seq, "notifications/message", {"level": "info", "data": f"Hanoi line {seq}"}) for seq in range(1, 2401)
    ]
    session_with(alice, flood)
    monkeypatch.setattr(search_module, "CATCH_UP_SECONDS", 0)  # one chunk a search, then it stops
    client.force_login(bob)
    url = reverse("sessions:search")
    page = client.get(url, {"q": "hanoi"}).content.decode()
    assert "not searchable yet" not in page  # bob has nothing pending
    assert page.count('class="hit ') == 3
    session_with(bob, weather_rows("Hanoi", start=4))
    assert search(bob, "hanoi").pending == 3
    page = client.get(url, {"q": "hanoi"}).content.decode()
    assert re.search(r"\b3 recently saved events are not searchable yet", page)
    assert engine().pending() > 3  # alice's flood was still there
    assert search(alice, "hanoi").pending == engine().pending(alice.pk) > 0


def _work(run) -> int:
    """What the database did for `run()`: on SQLite the VM's steps (a progress handler, FTS5's own
    statements on its tables included), on PostgreSQL the rows every plan node produced or
    discarded (EXPLAIN ANALYZE of each query)."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:  # one b-tree segment, whatever the table's history: a term's
            cursor.execute("INSERT INTO transcripts_event_search (transcripts_event_search) VALUES ('optimize')")
        steps = [0]  # lookup is one probe, and what is left to grow is rows read

        def step() -> int:
            steps[0] += 1
            return 0

        connection.ensure_connection()
        connection.connection.set_progress_handler(step, 10)
        try:
            run()
        finally:
            connection.connection.set_progress_handler(None, 10)
        return steps[0]
    from django.test.utils import CaptureQueriesContext

    with connection.cursor() as cursor:  # the statistics autovacuum keeps: the plan production gets
        cursor.execute("ANALYZE")
    with CaptureQueriesContext(connection) as captured:
        run()
    rows = 0

    def walk(node: dict) -> None:
        nonlocal rows
        rows += (
            node.get("Actual Rows", 0)
            + node.get("Rows Removed by Filter", 0)
            + node.get("Rows Removed by Index Recheck", 0)
            + node.get("Rows Removed by Join Filter", 0)
        ) * node.get("Actual Loops", 1)
        for child in node.get("Plans", []):
            walk(child)

    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            if query["sql"].lstrip().upper().startswith("SELECT"):
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query["sql"])
                plan = cursor.fetchone()[0]
                walk((json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"])
    return rows


def test_a_search_does_no_work_on_another_users_matches():
    """The owner is in the index: bob's query reaches his own rows only, so alice's thousands of
    events holding the same word cost it nothing (before, each one was found, joined to its
    session and dropped by owner: the work — and the time bob saw — grew with alice's data)."""
    alice, bob = user("alice"), user("bob")
    mine = session_with(bob, weather_rows("Windhoek"))
    work = {}
    for saved, total in ((0, 300), (300, 3000)):  # alice's matching events: 300, then 3000
        session_with(alice, [stderr(seq, f"Windhoek weather line {seq}") for seq in range(saved + 1, total + 1)])
        catch_up(60)
        for text in ("windhoek", '"windhoek"', "windh weath"):
            assert search(bob, text).groups[0].session == mine
        work[total] = sum(_work(lambda text=text: search(bob, text)) for text in ("windhoek", '"windhoek"'))
    assert work[3000] <= work[300] * 1.2, work  # not ~10x: alice's rows are never read


def _old_session(owner, rows: list[dict]) -> Any:
    """A session made as the schema is now (an older one: the model of today has more columns)."""
    from django.db.migrations.loader import MigrationLoader

    state = MigrationLoader(connection).project_state(("transcripts", "0010_session_schema_problems"))
    session = state.apps.get_model("transcripts", "Session").objects.create(
        server_name="weather-server", owner_id=owner.pk, status="ended"
    )
    save_events(session.pk, rows)
    return session


def _migrate(target: str | None) -> None:
    """To transcripts' `target`, or (None) to every app's latest: going back to 0010 also unapplies
    the apps that depend on later transcripts migrations (capture), which must come back too."""
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("transcripts", target)] if target else executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_migration_puts_the_owner_into_rows_indexed_before_it():
    """Rows indexed before migration 0011 (the text without its owner) are rewritten by it: they
    stay searchable by their owner, by nobody else, without being indexed again; undoing it
    and doing it again leaves the same."""
    alice, bob = user("alice"), user("bob")
    _migrate("0010_session_schema_problems")
    mine = _old_session(alice, weather_rows("Asmara"))
    theirs = _old_session(bob, weather_rows("Asmara"))
    with connection.cursor() as cursor:  # indexed the way 0008's index was filled
        cursor.execute("SELECT id, session_id, data FROM transcripts_event ORDER BY id")
        for event_id, _session, data in cursor.fetchall():
            body = stored_text(data)
            if connection.vendor == "sqlite":
                cursor.execute("INSERT INTO transcripts_event_search (rowid, body) VALUES (%s, %s)", [event_id, body])
            else:
                cursor.execute(
                    "INSERT INTO transcripts_event_search (event_id, body, words) VALUES "
                    "(%s, %s, to_tsvector('simple'::regconfig, %s))",
                    [event_id, body, body],
                )
                cursor.execute("DELETE FROM transcripts_event_search_queue")
    for _ in range(2):
        _migrate(None)  # (0011, and the migrations after it)
        assert engine().pending() == 0 and index_rows() == 6
        assert hits(search(alice, "asmara")) == [(mine.pk, 3), (mine.pk, 2), (mine.pk, 1)]
        assert hits(search(bob, '"sunny in asmara"')) == [(theirs.pk, 2)]
        _migrate("0010_session_schema_problems")
        assert index_rows() == 6
    _migrate(None)
    Session.objects.filter(pk=theirs.pk).delete()  # the delete trigger came back with the table
    assert index_rows() == 3 and hits(search(bob, "asmara")) == []
