"""Replay on a captured session: the host's own requests go to the registered server again and
the Differences come, as for any recorded session."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from playground.mcp.replay.replayer import MASKED_SENT
from playground.mcp.secrets import MASK
from playground.sessions.live.worker import start_session
from playground.transcripts.models import Session
from tests.mcp_cli import mcp
from tests.sessions.helpers import communicator, receive_until, stop_all

from .helpers import ENV_SECRET, SDK_SERVER, body
from .test_live import setup, upload

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_captured_session_replays_against_its_server(exchange):
    user, server, token = await setup()
    captured = await database_sync_to_async(Session.objects.get)(
        pk=(await upload(token, body(exchange, server.pk)))["session"]
    )
    replay = await start_session(server, user, replay_of=captured)
    tab = communicator(replay.pk, user)
    try:
        await tab.connect()
        await receive_until(tab, 'data-state="done"', timeout=60)
    finally:
        await tab.disconnect()
        await stop_all()
    report = (await database_sync_to_async(Session.objects.get)(pk=replay.pk)).report
    requests = [(r["status"], r["method"], r["name"]) for r in report["rows"] if r["kind"] == "request"]
    # The host's requests, in its order; the server's elicitation answered as the host answered it.
    assert [(m, n) for _, m, n in requests] == [
        ("tools/list", ""),
        ("tools/call", "echo"),
        ("tools/call", "stderr_line"),
        ("tools/call", "echo"),
        ("tools/call", "ask_name"),
    ]
    assert all(status == "same" for status, _, _ in requests), requests
    assert report["answered_from_recording"] == 1 and report["state"] == "done"
    assert report["about"]["source"] == captured.pk


async def test_a_masked_export_replays_its_masked_values_and_says_so(exchange, tmp_path):
    """The CLI replays the captured session's export, whose env value is masked: the request goes
    as recorded (with the mask) and its row says so."""
    user, server, token = await setup()
    session_id = (await upload(token, body(exchange, server.pk)))["session"]

    def export() -> bytes:
        from django.test import Client

        owner = Client()
        owner.force_login(user)
        return b"".join(owner.get(f"/sessions/{session_id}/export.jsonl").streaming_content)

    path = tmp_path / "captured.jsonl"
    path.write_bytes(await database_sync_to_async(export)())
    assert ENV_SECRET not in path.read_text() and MASK in path.read_text()
    proc = await database_sync_to_async(mcp)("--replay", str(path), "--", *SDK_SERVER)
    masked = [line for line in proc.stdout.splitlines() if MASKED_SENT in line]
    assert len(masked) == 1 and "tools/call echo" in masked[0], proc.stdout + proc.stderr
