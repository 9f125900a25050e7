"""Our own frames follow the MCP schema: every feature of the page, driven through the consumer
as a tab drives it, against servers nobody here wrote (the official SDK's MCPServer in both eras,
server-everything), and not one `send` line of the transcript has a schema problem. Every frame
of these sessions was checked (none skipped by the budget), each feature really sent its frames
(the methods are listed), and a request made invalid on purpose (the Raw request composer) is the
one frame flagged."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest

from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from tests.sessions.helpers import (
    EVERYTHING,
    card_key,
    communicator,
    edit_server,
    events,
    make_user_and_server,
    receive_fragment,
    receive_until,
    send,
    stop_all,
)

pytestmark = pytest.mark.django_db(transaction=True)
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "a reply"},
    "model": "human",
    "stopReason": "endTurn",
}


BROKEN_ON_PURPOSE = {"name": 5}  # a raw tools/call's params: the control, the one frame that must be flagged


def assert_own_frames_clean(rows: list[dict[str, Any]], linter: Any, methods: set[str]) -> None:
    ours = [r for r in rows if r["dir"] == "send"]

    def on_purpose(row: dict[str, Any]) -> bool:  # (modern: with the client's _meta added)
        params = (row.get("message") or {}).get("params")
        return isinstance(params, dict) and params.get("name") == BROKEN_ON_PURPOSE["name"]

    flagged = [
        (r["seq"], r["message"], r["schema_problems"]) for r in ours if r.get("schema_problems") and not on_purpose(r)
    ]
    assert flagged == [], flagged
    [control] = [r for r in ours if on_purpose(r)]
    assert [(p["pointer"], p["message"]) for p in control["schema_problems"]] == [
        ("/params/name", "5 is not of type 'string'")
    ]
    assert linter.skipped == 0 and linter.checked == linter.seen  # every frame was checked
    sent = {r["message"].get("method") for r in ours if isinstance(r.get("message"), dict)}
    assert methods - {"answers"} <= sent, methods - {"answers"} - sent
    # "answers": our responses to the server's requests were among them.
    assert any(isinstance(r["message"], dict) and "result" in r["message"] for r in ours) == ("answers" in methods)


async def result(comm, command: str, name: str, *more: str, timeout: float = 20) -> str:
    return await receive_fragment(
        comm, 'aria-label="Result"', f"<strong>{command}</strong> {name}", *more, timeout=timeout
    )


async def call(comm, name: str, *, wait: float = 20, **fields: str) -> str:
    """Call a tool as its form does (`fields`: the form's, its timeout among them); the Result."""
    await send(comm, action="call_tool", name=name, **fields)
    return await result(comm, "tools/call", name, timeout=wait)


async def answer_card(comm, name: str, answer: dict[str, Any] | None, **fields: str) -> None:
    """Call a tool that makes the server ask; answer its card (None: "Reject")."""
    await send(comm, action="call_tool", name=name, **fields)
    key = card_key(await receive_until(comm, 'aria-label="Server request"'))
    if answer is None:
        await send(comm, action="answer", key=key, reject="1")
    else:
        await send(comm, action="answer", key=key, result=json.dumps(answer))


async def cancel_hang(comm) -> None:
    await send(comm, action="call_tool", name="hang", call_id="")
    started = await receive_until(comm, "Cancel request")
    await send(comm, action="cancel", call_id=re.search(r'id="call-(c\d+)"', started).group(1))
    await receive_until(comm, "cancelled by the user")


async def task(comm, topic: str) -> str:
    """A task-augmented call (server-everything's research); its task id."""
    await send(
        comm,
        action="call_tool",
        name="simulate-research-query",
        as_task="1",
        **{"args.topic": topic, "args.ambiguous": ""},
        send_anyway="1",
    )
    got = await receive_until(comm, 'class="task-card task"', 'name="task_id" value="')  # its card (features/tasks.py)
    return html.unescape(re.search(r'name="task_id" value="([^"]+)"', got).group(1))


async def control_then_ping(comm) -> None:
    """The request made invalid on purpose, then a ping answered: everything before it was saved."""
    await send(comm, action="raw", method="tools/call", params=json.dumps(BROKEN_ON_PURPOSE))
    await send(comm, action="ping")
    await result(comm, "ping", "")


async def open_session(**server: Any) -> tuple[Any, Any, int, Any, Any]:
    """A session on a new server, and a tab on it: (user, server, session id, its linter, the tab)."""
    user, srv = await make_user_and_server(**server)
    session = await start_session(srv, user)
    comm = communicator(session.pk, user)
    await comm.connect()
    return user, srv, session.pk, WORKERS[session.pk].feature("schema_lint").linter, comm


@pytest.mark.parametrize("offered", ["", "2024-11-05"])  # the latest of the era, and the oldest
async def test_every_page_feature_against_the_sdk_peer_legacy(offered):
    user, server, session, linter, comm = await open_session(protocol_version=offered)
    try:
        await receive_until(comm, 'id="catalogue"', ">greet<", "peer://items/{item_id}")
        await call(comm, "echo", **{"args.text": "hi"})
        await call(comm, "add", **{"args.a": "2", "args.b": "40"})
        await call(comm, "weather", mode="json", arguments_json='{"city": "Paris"}')
        await call(comm, "slow", timeout="30", **{"args.steps": "2"})
        await call(comm, "fail")
        await send(comm, action="read_resource", uri="peer://pixel.png")
        await result(comm, "resources/read", "peer://pixel.png")
        await send(comm, action="read_template", template="peer://items/{item_id}", **{"vars.item_id": "7"})
        await result(comm, "resources/read", "peer://items/7")
        await send(comm, action="get_prompt", name="review", **{"args.code": "x = 1", "args.language": "python"})
        await result(comm, "prompts/get", "review")
        await send(
            comm,
            action="complete",
            ref_type="ref/prompt",
            ref="review",
            argument="language",
            value="py",
            context=json.dumps({"code": "x = 1"}),
            target="sugg-1",
        )
        await receive_until(comm, 'id="sugg-1"')
        await send(comm, action="set_level", level="debug")
        await receive_until(comm, 'data-method="logging/setLevel"')
        # The server's elicitations, answered on their cards.
        await answer_card(comm, "ask_name", {"action": "accept", "content": {"name": "Ada"}})
        await receive_until(comm, "Hello, Ada!")
        await answer_card(comm, "greet", {"action": "decline"})
        await receive_until(comm, "No name (decline)")
        await cancel_hang(comm)
        # Ping, raw requests (a method with params, an exact frame, a notification), a refresh, new roots.
        await send(comm, action="ping")
        await result(comm, "ping", "")
        await send(comm, action="raw", method="resources/read", params='{"uri": "peer://greeting"}')
        await result(comm, "request", "resources/read")
        await send(comm, action="raw", frame='{"jsonrpc": "2.0", "id": "mine", "method": "prompts/list"}')
        await receive_until(comm, "<strong>request</strong>")
        await send(comm, action="raw", method="notifications/roots/list_changed", notification="1")
        await send(comm, action="refresh")
        await edit_server(
            user,
            server.pk,
            {
                "name": "peer",
                "transport": "stdio",
                "command": server.command,
                "args": "\n".join(server.args),
                "env": "",
                "cwd": "",
                "url": "",
                "headers": "",
                "era": "legacy",
                "protocol_version": offered,
                "roots": "file:///tmp/a A",
            },
        )
        await control_then_ping(comm)
    finally:
        await comm.disconnect()
        await stop_all()
    assert_own_frames_clean(
        await events(session),
        linter,
        {
            "initialize",
            "notifications/initialized",
            "tools/list",
            "resources/list",
            "resources/templates/list",
            "prompts/list",
            "tools/call",
            "resources/read",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
            "notifications/cancelled",
            "ping",
            "notifications/roots/list_changed",
            "answers",
        },
    )
    assert linter.version == (offered or "2025-11-25")  # checked against the version in use


async def test_every_page_feature_against_the_sdk_peer_modern():
    _user, _server, session, linter, comm = await open_session(era="modern")
    try:
        await receive_until(comm, 'id="catalogue"', ">greet<", "peer://items/{item_id}")
        await send(comm, action="set_level", level="debug")  # modern: per request, in _meta
        await receive_until(comm, "debug")
        await call(comm, "echo", **{"args.text": "hi"})
        await call(comm, "slow", timeout="30", **{"args.steps": "2"})
        # An input_required round, answered, and the call retried with inputResponses.
        await answer_card(comm, "greet", {"action": "accept", "content": {"name": "Grace"}})
        await receive_until(comm, "Hello, Grace!")
        await send(comm, action="read_resource", uri="peer://greeting")
        await result(comm, "resources/read", "peer://greeting")
        await send(comm, action="read_template", template="peer://items/{item_id}", **{"vars.item_id": "a b"})
        await result(comm, "resources/read", "peer://items/a%20b")
        await send(comm, action="get_prompt", name="review", **{"args.code": "x"})
        await result(comm, "prompts/get", "review")
        await send(
            comm,
            action="complete",
            ref_type="ref/resource",
            ref="peer://items/{item_id}",
            argument="item_id",
            value="",
            context="{}",
            target="sugg-2",
        )
        await receive_until(comm, 'id="sugg-2"')
        # subscriptions/listen, a notification on it, and its end (notifications/cancelled).
        await send(
            comm,
            action="listen",
            toolsListChanged="1",
            resourcesListChanged="1",
            promptsListChanged="1",
            uris="peer://greeting",
        )
        await receive_until(comm, "<strong>open</strong>")
        await send(comm, action="call_tool", name="touch", **{"args.uri": "peer://greeting"})
        await receive_until(comm, "notifications/resources/updated</code>")
        await send(comm, action="stop_listen")
        await receive_until(comm, "closed by us")
        await cancel_hang(comm)
        await send(comm, action="raw", method="tools/list", params="{}")
        await result(comm, "request", "tools/list")
        await send(comm, action="refresh")
        await send(comm, action="raw", method="tools/call", params=json.dumps(BROKEN_ON_PURPOSE))
        await call(comm, "echo", **{"args.text": "last"})
    finally:
        await comm.disconnect()
        await stop_all()
    assert_own_frames_clean(
        await events(session),
        linter,
        {
            "server/discover",
            "tools/list",
            "resources/list",
            "resources/templates/list",
            "prompts/list",
            "tools/call",
            "resources/read",
            "prompts/get",
            "completion/complete",
            "subscriptions/listen",
            "notifications/cancelled",
        },
    )


async def test_every_page_feature_against_server_everything():
    if not EVERYTHING.exists():
        pytest.fail("server-everything is not installed: run `make peers`")
    _user, _server, session, linter, comm = await open_session(
        name="everything",
        command=str(EVERYTHING),
        args=["stdio"],
        roots=[{"uri": "file:///tmp/first", "name": "First"}],
    )
    try:
        await receive_until(comm, 'id="catalogue"', ">get-roots-list<", ">trigger-sampling-request<")
        await send(
            comm,
            action="complete",
            ref_type="ref/prompt",
            ref="completable-prompt",
            argument="department",
            value="E",
            context="{}",
            target="sugg-3",
        )
        await receive_until(comm, 'id="sugg-3"')
        await send(comm, action="get_prompt", name="args-prompt", **{"args.city": "Paris", "args.state": "IdF"})
        await result(comm, "prompts/get", "args-prompt")
        uri = "demo://resource/static/document/architecture.md"
        await send(comm, action="read_resource", uri=uri)
        await result(comm, "resources/read", uri)
        # Roots from the server's settings, without asking; sampling and elicitation answered on cards.
        await call(comm, "get-roots-list")
        await answer_card(comm, "trigger-sampling-request", SAMPLED, **{"args.prompt": "hello"})
        await result(comm, "tools/call", "trigger-sampling-request")
        await answer_card(comm, "trigger-sampling-request", None, **{"args.prompt": "again"})  # an error response
        await result(comm, "tools/call", "trigger-sampling-request")
        await answer_card(comm, "trigger-elicitation-request", {"action": "cancel"})
        await result(comm, "tools/call", "trigger-elicitation-request")
        await send(comm, action="set_level", level="debug")
        await receive_until(comm, "level set to <strong>debug</strong>")
        await send(comm, action="subscribe", uri=uri)
        await receive_until(comm, 'aria-label="Subscribed resources"')
        await send(comm, action="unsubscribe", uri=uri)
        await receive_until(comm, "Subscribe to a resource from the list")
        # Tasks: a task-augmented call, polled, its result, and another one cancelled.
        task_id = await task(comm, "tides")
        await send(comm, action="task_get", task_id=task_id)
        await result(comm, "tasks/get", "")
        await send(comm, action="task_result", task_id=task_id)
        await result(comm, "tasks/result", "", timeout=30)
        await send(comm, action="task_cancel", task_id=await task(comm, "waves"))
        await result(comm, "tasks/cancel", "")
        await control_then_ping(comm)
    finally:
        await comm.disconnect()
        await stop_all()
    rows = await events(session)
    assert_own_frames_clean(
        rows,
        linter,
        {
            "initialize",
            "notifications/initialized",
            "completion/complete",
            "prompts/get",
            "resources/read",
            "tools/call",
            "logging/setLevel",
            "resources/subscribe",
            "resources/unsubscribe",
            "tasks/get",
            "tasks/result",
            "tasks/cancel",
            "ping",
            "answers",
        },
    )
    answered = [
        r["message"]
        for r in rows
        if r["dir"] == "send" and isinstance(r["message"], dict) and "method" not in r["message"]
    ]
    assert any("roots" in (m.get("result") or {}) for m in answered)  # roots/list
    assert any((m.get("result") or {}).get("model") == "human" for m in answered)  # sampling
    assert any("error" in m for m in answered)  # the rejected one
    assert any((m.get("result") or {}).get("action") == "cancel" for m in answered)  # elicitation
