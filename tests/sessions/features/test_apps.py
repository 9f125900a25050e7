"""MCP Apps, the worker's side, against the official example servers published on npm and a
hostile app peer of ours: the capability declared, the UI metadata kept, the ui:// resource read
through the session, the bridge recorded as the "app" lane and checked against the extension's
schema, the app's tools/call made (or refused), and every bound holding."""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
import time
from typing import Any

import pytest

from playground.budget import APP_POLICY
from playground.mcp.apps import EXTENSION_ID, LANE, MIME_TYPE
from playground.mcp.apps.policy import MAX_DOMAINS
from playground.sessions.features.apps import BURST, MAX_FRAME, RATE
from playground.sessions.fragments import regions
from tests.conftest import PEERS, ROOT
from tests.sessions.helpers import events, live_tab, receive_until, send, sent

EXAMPLES = ROOT / "tools" / "npm" / "node_modules" / "@modelcontextprotocol"
VANILLA = EXAMPLES / "server-basic-vanillajs" / "dist" / "index.js"
MONITOR = EXAMPLES / "server-system-monitor" / "dist" / "index.js"
HOSTILE = PEERS / "hostile_app.py"

pytestmark = pytest.mark.django_db(transaction=True)


def example(path) -> dict[str, Any]:
    """An official example server over stdio (`node dist/index.js --stdio`, as its README says)."""
    node = shutil.which("node")
    if not path.exists() or node is None:
        pytest.fail(f"{path} is not installed: run npm install in tools/npm")
    return {"name": path.parent.parent.name, "command": node, "args": [str(path), "--stdio"]}


async def inbox(comm, **wanted: Any) -> dict[str, Any]:
    """The next answer for the app (its pieces put together) that has `wanted`'s values."""
    parts: dict[str, dict[int, str]] = {}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = await comm.receive_from(20)
        for message, part, count, body in re.findall(
            r'<pre data-app-message="([^"]+)" data-part="(\d+)" data-parts="(\d+)">(.*?)</pre>', text, re.S
        ):
            got = parts.setdefault(message, {})
            got[int(part)] = html.unescape(body)
            if len(got) == int(count):
                payload = json.loads("".join(got[i] for i in range(int(count))))
                if all(payload.get(k) == v for k, v in wanted.items()):
                    return payload
    raise AssertionError(f"no answer with {wanted}")


async def call_with_app(comm, tool: str) -> str:
    await send(comm, action="call_tool", name=tool)
    got = await receive_until(comm, "data-app-call=")
    return re.search(r'data-app-call="([^"]+)"', got).group(1)


def lane(rows: list[dict]) -> list[dict]:
    return [r for r in rows if (r.get("data") or {}).get("connection") == LANE]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "ui/initialize",
    "params": {"appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}, "protocolVersion": "2026-01-26"},
}


async def test_the_basic_example_declared_read_and_bridged():
    async with live_tab('id="catalogue"', ">get-time<", **example(VANILLA)) as (_user, session, comm):
        call_id = await call_with_app(comm, "get-time")
        await send(comm, action="app_open", instance="i1", call_id=call_id)
        opened = await inbox(comm, kind="open", instance="i1")
        frame = {"action": "app_frame", "instance": "i1", "call_id": call_id}
        await send(comm, **frame, direction="recv", frame=json.dumps(INITIALIZE))
        answer = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2026-01-26"}}  # (no hostInfo...)
        await send(comm, **frame, direction="send", frame=json.dumps(answer))
        app_call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get-time", "arguments": {}}}
        await send(comm, **frame, direction="recv", frame=json.dumps(app_call), perform="1")
        reply = await inbox(comm, kind="reply", id=2)
        broken = {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"height": "tall"}}
        await send(comm, **frame, direction="recv", frame=json.dumps(broken))
        await receive_until(comm, "size-changed")
    rows = await events(session.pk)
    catalogue = (await _session(session.pk)).catalogue
    # The capability, in initialize; the tool's UI metadata kept, and marked in the catalogue.
    (initialize,) = sent(rows, "initialize")
    assert initialize["params"]["capabilities"]["extensions"][EXTENSION_ID] == {"mimeTypes": [MIME_TYPE]}
    tool = next(t for t in catalogue["tools"] if t["name"] == "get-time")
    assert tool["_meta"]["ui"]["resourceUri"] == "ui://get-time/mcp-app.html"
    assert 'class="hint app-ui"' in regions.catalogue(session.pk, catalogue)
    # The resource, read through the session (recorded), and sent to the page.
    (read,) = sent(rows, "resources/read")
    assert read["params"]["uri"] == "ui://get-time/mcp-app.html"
    text = next(r for r in rows if r.get("reply_to") and r["message"].get("result", {}).get("contents"))
    assert text["message"]["result"]["contents"][0]["text"] == opened["html"]
    assert "<html" in opened["html"].lower() and opened["tool"]["name"] == "get-time"
    assert opened["result"]["structuredContent"]["time"] and opened["arguments"] == {}
    # The app's own tools/call: made on the session's connection, answered to the page.
    assert len(sent(rows, "tools/call")) == 2
    assert reply["result"]["structuredContent"]["time"]
    # The bridge: its own lane, paired, checked against the extension's schema.
    bridge = lane(rows)
    assert [r["dir"] for r in bridge] == ["recv", "send", "recv", "recv"]
    init, init_answer, app_tools_call, size = bridge
    assert init["message"]["method"] == "ui/initialize" and not init.get("schema_problems")
    assert init_answer["reply_to"] == init["seq"]
    assert init_answer["schema_lint"]["definition"] == "McpUiInitializeResult"
    assert {p["message"] for p in init_answer["schema_problems"]} >= {"'hostInfo' is a required property"}
    assert not app_tools_call.get("schema_problems")
    assert size["schema_lint"]["definition"] == "McpUiSizeChangedNotification"
    assert [p["pointer"] for p in size["schema_problems"]] == ["/params/height"]
    # A share page shows the lane; it never runs the app.
    page = await _share_page(session)
    assert page.count('<span class="lane"') == 4 and "McpUiSizeChangedNotification" in page
    assert 'id="app-bridge"' not in page and "data-app-call" not in page and "<iframe" not in page


async def _share_page(session) -> str:
    from channels.db import database_sync_to_async
    from django.test import Client

    from playground.transcripts.models import ShareLink

    @database_sync_to_async
    def get() -> str:
        link = ShareLink.objects.create(session=session)
        return Client().get(f"/share/{link.token}/").content.decode()

    return await get()


async def _session(pk: int):
    from channels.db import database_sync_to_async

    from playground.transcripts.models import Session

    return await database_sync_to_async(Session.objects.get)(pk=pk)


async def test_the_system_monitor_example_an_app_only_tool():
    """Its app-only tool (visibility ["app"]) is listed with it, and an app may call it."""
    async with live_tab('id="catalogue"', ">poll-system-stats<", **example(MONITOR)) as (_user, session, comm):
        call_id = await call_with_app(comm, "get-system-info")
        await send(comm, action="app_open", instance="m1", call_id=call_id)
        opened = await inbox(comm, kind="open", instance="m1")
        poll = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "poll-system-stats"}}
        await send(
            comm,
            action="app_frame",
            instance="m1",
            call_id=call_id,
            direction="recv",
            frame=json.dumps(poll),
            perform="1",
        )
        reply = await inbox(comm, kind="reply", id=7)
    catalogue = (await _session(session.pk)).catalogue
    only = next(t for t in catalogue["tools"] if t["name"] == "poll-system-stats")
    assert only["_meta"]["ui"]["visibility"] == ["app"]
    shown = regions.catalogue(session.pk, catalogue)
    assert shown.count(">app-only<") == 1 and shown.count('class="hint app-ui"') == 1
    assert "<html" in opened["html"].lower()
    assert "structuredContent" in reply["result"]


def test_apps_are_off_for_a_server_that_turned_them_off_and_in_replays(settings):
    from playground.registry.models import Server
    from playground.sessions.features import BY_NAME
    from tests.sessions.fakes import FakeClient, FakeSession

    apps = BY_NAME["apps"]
    assert apps.prepare(Server(apps_enabled=True)) == {"enabled": True}
    assert apps.prepare(Server(apps_enabled=False)) == {"enabled": False}
    assert apps.prepare(Server(apps_enabled=True), replay_of=1) == {"enabled": False}
    settings.PLAYGROUND_APPS_SANDBOX = ""
    assert apps.prepare(Server(apps_enabled=True)) == {"enabled": False}
    session = FakeSession(FakeClient())
    assert session.add("apps", {"enabled": False}).capabilities() == {}
    assert session.add("apps", {"enabled": True}).capabilities()["extensions"][EXTENSION_ID]


async def test_a_hostile_app_is_bounded_refused_and_counted():
    server = {"name": "hostile", "command": sys.executable, "args": [str(HOSTILE)]}
    async with live_tab('id="catalogue"', ">secret<", **server) as (_user, session, comm):
        call_id = await call_with_app(comm, "show")
        await send(comm, action="app_open", instance="h1", call_id=call_id)
        opened = await inbox(comm, kind="open", instance="h1")
        frame = {"action": "app_frame", "instance": "h1", "call_id": call_id, "direction": "recv"}
        secret = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "secret"}}
        await send(comm, **frame, frame=json.dumps(secret), perform="1")
        refused = await inbox(comm, kind="reply", id=2)
        unlisted = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "not-listed"}}
        await send(comm, **frame, frame=json.dumps(unlisted), perform="1")
        unknown = await inbox(comm, kind="reply", id=5)
        # Not JSON-RPC 2.0: the page answers it as malformed; the playground does not also run it.
        unversioned = {"id": 3, "method": "tools/call", "params": {"name": "show", "arguments": {}}}
        await send(comm, **frame, frame=json.dumps(unversioned), perform="1")
        await send(comm, **frame, frame="not json at all {")
        await send(comm, **frame, frame=json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"d": "x" * MAX_FRAME}}))
        flood = json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "debug", "data": 1}}
        )
        started = time.monotonic()
        for _ in range(1000):
            await send(comm, **frame, frame=flood)
        await receive_until(comm, "messages not recorded", timeout=30)
        elapsed = time.monotonic() - started
    rows = await events(session.pk)
    # Its policy: the domain that is not a domain is left out, and said.
    # Its huge policy: reduced to the spec's lists of domains, within the budget, what was cut said.
    csp = opened["csp"]
    assert set(csp) == {"connectDomains", "resourceDomains"}
    assert csp["connectDomains"][0] == "https://api.example.com" and len(csp["connectDomains"]) == MAX_DOMAINS - 2
    assert sum(len(d) + 1 for lst in csp.values() for d in lst) <= APP_POLICY.output
    said = opened["csp_rejected"]
    assert opened["permissions"] == ["camera", "clipboard-write"]
    assert any("unsafe-eval" in r for r in said) and any("'https://aaaa" in r and r.endswith("'…") for r in said)
    assert f"connectDomains: {5_003 - MAX_DOMAINS:,} more, beyond {MAX_DOMAINS}" in said
    assert any(r.startswith("resourceDomains: ") and APP_POLICY.says in r for r in said)
    assert any(r.startswith("keys the spec does not name: 'scriptSrc', '<b>key0</b>'") for r in said)
    assert len(json.dumps(opened)) < len(opened["html"]) + 20_000
    # A tool whose visibility leaves out apps: refused, never sent to the server.
    assert refused["error"]["code"] == -32601 and "not visible to apps" in refused["error"]["message"]
    assert not [m for m in sent(rows, "tools/call") if m["params"]["name"] == "secret"]
    # A tool the server did not list: refused likewise; each refusal is a note in the app's lane.
    assert unknown["error"]["code"] == -32601 and "not one the server listed" in unknown["error"]["message"]
    assert not [m for m in sent(rows, "tools/call") if m["params"]["name"] == "not-listed"]
    notes = [r["text"] for r in lane(rows) if r["dir"] == "note" and "refused" in (r.get("text") or "")]
    assert notes == [
        "app's tools/call refused: tool 'secret' is not visible to apps (its _meta.ui.visibility leaves out \"app\")",
        "app's tools/call refused: tool 'not-listed' is not one the server listed (tools/list)",
    ]
    assert len([m for m in sent(rows, "tools/call") if m["params"]["name"] == "show"]) == 1  # the host's own
    bridge = lane(rows)
    assert next(r for r in bridge if r.get("raw") == "not json at all {")["parse_error"]  # recorded as it came, flagged
    # The megabyte frame and most of the flood: not recorded, counted in a note.
    flooded = [r for r in bridge if (r.get("message") or {}).get("method") == "notifications/message"]
    assert len(flooded) <= BURST + RATE * (elapsed + 1)
    assert len(flooded) < 1000
    (note,) = [r for r in rows if r["dir"] == "note" and "not recorded" in (r.get("text") or "")]
    refused_counts = note["data"]["refused"]
    assert refused_counts[f"over {MAX_FRAME:,} bytes"] == 1
    assert refused_counts[f"over {RATE:g} a second"] == 1000 - len(flooded)
