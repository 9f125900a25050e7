"""A feature never holds back or breaks the session's core: its commands run beside the
worker's command loop (live/lanes.py), and a failing hook is logged, not raised into a
call's Result, the catalogue or a tab's snapshot. Through consumer ↔ worker against the
misbehaving stdio peer's task modes, and the SDK server. The connection declares exactly the
capabilities the features answer for."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

import pytest

from playground.sessions.features.logging import Logging
from playground.sessions.features.tasks import Tasks
from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from tests.sessions.helpers import (
    MISBEHAVING,
    communicator,
    events,
    live_tab,
    make_user_and_server,
    receive_fragment,
    receive_until,
    send,
    sent,
    stop_all,
    watch,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def misbehaving_session(mode: str) -> tuple[Any, Any]:
    user, server = await make_user_and_server(name=mode, command=sys.executable, args=[MISBEHAVING, mode])
    return user, await start_session(server, user)


async def go_as_task(comm: Any) -> str:
    """Connect the tab, call `go` as a task; the Result (the created task)."""
    assert (await comm.connect())[0]
    await receive_until(comm, 'id="catalogue"', ">go<")
    await send(comm, action="call_tool", name="go", as_task="1")
    return await receive_fragment(comm, 'aria-label="Result"', "<strong>tools/call</strong>")


def request_card(fragment: str) -> tuple[str, str]:
    """(its key, its header) of a Server request card."""
    key = re.search(r'id="server-request-(q\d+)"', fragment).group(1)
    return key, fragment.split("</header>", 1)[0]


async def test_polling_a_finished_task_while_the_server_asks_first_blocks_nothing():
    """The server answers each tasks/get only once the person answered its elicitation. The
    card's own poll: the question is not attributed to the call that created the task (it has
    ended). "Poll status" on the finished task: while its tasks/get waits for the person, the
    page's other commands go through (a ping, the answer itself); nothing deadlocks."""
    user, session = await misbehaving_session("task-asks")
    comm = communicator(session.pk, user)
    try:
        assert "T1" in await go_as_task(comm)
        # The card polls at the floor pace; the server asks before it answers.
        asked = await receive_fragment(comm, 'aria-label="Server request"', "question 1")
        key, header = request_card(asked)
        assert "data-call=" not in header and "for call" not in header, header
        await send(comm, action="answer", key=key, result=json.dumps({"action": "accept", "content": {"ok": True}}))
        await receive_fragment(comm, 'id="task-t1"', 'data-status="completed"', "result fetched", timeout=30)

        await send(comm, action="task_poll", key="t1")  # the task has ended: one more look
        asked = await receive_fragment(comm, 'aria-label="Server request"', "question 2")
        key, header = request_card(asked)
        assert "for call" not in header
        await send(comm, action="ping")  # while that tasks/get waits
        await receive_fragment(comm, 'aria-label="Result"', "<strong>ping</strong>")
        await send(comm, action="answer", key=key, result=json.dumps({"action": "decline"}))
        await receive_fragment(comm, 'id="task-t1"', "2 polls")
        await send(comm, action="disconnect")
        await receive_until(comm, "status-ended")
    finally:
        await comm.disconnect()
        await stop_all()


async def test_a_400_digit_poll_interval_still_shows_the_result_the_card_and_every_snapshot():
    user, session = await misbehaving_session("task-huge-poll")
    comm = communicator(session.pk, user)
    try:
        await go_as_task(comm)
        await receive_fragment(comm, 'id="task-cards"', 'aria-label="Task"')
        again = communicator(session.pk, user)  # a reloading tab: its snapshot
        try:
            assert (await again.connect())[0]
            await receive_until(again, "<strong>tools/call</strong>")
            await receive_fragment(again, 'aria-label="Task"', "polled every 60 s")  # the ceiling
        finally:
            await again.disconnect()
    finally:
        await comm.disconnect()
        await stop_all()


async def test_a_feature_that_fails_in_its_hooks_breaks_neither_the_session_nor_a_tab(monkeypatch):
    failed: list[str] = []

    def broken(hook: str) -> Any:
        def fail(*args: Any) -> Any:
            failed.append(hook)
            raise RuntimeError("a feature's bug")

        return fail

    async def broken_start(self: Any) -> None:
        failed.append("start")
        raise RuntimeError("a feature's bug")

    for hook in ("on_call_end", "on_catalogue", "snapshot"):
        monkeypatch.setattr(Tasks, hook, broken(hook))
    monkeypatch.setattr(Tasks, "start", broken_start)
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        assert (await comm.connect())[0]
        await receive_until(comm, 'id="catalogue"', "status-connected")
        await send(comm, action="call_tool", name="echo", **{"args.text": "still here"})
        await receive_fragment(comm, 'aria-label="Result"', "still here")
        again = communicator(session.pk, user)
        try:
            assert (await again.connect())[0]
            await receive_until(again, 'aria-label="Result"', "still here")  # the snapshot's Result
        finally:
            await again.disconnect()
        assert session.pk in WORKERS
        assert set(failed) == {"start", "on_catalogue", "on_call_end", "snapshot"}  # each hook did fail
    finally:
        await comm.disconnect()
        await stop_all()


async def test_a_feature_command_waiting_on_the_server_holds_back_only_that_features_later_commands(monkeypatch):
    """In the worker: the command returns at once, the feature's next command runs after it (in
    order), and the core's commands go on meanwhile."""
    release = asyncio.Event()
    ran: list[str] = []

    async def slow_handle(self: Any, command: Any) -> None:
        ran.append(f"start {command['name']}")
        if command["name"] == "first":
            await release.wait()
        ran.append(f"end {command['name']}")

    monkeypatch.setattr(Logging, "handle", slow_handle)
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    worker = WORKERS[session.pk]
    try:
        async with asyncio.timeout(5):
            await worker.handle({"command": "set_level", "name": "first"})
            await worker.handle({"command": "set_level", "name": "second"})
            while not ran:
                await asyncio.sleep(0.01)
        assert ran == ["start first"]  # the second waits for the first
        reply = await worker.layer.new_channel()
        await worker.handle({"command": "sync", "reply_channel": reply})  # the core is not held
        assert (await asyncio.wait_for(worker.layer.receive(reply), 5))["type"] == "session.snapshot"
        release.set()
        async with asyncio.timeout(5):
            while len(ran) < 4:
                await asyncio.sleep(0.01)
        assert ran == ["start first", "end first", "start second", "end second"]
    finally:
        release.set()
        await stop_all()


async def test_legacy_initialize_declares_exactly_what_the_page_answers():
    """The capabilities of the initialize frame as it went out: roots (with list_changed, which
    the server's edit view sends), sampling, elicitation in both modes, and the MCP Apps extension
    (the page renders apps); nothing else."""
    user, server = await make_user_and_server()
    _, rows, _ = await watch(await start_session(server, user), user, 'id="catalogue"', ">greet<")
    sent_init = [r for r in rows if r["dir"] == "send" and (r.get("message") or {}).get("method") == "initialize"]
    assert len(sent_init) == 1
    frame = json.loads(sent_init[0]["raw"])  # the exact text written to the server
    assert frame["params"]["capabilities"] == {
        "roots": {"listChanged": True},
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
    }
    assert sent(rows, "notifications/initialized")


async def test_the_modern_era_declares_what_the_page_answers_in_its_own_terms():
    """In each request's `_meta`: roots without listChanged, sampling, elicitation in both modes,
    the MCP Apps extension."""
    async with live_tab('id="catalogue"', ">greet<", era="modern") as (_, session, comm):
        await send(comm, action="call_tool", name="echo", **{"args.text": "after"})
        await receive_until(comm, "<strong>tools/call</strong> echo")
    rows = await events(session.pk)
    # The modern era declares what the page answers in its own terms: roots without listChanged.
    caps = sent(rows, "tools/call")[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps == {
        "roots": {},
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
    }
