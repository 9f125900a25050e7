"""The OAuth flow's own requests (metadata, registration, tokens) pass the same address guard
as MCP traffic: a server's WWW-Authenticate must not steer the playground at refused addresses."""

from __future__ import annotations

from playground.mcp.auth.recorder import Recorder
from playground.mcp.events import Tap
from playground.mcp.netguard import NetGuard


async def test_flow_requests_go_through_the_guard():
    tap = Tap()
    notes = []
    tap.subscribe(notes.append)
    refuse_all = NetGuard(lambda ip: "refused in this test")
    recorder = Recorder(tap, lambda: [], 5.0, refuse_all.client)
    exchange = await recorder.send("prm", "GET", "http://127.0.0.1:9/.well-known/oauth-protected-resource")
    assert exchange.status is None and "refused in this test" in (exchange.error or "")
    allow_all = NetGuard(lambda ip: None)
    exchange = await Recorder(tap, lambda: [], 5.0, allow_all.client).send("prm", "GET", "http://127.0.0.1:9/x")
    assert exchange.error and "refused in this test" not in exchange.error  # the OS refused, not the guard
