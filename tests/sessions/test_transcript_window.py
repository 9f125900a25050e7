"""A line opened from a search (`/sessions/N/?at=SEQ`) in a session longer than the page's
window: the page shows the events around it, and the websocket's replay on every connect shows
the same window instead of replacing it with the latest lines."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from playground.sessions.fragments import lines
from playground.sessions.protocol import group_name
from playground.sessions.routing import websocket_urlpatterns
from playground.sessions.transcript_window import REPLAY_WINDOW, seq_param, transcript_chunk, transcript_window
from playground.transcripts.models import Session, ShareLink
from playground.transcripts.recorder import save_events
from tests.sessions.helpers import receive_until

TOTAL = 2500  # longer than the window (REPLAY_WINDOW = 1000)


def rows(first: int, last: int) -> list[dict]:
    return [
        {
            "seq": seq,
            "t": seq / 100,
            "dir": "recv",
            "raw": "{}",
            "message": {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": f"event {seq}"},
            },
        }
        for seq in range(first, last + 1)
    ]


def long_session(username: str = "alice") -> Session:
    owner = get_user_model().objects.create_user(username, password="pw")
    session = Session.objects.create(server_name="chatty", owner=owner, status="ended")
    save_events(session.pk, rows(1, TOTAL))
    return session


def line_ids(html: str) -> list[int]:
    return [int(seq) for seq in re.findall(r'<details class="ev[^"]*" id="ev-(\d+)"', html)]


@pytest.mark.django_db
def test_the_window_is_around_the_line_or_the_latest():
    session = long_session()
    assert REPLAY_WINDOW < TOTAL
    latest = transcript_window(session.pk)
    assert [r["seq"] for r in latest.rows] == list(range(TOTAL - REPLAY_WINDOW + 1, TOTAL + 1)) and latest.latest
    early = transcript_window(session.pk, 100)  # few events before it: the window fills up after it
    assert [r["seq"] for r in early.rows] == list(range(1, REPLAY_WINDOW + 1))
    assert not early.latest and early.total == TOTAL
    middle = transcript_window(session.pk, 1200)
    assert (middle.first_seq, middle.last_seq, middle.latest) == (701, 1700, False)
    late = transcript_window(session.pk, TOTAL - 10)
    assert (late.first_seq, late.last_seq, late.latest) == (TOTAL - REPLAY_WINDOW + 1, TOTAL, True)
    beyond = transcript_window(session.pk, TOTAL + 50)
    assert (beyond.first_seq, beyond.last_seq, beyond.latest) == (TOTAL - REPLAY_WINDOW + 1, TOTAL, True)
    for around in (1, 100, 499, 500, 501, 1200, TOTAL - 500, TOTAL - 10, TOTAL + 50):  # the chunks' own window
        for size in (REPLAY_WINDOW, 7, 1):
            window, chunk = (
                transcript_window(session.pk, around, size),
                transcript_chunk(session.pk, around=around, limit=size),
            )
            assert (window.rows, window.latest) == (chunk.rows, not chunk.more_after), (around, size)
    assert [seq_param(v) for v in ("12", "0", "-3", "x", None, "1e3", str(2**40))] == [
        12,
        None,
        None,
        None,
        None,
        None,
        None,
    ]


@pytest.mark.django_db
def test_the_page_shows_and_marks_the_line(client):
    session = long_session()
    client.force_login(session.owner)
    page = client.get(reverse("sessions:detail", args=[session.pk]), {"at": 100}).content.decode()
    assert line_ids(page) == list(range(1, REPLAY_WINDOW + 1))
    socket = f"/ws/sessions/{session.pk}/?shown={TOTAL}.{REPLAY_WINDOW}&amp;around=100"  # (what its lines hold)
    assert 'data-target="ev-100"' in page and f'hx-ws:connect="{socket}"' in page
    assert f"Events 1–{REPLAY_WINDOW} of {TOTAL}, around event 100: newer events are not shown here." in page
    latest = client.get(reverse("sessions:detail", args=[session.pk])).content.decode()
    assert line_ids(latest) == list(range(TOTAL - REPLAY_WINDOW + 1, TOTAL + 1)) and "data-target" not in latest
    # The note over the latest lines, as the socket's replay has it (the socket may not send it again).
    assert f'<p class="older">{TOTAL} events: the last {REPLAY_WINDOW} here;' in latest
    for bad in ("abc", "-1"):  # a bad ?at= is the ordinary page
        assert line_ids(
            client.get(reverse("sessions:detail", args=[session.pk]), {"at": bad}).content.decode()
        ) == line_ids(latest)
    get_user_model().objects.create_user("eve", password="pw")
    client.login(username="eve", password="pw")
    assert client.get(reverse("sessions:detail", args=[session.pk]), {"at": 100}).status_code == 404


def communicator(session: Session, query: str = "") -> WebsocketCommunicator:
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/sessions/{session.pk}/{query}")
    comm.scope["user"] = session.owner
    return comm


async def replay(comm: WebsocketCommunicator) -> str:
    """Everything the connect sends, up to the state strip (sent after the lines)."""
    received = []
    while 'id="session-state"' not in (received[-1] if received else ""):
        received.append(await comm.receive_from(20))
    return "".join(received)


@pytest.mark.django_db(transaction=True)
async def test_the_replay_on_connect_keeps_the_window_and_no_live_line_follows_an_old_one():
    session = await database_sync_to_async(long_session)()
    comm = communicator(session, "?around=100")
    connected, _ = await comm.connect()
    assert connected
    sent = await replay(comm)
    assert line_ids(sent) == list(range(1, REPLAY_WINDOW + 1))
    assert "around event 100" in sent and 'hx-swap-oob="innerHTML"' in sent
    # A line saved now goes to every tab of the session; this one shows older events: it is not
    # appended there (it would read as coming right after event 1000). The state still comes.
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    await layer.group_send(
        group_name(session.pk),
        {"type": "session.lines", "frames": lines.transcript_append_frames(rows(TOTAL + 1, TOTAL + 1))},
    )
    await layer.group_send(group_name(session.pk), {"type": "session.state", "state": session.state()})
    assert 'id="session-state"' in await comm.receive_from(20)
    await comm.disconnect()

    latest = communicator(session)  # the ordinary page gets the latest, and live lines
    await latest.connect()
    assert line_ids(await replay(latest)) == list(range(TOTAL - REPLAY_WINDOW + 1, TOTAL + 1))
    await layer.group_send(
        group_name(session.pk),
        {"type": "session.lines", "frames": lines.transcript_append_frames(rows(TOTAL + 1, TOTAL + 1))},
    )
    assert line_ids(await latest.receive_from(20)) == [TOTAL + 1]
    await latest.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_socket_opened_by_a_page_that_holds_the_window_does_not_send_its_lines_again():
    """The page was rendered with the window (its socket's `?shown=`, the window's mark): while no
    event came since, the connect sends the state and not 1,000 lines rendered a second time; once
    one has come (or for a page that does not say), it sends the window as before."""
    session = await database_sync_to_async(long_session)()
    page = communicator(session, f"?shown={TOTAL}.{TOTAL}")
    assert (await page.connect())[0]
    sent = await replay(page)
    assert line_ids(sent) == [] and "transcript-lines" not in sent
    await page.disconnect()
    await database_sync_to_async(save_events)(session.pk, rows(TOTAL + 1, TOTAL + 1))
    for query in (f"?shown={TOTAL}.{TOTAL}", ""):
        comm = communicator(session, query)
        assert (await comm.connect())[0]
        assert line_ids(await replay(comm)) == list(range(TOTAL + 2 - REPLAY_WINDOW, TOTAL + 2))
        await comm.disconnect()


def share_viewer(token: str, query: str = "") -> WebsocketCommunicator:
    return WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/share/{token}/{query}")


@pytest.mark.django_db(transaction=True)
async def test_a_share_page_holds_the_latest_window_and_its_socket_does_not_send_it_again():
    """A share page is served with the latest window under the note the replay puts over it (its
    own export's link), and says what its lines hold to its socket: while no event came since,
    the socket's connect sends the state without the lines; for a stale mark or none, the window."""
    session = await database_sync_to_async(long_session)()
    link = await database_sync_to_async(ShareLink.objects.create)(session=session, created_by=session.owner)
    page = (await database_sync_to_async(Client().get)(reverse("sessions:share_page", args=[link.token]))).content
    page = page.decode()
    assert line_ids(page) == list(range(TOTAL - REPLAY_WINDOW + 1, TOTAL + 1))
    export = reverse("sessions:share_jsonl", args=[link.token])
    assert f'<p class="older">{TOTAL} events: the last {REPLAY_WINDOW} here;' in page and f'href="{export}"' in page
    mark = (await database_sync_to_async(transcript_window)(session.pk)).mark
    assert mark == f"{TOTAL}.{TOTAL}"
    held = share_viewer(link.token, f"?shown={mark}")
    assert (await held.connect())[0]
    sent = await receive_until(held, 'id="session-state"', "Snapshot")  # (an ended session's share)
    assert line_ids(sent) == [] and "transcript-lines" not in sent
    await held.disconnect()
    for query in (f"?shown={TOTAL - 1}.{TOTAL - 1}", ""):
        comm = share_viewer(link.token, query)
        assert (await comm.connect())[0]
        sent = await receive_until(comm, 'id="session-state"', "Snapshot")
        assert line_ids(sent) == list(range(TOTAL - REPLAY_WINDOW + 1, TOTAL + 1))
        assert f'href="{export}"' in sent
        await comm.disconnect()
