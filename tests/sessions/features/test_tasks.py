"""The task card alone (features/tasks.py), with a fake session and a fake client: when it
polls, what it does on a status notification and on `input_required`, when it stops. Against
server-everything: the last test here (consumer ↔ worker) and tests/browser/test_workspace.py
(the page)."""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import pytest

from playground.mcp.client import RequestTimeout
from playground.mcp.jsonrpc import JsonRpcError
from playground.sessions.features import tasks as tasks_module
from playground.sessions.features.tasks import poll_seconds
from tests.sessions.fakes import FakeSession, FakeTab
from tests.sessions.helpers import events, everything_server, live_tab, receive_fragment, send, sent, task_status

FAST = 0.02  # the poll interval these tests run at (the floor is lowered to allow it)


class TaskServer:
    """Answers tasks/get from a script of statuses (the last one repeats), or raises."""

    def __init__(self, *statuses: Any, poll_ms: float = FAST * 1000) -> None:
        self.statuses = list(statuses)
        self.poll_ms = poll_ms
        self.closed = False
        self.gets: list[float] = []
        self.got = asyncio.Event()

    async def request(self, method: str, params: Any = None, **kw: Any) -> Any:
        assert method == "tasks/get" and params == {"taskId": "T"}
        self.gets.append(asyncio.get_running_loop().time())
        self.got.set()
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        if isinstance(status, BaseException):
            raise status
        return task(status, self.poll_ms)


def task(status: str, poll_ms: float = FAST * 1000) -> dict[str, Any]:
    return {
        "taskId": "T",
        "status": status,
        "statusMessage": f"now {status}",
        "pollInterval": poll_ms,
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:01Z",
        "ttl": 60000,
    }


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tasks_module, "POLL_FLOOR", FAST / 2)


def start(server: TaskServer) -> tuple[FakeSession, Any]:
    session = FakeSession(client=server)
    feature = session.add("tasks")
    feature.on_call_end(
        "c1", {"command": "call_tool", "name": "research", "result": {"task": task("working", server.poll_ms)}}
    )
    return session, feature


async def until(condition, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(FAST / 4)


def cards(session: FakeSession) -> list[str]:
    return [event["html"] for name, event in session.published if name == "tasks" and "html" in event]


def test_poll_interval_within_floor_and_ceiling() -> None:
    assert poll_seconds(5000) == 5.0
    assert poll_seconds(1) == tasks_module.POLL_FLOOR  # a server asking for 1 ms gets the floor
    assert poll_seconds(10**9) == tasks_module.POLL_CEILING
    assert poll_seconds(None) == poll_seconds("fast") == poll_seconds(True) == tasks_module.POLL_DEFAULT
    assert poll_seconds(float("nan")) == tasks_module.POLL_DEFAULT


async def test_polls_at_the_servers_pace_until_a_terminal_status_then_fetches_the_result() -> None:
    server = TaskServer("working", "working", "completed", poll_ms=FAST * 1000 * 2)
    session, feature = start(server)
    await until(lambda: session.calls)
    assert session.calls == [{"command": "task_result", "task_id": "T", "name": "T"}]
    assert len(server.gets) == 3
    gaps = [b - a for a, b in zip(server.gets, server.gets[1:])]
    assert all(gap >= 2 * FAST * 0.9 for gap in gaps)  # pollInterval honoured
    await session.settle()  # the poller ended by itself
    assert 'data-status="completed"' in cards(session)[-1] and "not polling" in cards(session)[-1]
    fetching = feature.followed["t1"].result_call
    feature.on_call_end(fetching, {"command": "task_result", "name": "T", "result": {"content": []}})
    await session.settle()
    assert "result fetched" in cards(session)[-1]


async def test_a_status_notification_updates_the_card_and_input_required_calls_tasks_result_at_once() -> None:
    server = TaskServer("working", poll_ms=60_000)  # polls a minute apart: only the notification counts
    session, feature = start(server)
    feature.on_notification({"method": "notifications/tasks/status", "params": task("input_required", 60_000)})
    # No click, no poll; it waits for the task's end, however long (the card polls meanwhile).
    assert session.calls == [{"command": "task_result", "task_id": "T", "name": "T", "timeout": float("inf")}]
    assert server.gets == []
    await until(lambda: any('data-status="input_required"' in c for c in cards(session)))
    assert "the server's questions come with it" in cards(session)[-1]
    # Another notification while tasks/result is in flight does not call it twice.
    feature.on_notification({"method": "notifications/tasks/status", "params": task("input_required", 60_000)})
    assert len(session.calls) == 1
    # A tasks/result that timed out fetched nothing: the next input_required asks again, a few times at most.
    for _ in range(5):
        feature.on_call_end(
            feature.followed["t1"].result_call,
            {"command": "task_result", "name": "T", "error": {"message": "timed out", "timeout": True}},
        )
        feature.on_notification({"method": "notifications/tasks/status", "params": task("input_required", 60_000)})
    assert len(session.calls) == tasks_module.MAX_AUTO_RESULTS
    feature._forget("t1")
    await session.settle()


async def test_a_poll_answered_from_before_the_task_ended_does_not_bring_it_back() -> None:
    """A terminal status is final (the spec: no transition out of it). The server's notification
    says "completed" while a tasks/get is answered from before it ("working", as server-everything
    can on stdio): the card stays completed and polls no more (it polled again at once, a poll gap
    well under the server's pollInterval)."""
    server = TaskServer("working")
    asked, answer = asyncio.Event(), asyncio.Event()
    ask = server.request

    async def request(method: str, params: Any = None, **kw: Any) -> Any:
        asked.set()
        await answer.wait()
        return await ask(method, params, **kw)

    server.request = request  # type: ignore[method-assign]
    session, feature = start(server)
    await asked.wait()
    feature.on_notification({"method": "notifications/tasks/status", "params": task("completed")})
    answer.set()
    await until(lambda: not feature.followed["t1"].polling)
    assert len(server.gets) == 1 and feature.followed["t1"].status == "completed"
    assert session.calls == [{"command": "task_result", "task_id": "T", "name": "T"}]
    feature._forget("t1")
    await session.settle()


async def test_notifications_about_other_tasks_are_ignored() -> None:
    server = TaskServer("working", poll_ms=60_000)
    session, feature = start(server)
    before = len(session.published)
    feature.on_notification(
        {"method": "notifications/tasks/status", "params": {**task("completed"), "taskId": "other"}}
    )
    feature.on_notification({"method": "notifications/tasks/status", "params": "junk"})
    assert session.calls == [] and len(session.published) == before
    feature._forget("t1")
    await session.settle()


async def test_dismissing_the_card_stops_polling() -> None:
    server = TaskServer("working")
    session, feature = start(server)
    await until(lambda: len(server.gets) >= 2)
    await feature.handle({"command": "task_dismiss", "key": "t1"})
    polls = len(server.gets)
    async with asyncio.timeout(5):
        await session.settle()  # the poller has ended (one still polling never would)
    assert len(server.gets) <= polls + 1  # at most the poll under way as it was dismissed
    assert ("tasks", {"key": "t1", "gone": True}) in session.published
    tab = FakeTab()
    assert tasks_module.Tasks.fragments({"key": "t1", "gone": True}, tab) == [
        '<div id="task-t1" hx-swap-oob="delete"></div>'
    ]


async def test_polling_stops_after_failures_or_at_once_when_the_task_is_gone() -> None:
    timeout = RequestTimeout("tasks/get", 3, 1.0)
    server = TaskServer(timeout, timeout, timeout, "working")
    session, feature = start(server)
    await session.settle()
    assert len(server.gets) == tasks_module.MAX_FAILURES
    assert "polling stopped after 3 failed polls" in cards(session)[-1]
    assert 'role="alert"' in cards(session)[-1]
    # "Poll status" starts it again; a success clears the error.
    await feature.handle({"command": "task_poll", "key": "t1"})
    await until(lambda: len(server.gets) > tasks_module.MAX_FAILURES)
    await until(lambda: "polled every" in cards(session)[-1])
    assert 'role="alert"' not in cards(session)[-1]
    feature._forget("t1")
    await session.settle()

    gone = TaskServer(JsonRpcError(-32602, "Failed to retrieve task: Task not found"))
    session, feature = start(gone)
    await session.settle()
    assert len(gone.gets) == 1 and "Task not found" in cards(session)[-1]


async def test_a_card_per_task_appended_once_then_replaced_in_each_tab() -> None:
    server = TaskServer("working", poll_ms=60_000)
    session, feature = start(server)
    await until(lambda: cards(session))
    event = [e for n, e in session.published if n == "tasks"][-1]
    tab = FakeTab()
    first = tasks_module.Tasks.fragments(event, tab)[0]
    again = tasks_module.Tasks.fragments(event, tab)[0]
    assert first.startswith('<div id="task-cards" hx-swap-oob="beforeend">')
    assert again.startswith('<div id="task-t1" hx-swap-oob="outerHTML strip:true">')
    assert [e["event"]["key"] for e in feature.snapshot()] == ["t1"]
    feature._forget("t1")
    await session.settle()


async def test_poll_status_on_a_finished_task_returns_at_once_and_polls_in_a_task_of_its_own() -> None:
    """The command does not wait for tasks/get: the server may answer it only after a question
    whose answer is the page's next command."""
    server = TaskServer("completed")
    session, feature = start(server)
    await session.settle()
    assert feature.followed["t1"].terminal and len(server.gets) == 1
    answer = asyncio.Event()
    plain = server.request

    async def waits_for_the_person(method: str, params: Any = None, **kw: Any) -> Any:
        await answer.wait()
        return await plain(method, params, **kw)

    server.request = waits_for_the_person  # type: ignore[method-assign]
    async with asyncio.timeout(5):
        await feature.handle({"command": "task_poll", "key": "t1"})
    assert len(server.gets) == 1  # asked, not answered yet
    answer.set()
    await session.settle()
    assert len(server.gets) == 2 and "2 polls" in cards(session)[-1]


def test_a_poll_interval_no_float_holds_is_clamped() -> None:
    assert poll_seconds(10**400) == tasks_module.POLL_CEILING
    assert poll_seconds(-(10**400)) == poll_seconds(float("-inf")) == tasks_module.POLL_FLOOR
    assert poll_seconds(float("inf")) == tasks_module.POLL_CEILING


async def test_a_server_request_during_a_poll_is_not_the_ended_call_s() -> None:
    """The poller starts in the context of the call that created the task (its end); a request
    the server sends while a poll waits must not name that call."""
    from playground.sessions.protocol import CURRENT_CALL

    seen: list[Any] = []
    server = TaskServer("working", "completed")
    plain = server.request

    async def records(method: str, params: Any = None, **kw: Any) -> Any:
        seen.append(CURRENT_CALL.get())
        return await plain(method, params, **kw)

    server.request = records  # type: ignore[method-assign]
    session = FakeSession(client=server)
    feature = session.add("tasks")
    CURRENT_CALL.set("c1")  # as in the worker's _publish_result of c1
    feature.on_call_end("c1", {"command": "call_tool", "name": "research", "result": {"task": task("working")}})
    CURRENT_CALL.set(None)
    await session.settle()
    assert seen and all(call is None for call in seen)


@pytest.mark.django_db(transaction=True)
async def test_a_task_augmented_call_is_followed_by_its_card_until_its_result():
    """Against server-everything: a task-augmented call returns a task; its card follows it on its
    own: tasks/get at the server's pollInterval, then the result once the task has completed,
    with no click; Dismiss removes the card."""
    async with live_tab('id="catalogue"', ">get-roots-list<", ">simulate-research-query<", **everything_server()) as (
        _,
        session,
        comm,
    ):
        await send(
            comm,
            action="call_tool",
            name="simulate-research-query",
            as_task="1",
            **{"args.topic": "tides", "args.ambiguous": ""},
            send_anyway="1",
        )
        got = await receive_fragment(comm, 'aria-label="Result"', "<strong>tools/call</strong> simulate-research-query")
        assert task_status(got) == "working"  # a CreateTaskResult starts working
        assert "Its card above follows it" in got
        card = await receive_fragment(comm, 'id="task-cards"', 'aria-label="Task"')
        task_id = html.unescape(re.search(r'name="task_id" value="([^"]+)"', card).group(1))
        assert all(name in card for name in ("Get result", "Cancel task", "Poll status", "Dismiss"))
        got = await receive_fragment(comm, 'aria-label="Result"', "<strong>tasks/result</strong>", timeout=30)
        assert "# Research Report: tides" in got and html.escape(task_id) in got
        card = await receive_fragment(comm, 'id="task-t1"', 'data-status="completed"', "result fetched")
        assert "not polling" in card and "Cancel task" not in card
        # Dismiss: the card goes.
        await send(comm, action="task_dismiss", key="t1")
        await receive_fragment(comm, 'id="task-t1"', 'hx-swap-oob="delete"')
    rows = await events(session.pk)
    call = next(m for m in sent(rows, "tools/call") if m["params"]["name"] == "simulate-research-query")
    assert call["params"]["task"] == {"ttl": 300000}
    # The research takes four one-second stages and the server asks for a poll every second.
    polls = [r for r in rows if r["dir"] == "send" and (r.get("message") or {}).get("method") == "tasks/get"]
    assert len(polls) >= 2 and all(p["message"]["params"] == {"taskId": task_id} for p in polls)
    gaps = [b["t"] - a["t"] for a, b in zip(polls, polls[1:])]
    assert all(gap >= 0.95 for gap in gaps)  # never faster than the server's pollInterval
    assert sent(rows, "tasks/result")[0]["params"] == {"taskId": task_id}
