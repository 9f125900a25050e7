"""The transcript beyond the page's window (views/transcript_chunks.py): chunks of lines by seq and
the filter's matches over the whole session, for the owner and for a share link, checked and
masked as the pages are."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.registry.models import Server
from playground.sessions.transcript_window import CHUNK, REPLAY_WINDOW
from playground.transcripts.models import Session, ShareLink
from playground.transcripts.recorder import save_events

pytestmark = pytest.mark.django_db

TOTAL = 1500
SECRET = "sk-live-window-0123456789"
EARLY = 7  # the event that names the city (and echoes the secret)


def row(seq: int) -> dict:
    text = f"event {seq}" + (f" Timbuktu {SECRET}" if seq == EARLY else "")
    message = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": text}}
    return {"seq": seq, "t": seq / 100, "dir": "recv", "raw": "{}", "message": message}


def make_session(username: str, total: int = TOTAL) -> Session:
    owner = get_user_model().objects.create_user(username, password="pw")
    server = Server.objects.create(
        name="s", transport="http", url="http://127.0.0.1:1/mcp", headers={"X-Api-Key": SECRET}, owner=owner
    )
    session = Session.objects.create(
        server=server, server_name="s", owner=owner, status="ended", secret_values=server.to_config().secret_values()
    )
    save_events(session.pk, [row(seq) for seq in range(1, total + 1)])
    return session


def seqs(html: str) -> list[int]:
    return [int(seq) for seq in re.findall(r'<details class="ev[^"]*" id="ev-(\d+)"', html)]


@pytest.fixture
def session(client):
    session = make_session("alice")
    client.force_login(session.owner)
    return session


def lines(client, url: str, **params) -> dict:
    response = client.get(url, params)
    assert response.status_code == 200, response.status_code
    data = response.json()
    assert seqs(data["html"]) == (list(range(data["first"], data["last"] + 1)) if data["first"] else [])
    return data


def test_chunks_reach_every_line_before_after_and_around(client, session):
    url = reverse("sessions:lines", args=[session.pk])
    latest = lines(client, url)
    assert (latest["first"], latest["last"], latest["more_before"], latest["more_after"]) == (
        TOTAL - CHUNK + 1,
        TOTAL,
        True,
        False,
    )
    # Scrolling up from the latest reaches the first event, each chunk just before the last one.
    first, chunks = latest["first"], 0
    while True:
        chunk = lines(client, url, before=first, limit=400)
        assert chunk["last"] == first - 1 and chunk["more_after"]
        first, chunks = chunk["first"], chunks + 1
        if not chunk["more_before"]:
            break
    assert first == 1 and chunks == -(-(TOTAL - CHUNK) // 400)
    assert 'data-method="notifications/message"' in lines(client, url, before=2)["html"]
    later = lines(client, url, after=100, limit=50)
    assert (later["first"], later["last"], later["more_before"], later["more_after"]) == (101, 150, True, True)
    end = lines(client, url, after=TOTAL - 10)
    assert (end["first"], end["last"], end["more_after"]) == (TOTAL - 9, TOTAL, False)
    around = lines(client, url, around=EARLY, limit=100)
    assert (around["first"], around["last"], around["more_before"], around["more_after"]) == (1, 100, False, True)
    # Bounds: at most REPLAY_WINDOW lines; nothing beyond the ends; bad numbers are ignored.
    assert lines(client, url, limit=10**6)["first"] == TOTAL - REPLAY_WINDOW + 1
    assert lines(client, url, before=1)["first"] is None
    assert lines(client, url, after=TOTAL)["first"] is None
    assert lines(client, url, before="x", limit="-3")["first"] == TOTAL - CHUNK + 1


def test_only_the_owner_reads_chunks_and_matches(client, session):
    urls = [reverse("sessions:lines", args=[session.pk]), reverse("sessions:find", args=[session.pk])]
    assert all(client.get(url, {"q": "timbuktu"}).status_code == 200 for url in urls)
    client.logout()
    assert all(client.get(url, {"q": "timbuktu"}).status_code == 302 for url in urls)  # log in first
    get_user_model().objects.create_user("eve", password="pw")
    client.login(username="eve", password="pw")
    assert all(client.get(url, {"q": "timbuktu"}).status_code == 404 for url in urls)


def test_the_filter_finds_an_early_event_of_this_session_only(client, session):
    other = Session.objects.create(server_name="other", owner=session.owner, status="ended")
    save_events(other.pk, [row(EARLY)])
    found = client.get(reverse("sessions:find", args=[session.pk]), {"q": "timbukt"}).json()
    assert [hit["seq"] for hit in found["hits"]] == [EARLY] and found["available"] and not found["more_before"]
    assert (
        "<mark>Timbukt</mark>u" in found["hits"][0]["excerpt"] and found["hits"][0]["label"] == "notifications/message"
    )
    assert client.get(reverse("sessions:find", args=[session.pk]), {"q": "nowhere"}).json()["hits"] == []
    # A page of matches at a time, the newest first, then older ones with `before`.
    many = client.get(reverse("sessions:find", args=[session.pk]), {"q": "event"}).json()
    assert len(many["hits"]) == 50 and many["hits"][0]["seq"] == TOTAL and many["more_before"]
    older = client.get(reverse("sessions:find", args=[session.pk]), {"q": "event", "before": many["more_before"]})
    assert older.json()["hits"][0]["seq"] == TOTAL - 50


def test_a_share_reads_its_own_session_masked_and_nothing_once_revoked(client, session):
    link = ShareLink.objects.create(session=session, created_by=session.owner)
    client.logout()
    url = reverse("sessions:share_lines", args=[link.token])
    chunk = lines(client, url, around=EARLY, limit=20)
    assert f"Timbuktu {SECRET}" not in chunk["html"] and "Timbuktu" in chunk["html"] and EARLY in seqs(chunk["html"])
    assert "Edit and resend" not in chunk["html"]
    found = client.get(reverse("sessions:share_find", args=[link.token]), {"q": "timbuktu"}).json()
    assert [hit["seq"] for hit in found["hits"]] == [EARLY] and SECRET not in found["hits"][0]["excerpt"]
    # The owner's other session is not reached through this link.
    other = make_session("bob", total=10)
    assert (
        client.get(reverse("sessions:share_find", args=[link.token]), {"q": "event"}).json()["hits"][-1]["seq"] > 10
        and other.pk != session.pk
    )
    link.revoked_at = link.created
    link.save()
    assert client.get(url).status_code == 404
    assert client.get(reverse("sessions:share_find", args=[link.token]), {"q": "timbuktu"}).status_code == 404
    assert client.get(reverse("sessions:share_lines", args=["not-a-token"])).status_code == 404


def test_a_chunk_around_an_event_holds_it_whatever_the_lines_before_it_weigh(client):
    """The page opens a match with `around`: the chunk is cut to its character budget from that
    event outwards, so heavy lines before it cannot crowd it out."""
    owner = get_user_model().objects.create_user("heavy", password="pw")
    server = Server.objects.create(name="s", transport="http", url="http://127.0.0.1:1/mcp", owner=owner)
    session = Session.objects.create(server=server, server_name="s", owner=owner, status="ended")
    heavy = [{**row(seq), "raw": "x" * 60_000} for seq in range(1, 300)]
    save_events(session.pk, [*heavy, row(300), *[row(seq) for seq in range(301, 400)]])
    client.force_login(owner)
    chunk = lines(client, reverse("sessions:lines", args=[session.pk]), around=300, limit=2 * CHUNK)
    assert chunk["first"] <= 300 <= chunk["last"]
    assert chunk["more_before"]  # the heavy lines that did not fit are asked for next


def test_a_share_viewer_typing_does_not_make_the_server_index_the_backlog_on_every_keystroke(
    client, session, monkeypatch
):
    """A flood goes on while a share's viewer types: each keystroke a request (the page's debounce
    aside). The backlog is indexed first once per turn (search.SHARE_CATCH_UPS), not per keystroke;
    what is indexed is found meanwhile, the rest is reported pending, and found on the next turn."""
    from playground.transcripts import search

    link = ShareLink.objects.create(session=session, created_by=session.owner)
    client.logout()
    search.catch_up(budget=60)  # the session's events so far are indexed: a backlog is the flood's
    backend = search.engine()
    indexed = []  # each index_pending's answer: whether it indexed a chunk (one a catch-up here)
    index_pending = backend.index_pending

    def counting(*args, **kwargs):
        more = index_pending(*args, **kwargs)
        indexed.append(more)
        return more

    monkeypatch.setattr(backend, "index_pending", counting)
    now = [1000.0]
    monkeypatch.setattr(search.SHARE_CATCH_UPS, "clock", lambda: now[0])
    url = reverse("sessions:share_find", args=[link.token])
    word = "Zanzibar"
    typed = []
    for count in range(1, len(word) + 1):  # a flood's next events saved, then a keystroke
        seq = TOTAL + count
        message = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": f"{word} {seq}"}}
        save_events(session.pk, [{"seq": seq, "t": seq / 100, "dir": "recv", "raw": "{}", "message": message}])
        typed.append(client.get(url, {"q": word[:count]}).json())
        now[0] += 0.2
    assert indexed.count(True) == 1, f"{indexed.count(True)} catch-ups indexed a backlog for {len(word)} keystrokes"
    assert [hit["seq"] for hit in typed[0]["hits"]] == [TOTAL + 1] and not typed[0]["pending"]
    assert [hit["seq"] for hit in typed[-1]["hits"]] == [TOTAL + 1] and typed[-1]["pending"]
    now[0] += search.SHARE_CATCH_UP_EVERY  # its next turn: the backlog indexed, every event found
    found = client.get(url, {"q": word}).json()
    assert [hit["seq"] for hit in found["hits"]] == list(range(TOTAL + len(word), TOTAL, -1)) and not found["pending"]
    # The owner's own filter is not the share's: it indexes what is pending every time.
    client.force_login(session.owner)
    save_events(session.pk, [row(TOTAL + 100)])
    assert (
        client.get(reverse("sessions:find", args=[session.pk]), {"q": "event"}).json()["hits"][0]["seq"] == TOTAL + 100
    )
