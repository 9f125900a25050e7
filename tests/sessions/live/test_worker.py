"""The worker's life against real servers: it connects as the server's settings say, ends cleanly
when the server crashes, when it fails itself, when it is stopped while connecting or at once."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from channels.db import database_sync_to_async

from playground.sessions.live.shutdown import PROCESS_STOPPED
from playground.sessions.live.worker import SessionWorker, start_session
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Session
from tests.conftest import PEERS
from tests.sessions.helpers import communicator, events, live_tab, make_user_and_server, receive_until, send, watch

pytestmark = pytest.mark.django_db(transaction=True)


async def test_crashing_server_ends_the_session_with_the_transcript_saved():
    script = "import sys; sys.stdin.readline(); print('not json'); sys.stderr.write('dying\\n'); sys.exit(3)"
    user, server = await make_user_and_server(command=sys.executable, args=["-c", script])
    session, rows, _ = await watch(await start_session(server, user), user, "status-failed")
    assert session.status == "failed" and "exited with code 3" in session.end_reason
    assert any(r["dir"] == "recv" and r["raw"] == "not json" and r["parse_error"] for r in rows), rows
    assert any(r["dir"] == "stderr" and r["text"] == "dying" for r in rows)


async def test_the_protocol_version_set_on_the_server_is_the_one_offered():
    """A server set to offer 2025-03-26: the initialize frame offers it, the SDK server (which
    knows it) agrees, and the page shows the version in use."""
    user, server = await make_user_and_server(protocol_version="2025-03-26")
    session, rows, seen = await watch(await start_session(server, user), user, "status-connected", 'id="catalogue"')
    sent = [r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "initialize"]
    offered = [json.loads(r["raw"]) for r in sent]
    answered = [json.loads(r["raw"]) for r in rows if r["dir"] == "recv" and r.get("reply_to") == sent[0]["seq"]]
    assert [m["params"]["protocolVersion"] for m in offered] == ["2025-03-26"]
    assert answered[0]["result"]["protocolVersion"] == "2025-03-26" == session.protocol_version
    assert "2025-03-26" in seen


@pytest.mark.django_db(transaction=True)
async def test_a_worker_that_fails_ends_its_session_with_every_event_saved(monkeypatch):
    """An exception inside the worker (here: listing the catalogue) fails the session cleanly:
    the server is stopped, the reason is noted, and everything recorded is saved."""

    async def broken(self) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(SessionWorker, "refresh_catalogue", broken)
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    worker = WORKERS[session.pk]
    await worker._task
    saved = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    rows = await events(session.pk)
    assert (saved.status, saved.end_reason, saved.worker_channel) == (
        "failed",
        "worker error: RuntimeError('boom')",
        "",
    )
    assert [r["seq"] for r in rows] == list(range(1, worker.tap.seq + 1)) == list(range(1, saved.event_count + 1))
    assert any(r.get("kind") == "error" and "worker error" in r["text"] for r in rows)
    assert rows[-1]["kind"] == "closed" and session.pk not in WORKERS  # the server was stopped after


@pytest.mark.django_db(transaction=True)
async def test_stopping_a_worker_that_is_still_connecting_ends_its_session_with_the_reason():
    """stop(reason) in the middle of the handshake (a server that reads and never answers) does not
    wait out the request timeout: the connection is closed and the session ends with the reason."""
    user, server = await make_user_and_server(args=["-c", "import sys; sys.stdin.read()"])
    session = await start_session(server, user)
    worker = WORKERS[session.pk]
    async with asyncio.timeout(20):
        while not worker.tap._open:  # `initialize` is sent, awaiting its answer
            await asyncio.sleep(0.01)
        await worker.stop(PROCESS_STOPPED)
    saved = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    rows = await events(session.pk)
    assert (saved.status, saved.end_reason, saved.worker_channel) == ("ended", PROCESS_STOPPED, "")
    assert [r["seq"] for r in rows] == list(range(1, worker.tap.seq + 1))
    assert [(r.get("message") or {}).get("method") for r in rows if r["dir"] == "send"][0] == "initialize"
    assert any(r["dir"] == "note" and r["text"] == f"ending the session: {PROCESS_STOPPED}" for r in rows)
    assert rows[-1]["kind"] == "closed" and session.pk not in WORKERS


@pytest.mark.django_db(transaction=True)
async def test_stopping_a_worker_at_once_after_its_start_ends_its_session():
    """Its task had not run a step: cancelled then, it skipped its cleanup (the session stayed
    "connecting", the worker listed as live in its process)."""
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    await WORKERS[session.pk].stop("stopped at once")
    saved = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    assert (saved.status, saved.end_reason, saved.worker_channel) == ("ended", "stopped at once", "")
    assert session.pk not in WORKERS


async def test_an_ended_session_keeps_what_it_learnt_of_the_server():
    async with live_tab() as (_, session, comm):
        await send(comm, action="call_tool", name="add", **{"args.a": "2", "args.b": "40"})
        await receive_until(comm, 'aria-label="Result"')
    rows = await events(session.pk)
    session = await database_sync_to_async(Session.objects.get)(pk=session.pk)
    assert session.status == "ended" and session.worker_channel == "" and session.event_count >= len(rows)
    assert session.era == "legacy" and session.protocol_version == "2025-11-25"
    assert session.server_info["name"] == "sdk-peer"


async def test_a_call_from_a_tab_in_this_process_is_written_at_once_unless_a_command_waits_before_it():
    """`deliver` of a call with the command loop idle starts it in the tab's turn of the loop: its
    request is on the server's stdin before `deliver` returns. With a command still waiting, the
    call waits behind it, as every command does (in order)."""
    async with live_tab() as (_user, session, _comm):
        worker = WORKERS[session.pk]
        while not worker._idle:  # (the tab's sync may still be in hand)
            await asyncio.sleep(0.01)
        sent: list[str] = []
        worker.tap.subscribe(lambda event: sent.append(event.method or "") if event.dir == "send" else None)
        worker.deliver({"command": "ping", "call_id": "now"})
        assert sent == ["ping"]  # written within deliver
        worker.deliver({"command": "disconnect"})
        worker.deliver({"command": "ping", "call_id": "later"})
        assert sent == ["ping"]  # behind the disconnect, which is handled first: the second ping is never sent
        await asyncio.wait_for(worker._task, 20)
        assert sent.count("ping") == 1


async def test_lists_announced_as_changed_are_shown_only_when_they_did_change(monkeypatch):
    """`list_changed` refreshes the lists; when they are the same (a server may announce a change
    it did not make), nothing is saved, shown or handed to the features: every tab's catalogue
    would be swapped for the same one. A new tool (the growing peer's `grow`) is shown; the page's
    own Refresh shows the lists whatever they are."""
    user, server = await make_user_and_server(command=sys.executable, args=[str(PEERS / "growing_server.py")])
    session = await start_session(server, user)
    tab = communicator(session.pk, user)
    try:
        worker = WORKERS[session.pk]
        await tab.connect()
        await receive_until(tab, 'id="catalogue"')  # the start's refresh has shown its lists...
        # ...and is over once one more has run (refreshes take turns), finding the same lists.
        await worker.refresh_catalogue(announced=True)
        shown: list[list[str]] = []
        handed_on: list[int] = []
        broadcast = worker.audience.broadcast

        async def seen(message: dict) -> None:
            if message.get("type") == "session.catalogue":
                shown.append([tool["name"] for tool in message["catalogue"]["tools"]])
            await broadcast(message)

        monkeypatch.setattr(worker.audience, "broadcast", seen)
        changed = worker.features.catalogue_changed
        monkeypatch.setattr(worker.features, "catalogue_changed", lambda: (handed_on.append(1), changed())[1])
        saved = await database_sync_to_async(lambda: Session.objects.get(pk=session.pk).catalogue)()

        async def lists_sent() -> int:
            return sum((r.get("message") or {}).get("method") == "tools/list" for r in await events(session.pk))

        await worker.recorder.flush()
        before = await lists_sent()
        await worker.refresh_catalogue(announced=True)  # the same lists
        await worker.recorder.flush()
        assert (shown, handed_on, await lists_sent()) == ([], [], before + 1)  # (fetched again all the same)
        assert await database_sync_to_async(lambda: Session.objects.get(pk=session.pk).catalogue)() == saved
        await worker.client.call_tool("grow", {})
        await worker.refresh_catalogue(announced=True)
        assert shown == [["grow", "sprout"]] and handed_on == [1]
        assert [t["name"] for t in worker.catalogue["tools"]] == ["grow", "sprout"]
        await worker.refresh_catalogue()  # a page's Refresh: shown though nothing changed
        assert shown == [["grow", "sprout"]] * 2 and handed_on == [1, 1]
    finally:
        await tab.disconnect()
        await worker.stop()
