"""End to end: the official SDK client, as a host, runs the Watch a host entry (the real capture,
`manage.py mcp --capture`) against a running playground (live_server); the captured session is
what the host and the server said, and the token never reaches the server."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from django.test import Client as DjangoClient
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters, stdio_client

from playground.capture.entries import TOKEN_VARIABLE, stdio_entry
from playground.transcripts.models import Event, Session

ENV_SERVER = Path(__file__).resolve().parent / "env_server.py"
HOST = types.Implementation(name="e2e-host", version="1.2.3")
BLOB = 5_000_000  # characters of a tool's answer: a line longer than one upload (4 MB) can carry

pytestmark = pytest.mark.django_db(transaction=True)


async def _run_host(entry: dict[str, Any], errlog: Path) -> list[str]:
    """The SDK client started as a host starts an entry: its env merged onto the host's own; the
    capture's (and the server's) stderr goes to `errlog`; the capture's spill folder is the test's
    (no other capture's leftovers delivered here, none left in the person's)."""
    spill = {"PLAYGROUND_CAPTURE_SPILL_DIR": str(errlog.parent / "spill")}
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**os.environ, **spill, **entry["env"]}
    )
    with anyio.fail_after(60), errlog.open("w") as stderr:
        async with Client(stdio_client(params, errlog=stderr), mode="legacy", client_info=HOST) as client:
            tools = await client.list_tools()
            result = await client.call_tool("env", {"name": TOKEN_VARIABLE})
            blob = await client.call_tool("blob", {"size": BLOB})
            assert blob.content[0].text == "x" * BLOB
            return [t.name for t in tools.tools] + [result.content[0].text]


def _wait_ended(server_id: int) -> Session:
    """The session once its capture's end record has arrived (the capture uploads after the host
    closed it; bounded by the capture's own delivery)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        session = Session.objects.filter(server_id=server_id, kind=Session.Kind.CAPTURED).first()
        if session is not None and session.ended_at is not None:
            return session
        time.sleep(0.1)  # polling the database for a result, not synchronising threads
    raise AssertionError("no ended captured session")


def test_the_sdk_client_through_the_real_capture_into_a_running_playground(owner, live_server, tmp_path):
    user, server, token = owner
    server.command, server.args = sys.executable, [str(ENV_SERVER)]
    server.save()
    entry = stdio_entry(server, live_server.url, token)
    names = anyio.run(_run_host, entry, tmp_path / "stderr")
    assert names == ["env", "blob", "(unset)"]  # the token never reaches the server
    session = _wait_ended(server.pk)
    assert session.owner == user
    events = list(Event.objects.filter(session=session).order_by("seq").values_list("data", flat=True))
    methods = [(e["dir"], (e.get("message") or {}).get("method")) for e in events if e["dir"] in ("send", "recv")]
    assert ("send", "initialize") in methods and ("send", "tools/list") in methods
    assert ("send", "tools/call") in methods
    assert sum(1 for d, _ in methods if d == "recv") >= 3  # initialize, tools/list, tools/call answered
    assert any(e["dir"] == "stderr" and "env asked for" in e.get("text", "") for e in events)
    assert token not in str(events)
    # The 5 MB answer is one frame, whole (its size; stored cut as any frame over the recorded
    # size is), paired with its request: nothing dropped.
    (long,) = [e for e in events if e["dir"] == "recv" and e["size"] > BLOB]
    assert long["reply_to"] and long["truncated"] and not long.get("problems")
    assert not session.report.get("dropped")
    # (On a loaded machine the upload's lint budget may leave frames unchecked: its note follows.)
    assert [e for e in events if not str(e.get("text") or "").startswith("schema lint:")][-1]["kind"] == "closed"
    browser = DjangoClient()
    browser.force_login(user)
    response = browser.get(f"/servers/{server.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert f"captured from {HOST.name} {HOST.version}" in page


def test_a_wrong_token_records_nothing_and_the_host_is_unaffected(owner, live_server, tmp_path):
    _user, server, _token = owner
    server.command, server.args = sys.executable, [str(ENV_SERVER)]
    server.save()
    entry = stdio_entry(server, live_server.url, "wrong-token")
    assert anyio.run(_run_host, entry, tmp_path / "stderr") == ["env", "blob", "(unset)"]
    said = [line for line in (tmp_path / "stderr").read_text().splitlines() if "env asked for" not in line]
    assert len(said) == 1 and "token" in said[0].lower(), (
        said
    )  # the capture's one clear line; the server's own line passes through
    assert not Session.objects.filter(server=server, kind=Session.Kind.CAPTURED).exists()
