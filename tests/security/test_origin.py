"""The session websocket over real upgrades to a daphne process: only the page's own origin
(scheme, host and port) and the configured trusted origins get a socket."""

from __future__ import annotations

import asyncio

import pytest
import websockets

from tests.conftest import PEERS
from tests.daphne_process import app_env, connect, log_in, set_up, start_daphne, stop_daphne
from tests.http_peers import free_port


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """A daphne process with a live session of the logged-in user: (port, cookie, session id)."""
    tmp = tmp_path_factory.mktemp("origin")
    port = free_port()
    env = app_env(
        PLAYGROUND_SQLITE_PATH=str(tmp / "db.sqlite3"), PLAYGROUND_TRUSTED_ORIGINS="https://playground.example.org"
    )
    link = set_up(env, port)
    proc = start_daphne(env, port, tmp / "daphne.log")
    try:
        browser = log_in(link)
        session_id = connect(browser, port, "quiet", [str(PEERS / "misbehaving.py"), "silent"])
        yield port, f"sessionid={browser.cookies['sessionid']}", session_id
    finally:
        stop_daphne(proc)


async def _upgrade(port: int, cookie: str, session_id: int, origin: str | None) -> str:
    """ "open" when the socket opened and the replay came; else how it was refused."""
    try:
        async with websockets.connect(
            f"ws://127.0.0.1:{port}/ws/sessions/{session_id}/",
            origin=origin,
            additional_headers={"Cookie": cookie},
            open_timeout=10,
        ) as ws:
            first = await asyncio.wait_for(ws.recv(), 10)
            return "open" if 'id="transcript-lines"' in first else f"unexpected: {first[:100]}"
    except websockets.InvalidStatus as exc:
        return f"HTTP {exc.response.status_code}"


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://127.0.0.1:{port}", True),  # the app's own page
        ("https://playground.example.org", True),  # PLAYGROUND_TRUSTED_ORIGINS
        ("http://127.0.0.1:3000", False),  # a dev server on another port
        ("http://localhost:{port}", False),  # another host name is another origin
        ("https://127.0.0.1:{port}", False),  # another scheme
        ("null", False),  # a sandboxed frame, a file:// page
        (None, False),  # no Origin at all
    ],
)
def test_only_the_apps_own_origin_and_trusted_ones_get_a_socket(app, origin, allowed):
    port, cookie, session_id = app
    got = asyncio.run(_upgrade(port, cookie, session_id, origin.format(port=port) if origin else None))
    assert got == ("open" if allowed else "HTTP 403")
