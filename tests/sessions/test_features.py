"""The protocol's side features through consumer ↔ worker, against real servers: server
requests answered by the page, input_required rounds, templates, completion, roots edited
mid-session, subscriptions (both eras), logging, cancel, tasks, raw frames."""
from __future__ import annotations

import html
import json
import re

import pytest

from playground.sessions.live.worker import start_session

from tests.sessions.helpers import (EVERYTHING, card_key, communicator, events, make_user_and_server, receive_fragment,
                                   receive_until, send, sent, stop_all, task_status)

pytestmark = pytest.mark.django_db(transaction=True)


async def test_legacy_elicitation_template_cancel_and_malformed_frame():
    user, server = await make_user_and_server()
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', "peer://items/{item_id}")

        # A template read: the variable is expanded (RFC 6570) before resources/read.
        await send(comm, action="read_template", template="peer://items/{item_id}", **{"vars.item_id": "a b"})
        got = await receive_until(comm, 'aria-label="Result"', "<pre class=\"text\">item a b</pre>")
        assert "<strong>read_resource</strong> peer://items/a%20b" in got

        # The server's elicitation becomes a card; the answer goes back and the call finishes.
        await send(comm, action="call_tool", name="ask_name")
        card = await receive_until(comm, 'aria-label="Server request"')
        assert 'name="elicit-' in card and ">name</label>" in card      # fields labelled by property name
        await send(comm, action="answer", key=card_key(card), result=json.dumps({"action": "accept",
                                                                                "content": {"name": "Ada"}}))
        got = await receive_until(comm, "Hello, Ada!")
        assert f'id="server-request-{card_key(card)}" hx-swap-oob="delete"' in got

        # Cancel a call in flight: the server is told (notifications/cancelled) and the result says so.
        await send(comm, action="call_tool", name="hang", call_id="")
        started = await receive_until(comm, "Cancel request", 'role="progressbar"')
        call_id = re.search(r'id="call-(c\d+)"', started).group(1)
        await send(comm, action="cancel", call_id=call_id)
        got = await receive_until(comm, ">cancelled</span>", 'data-method="notifications/cancelled"')
        assert "cancelled by the user" in got

        # A malformed frame goes out exactly as typed; the server's complaint is shown.
        await send(comm, action="raw", frame='{"jsonrpc": "2.0", "id": 99, "method": ')
        await receive_until(comm, "&quot;method&quot;: </pre>")
        # A hand-made request with an id of its own: its response is the call's result.
        await send(comm, action="raw", frame='{"jsonrpc": "2.0", "id": "mine", "method": "tools/call", '
                                             '"params": {"name": "echo", "arguments": {"text": "by hand"}}}')
        await receive_until(comm, "<strong>raw</strong>")
        # params that are not JSON are refused (the exact frame is the place for broken text).
        await send(comm, action="raw", method="tools/list", params="{")
        assert "params is not valid JSON" in await receive_until(comm, 'id="raw-errors"')
        # The error box goes once a request goes out, an exact frame as well.
        await send(comm, action="raw", frame='{"jsonrpc": "2.0", "id": "again", "method": "ping"}')
        await receive_fragment(comm, '<div id="raw-errors" hx-swap-oob="innerHTML"></div>')
        # A prompt form's notice, likewise.
        await send(comm, action="get_prompt", name="review", **{f"args.a{i}": "x" for i in range(2001)})
        assert "Not sent: the form has 2001 fields" in await receive_fragment(comm, 'id="notices"')
        await send(comm, action="get_prompt", name="review", **{"args.code": "print(1)"})
        await receive_fragment(comm, '<div id="notices" hx-swap-oob="innerHTML"></div>')
    finally:
        await comm.disconnect()
        await stop_all()
    rows = await events(session.pk)
    assert any(r["dir"] == "send" and r["raw"] == '{"jsonrpc": "2.0", "id": 99, "method": ' for r in rows)
    assert any(r["dir"] == "recv" and (r.get("message") or {}).get("id") == "mine" for r in rows)
    assert not any("unknown or already answered id 'mine'" in (r.get("text") or "") for r in rows)
    hang = next(m for m in sent(rows, "tools/call") if m["params"]["name"] == "hang")
    assert sent(rows, "notifications/cancelled")[0]["params"]["requestId"] == next(
        r["message"]["id"] for r in rows if r["dir"] == "send" and r["message"] == hang)


async def test_modern_input_required_round_and_listen_stream():
    user, server = await make_user_and_server(era="modern")
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', ">greet<")

        # input_required: the same card, marked as round 1 with the requestState read-only.
        await send(comm, action="call_tool", name="greet")
        card = await receive_until(comm, 'aria-label="Server request"')
        assert "input_required round 1" in card and 'aria-label="requestState"' in card
        await send(comm, action="answer", key=card_key(card), result=json.dumps({"action": "accept",
                                                                                "content": {"name": "Grace"}}))
        got = await receive_until(comm, "Hello, Grace!")
        assert 'aria-label="Input rounds"' in got and "input_required round 1" in got

        # subscriptions/listen: requested vs acknowledged, then the tagged notifications.
        await send(comm, action="listen", toolsListChanged="1", uris="peer://greeting\npeer://nothing")
        got = await receive_until(comm, "<strong>open</strong>")
        acked = got.split("<dt>acknowledged</dt>")[-1].split("</dd>")[0]
        assert '<span class="cap">toolsListChanged</span>' in acked and "peer://greeting" in acked
        await send(comm, action="call_tool", name="touch", **{"args.uri": "peer://greeting"})
        # The feed (gathered in bursts) and the transcript arrive in either order.
        got = await receive_until(comm, "notifications/resources/updated</code> <span class=\"tag\"",
                                  "notifications/tools/list_changed</code>",
                                  'data-method="tools/list"')        # list_changed refreshed the list
        # With the toggle off, list_changed is shown but refreshes nothing.
        await send(comm, action="auto_refresh")
        await receive_until(comm, '<div id="auto-refresh-state" hx-swap-oob="innerHTML"><label><input type="checkbox" '
                                  'name="on" value="1" data-auto-refresh> ')
        await send(comm, action="call_tool", name="touch", **{"args.uri": "peer://greeting"})
        await receive_until(comm, "<strong>call_tool</strong> touch")
        await send(comm, action="call_tool", name="echo", **{"args.text": "after"})
        await receive_until(comm, "<strong>call_tool</strong> echo")
        await send(comm, action="stop_listen")
        got = await receive_until(comm, "closed by us")
    finally:
        await comm.disconnect()
        await stop_all()
    rows = await events(session.pk)
    calls = [m for m in sent(rows, "tools/call") if m["params"]["name"] == "greet"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
    first_result = next(r["message"]["result"] for r in rows if r["dir"] == "recv"
                        and (r.get("message") or {}).get("id") == calls[0]["id"])
    assert calls[1]["params"]["requestState"] == first_result["requestState"]
    assert list(calls[1]["params"]["inputResponses"].values()) == [{"action": "accept", "content": {"name": "Grace"}}]
    listen = sent(rows, "subscriptions/listen")[0]
    assert listen["params"]["notifications"] == {"toolsListChanged": True,
                                                 "resourceSubscriptions": ["peer://greeting", "peer://nothing"]}
    assert sent(rows, "notifications/cancelled")[-1]["params"]["requestId"] == listen["id"]
    touched = [i for i, r in enumerate(rows) if r["dir"] == "recv"
               and (r.get("message") or {}).get("method") == "notifications/tools/list_changed"]
    assert len(touched) == 2
    lists = [i for i, r in enumerate(rows) if r["dir"] == "send" and (r.get("message") or {}).get("method") == "tools/list"]
    assert any(touched[0] < i < touched[1] for i in lists) and not any(i > touched[1] for i in lists)
    # The modern era declares what the page answers in its own terms: roots without listChanged.
    caps = sent(rows, "tools/call")[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps == {"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}


async def test_everything_completion_roots_subscription_logging_and_tasks():
    if not EVERYTHING.exists():
        pytest.fail("server-everything is not installed: run `make peers`")
    roots = [{"uri": "file:///tmp/first", "name": "First"}]
    user, server = await make_user_and_server(name="everything", command=str(EVERYTHING), args=["stdio"], roots=roots)
    session = await start_session(server, user)
    comm = communicator(session.pk, user)
    try:
        await comm.connect()
        await receive_until(comm, 'id="catalogue"', ">get-roots-list<", ">simulate-research-query<")

        # Completion: only this tab gets the suggestions; context.arguments narrows the second field.
        await send(comm, action="complete", ref_type="ref/prompt", ref="completable-prompt", argument="department",
                   value="E", context="{}", target="sugg-parg-1")
        got = await receive_until(comm, 'id="sugg-parg-1"')
        assert 'data-suggest="Engineering"' in got and "Sales" not in got
        await send(comm, action="complete", ref_type="ref/prompt", ref="completable-prompt", argument="name",
                   value="", context=json.dumps({"department": "Engineering"}), target="sugg-parg-2")
        got = await receive_until(comm, 'id="sugg-parg-2"')
        assert all(f'data-suggest="{n}"' in got for n in ("Alice", "Bob", "Charlie"))

        # URL-mode elicitation: the whole URL is shown, its host stressed, never opened before the
        # person accepts; Accept opens it (http(s) only), here it is declined.
        await send(comm, action="call_tool", name="trigger-url-elicitation", **{"args.url": "https://example.org/ok"})
        card = await receive_until(comm, 'aria-label="Server request"')
        assert ('<span class="url-rest">https://</span><strong class="url-host">example.org</strong>'
                '<span class="url-rest">/ok</span>') in card
        assert "not opened automatically" in card and 'data-url="https://example.org/ok"' in card
        assert all(f">{b}</button>" in card for b in ("Accept", "Decline", "Cancel"))
        await send(comm, action="answer", key=card_key(card), result='{"action": "decline"}')
        await receive_until(comm, "User declined to open the URL")

        # Roots come from the server's settings, without asking (edited ones: see the roots test below).
        await send(comm, action="call_tool", name="get-roots-list")
        got = await receive_fragment(comm, 'aria-label="Result"', "<strong>call_tool</strong> get-roots-list")
        assert "file:///tmp/first" in got

        # Logging level, then a subscription: the server logs it and sends updates.
        await send(comm, action="set_level", level="debug")
        await receive_until(comm, "level set to <strong>debug</strong>")
        uri = "demo://resource/static/document/architecture.md"
        await send(comm, action="subscribe", uri=uri)
        # The server logs the subscription (a log notification, shown in the Log panel).
        await receive_until(comm, 'aria-label="Subscribed resources"', "Received Subscribe Resource request",
                            'id="feed-log"')
        await send(comm, action="call_tool", name="toggle-subscriber-updates")
        await receive_until(comm, f"notifications/resources/updated</code> <span class=\"text mono\">{uri}")
        await send(comm, action="call_tool", name="toggle-subscriber-updates")
        await send(comm, action="unsubscribe", uri=uri)
        await receive_until(comm, "Subscribe to a resource from the list")

        # A task-augmented call returns a task; its card follows it on its own: tasks/get at the
        # server's pollInterval, then the result once the task has completed, with no click.
        await send(comm, action="call_tool", name="simulate-research-query", as_task="1",
                   **{"args.topic": "tides", "args.ambiguous": ""}, send_anyway="1")
        got = await receive_fragment(comm, 'aria-label="Result"', "<strong>call_tool</strong> simulate-research-query")
        assert task_status(got) == "working"            # a CreateTaskResult starts working
        assert "Its card above follows it" in got
        card = await receive_fragment(comm, 'id="task-cards"', 'aria-label="Task"')
        task_id = html.unescape(re.search(r'name="task_id" value="([^"]+)"', card).group(1))
        assert all(name in card for name in ("Get result", "Cancel task", "Poll status", "Dismiss"))
        got = await receive_fragment(comm, 'aria-label="Result"', "<strong>task_result</strong>", timeout=30)
        assert "# Research Report: tides" in got and html.escape(task_id) in got
        card = await receive_fragment(comm, 'id="task-t1"', 'data-status="completed"', "result fetched")
        assert "not polling" in card and "Cancel task" not in card
        # Dismiss: the card goes.
        await send(comm, action="task_dismiss", key="t1")
        await receive_fragment(comm, 'id="task-t1"', 'hx-swap-oob="delete"')
    finally:
        await comm.disconnect()
        await stop_all()
    rows = await events(session.pk)
    call = next(m for m in sent(rows, "tools/call") if m["params"]["name"] == "simulate-research-query")
    assert call["params"]["task"] == {"ttl": 300000}
    # The research takes four one-second stages and the server asks for a poll every second.
    polls = [r for r in rows if r["dir"] == "send" and (r.get("message") or {}).get("method") == "tasks/get"]
    assert len(polls) >= 2 and all(p["message"]["params"] == {"taskId": task_id} for p in polls)
    gaps = [b["t"] - a["t"] for a, b in zip(polls, polls[1:])]
    assert all(gap >= 0.95 for gap in gaps)                 # never faster than the server's pollInterval
    assert sent(rows, "tasks/result")[0]["params"] == {"taskId": task_id}
    assert sent(rows, "logging/setLevel")[0]["params"] == {"level": "debug"}
    assert sent(rows, "resources/subscribe")[0]["params"] == {"uri": uri}
    assert sent(rows, "resources/unsubscribe")[0]["params"] == {"uri": uri}
    answers = [r["message"]["result"]["roots"] for r in rows
               if r["dir"] == "send" and isinstance((r.get("message") or {}).get("result"), dict)
               and "roots" in r["message"]["result"]]
    assert answers and all(a == roots for a in answers)
