"""Watch a host in Chromium: the region's entries are valid JSON with Copy; a host (the official SDK
client) runs the copied entry as is — the real capture, `manage.py mcp --capture`, starting the
server — and its connection appears in the server's list as "captured from ...", whose page follows
the host's later calls live; then it is replayed against the server."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from playwright.sync_api import expect

from playground.mcp.capture.outbox import SPILL_DIR_VAR
from tests.capture.helpers import ENV_SECRET, HOST, _answer

from .helpers import SDK_PEER, LiveBrowserTestCase


async def run_host(entry: dict, spill: str, first_calls: threading.Event, go_on: threading.Event) -> None:
    """A host running the entry as it would (its env on top of the host's own, with a spill folder
    of the test's: what another capture left in the person's own is not delivered here, nor this
    one's left there): the first calls (`first_calls` set after them), then, once `go_on` is set,
    the rest (in a thread of its own: the test thread runs Playwright's)."""
    env = {**os.environ, SPILL_DIR_VAR: spill, **entry["env"]}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    with anyio.fail_after(90), open(os.devnull, "w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", client_info=HOST, elicitation_callback=_answer
        ) as client:
            await client.list_tools()
            assert (await client.call_tool("echo", {"text": "hello capture"})).content[0].text == "hello capture"
            first_calls.set()
            await anyio.to_thread.run_sync(go_on.wait)
            await client.call_tool("stderr_line", {"text": "later on stderr"})
            await client.call_tool("echo", {"text": f"key {ENV_SECRET}"})
            assert (await client.call_tool("ask_name", {})).content[0].text == "Hello, Ada!"


class WatchAHostTests(LiveBrowserTestCase):
    def test_entries_copy_and_a_captured_session_follows_live(self) -> None:
        page = self.page
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.live_server_url)
        self.log_in()
        self.add_server(
            "Captured peer", command=sys.executable, args=[str(SDK_PEER), "stdio"], env={"API_TOKEN": ENV_SECRET}
        )
        region = page.get_by_role("region", name="Watch a host")
        region.get_by_role("button", name="Create a capture token").click()
        blocks = region.locator(".host-entry")
        expect(blocks).to_have_count(3)
        self.shot("watch-a-host")
        first = json.loads(self.copy(blocks.nth(0).get_by_role("button", name="Copy")))
        entry = first["mcpServers"]["Captured peer"]
        assert (
            json.loads(self.copy(blocks.nth(1).get_by_role("button", name="Copy")))["servers"]["Captured peer"]["type"]
            == "stdio"
        )
        args = entry["args"]
        assert args[1:4] == ["mcp", "--capture", self.live_server_url] and entry["command"] == sys.executable
        assert args[args.index("--") + 1 :] == [sys.executable, str(SDK_PEER), "stdio"]
        assert entry["env"]["PLAYGROUND_CAPTURE_TOKEN"].startswith("mcpcap_")

        # The host: the official SDK client runs the copied entry (the real capture, which starts
        # the server); its first calls, then (once the page shows them) the rest, live.
        first_calls, go_on = threading.Event(), threading.Event()
        spill = tempfile.TemporaryDirectory()
        self.addCleanup(spill.cleanup)
        pool = ThreadPoolExecutor(1)
        self.addCleanup(pool.shutdown, cancel_futures=True)
        self.addCleanup(go_on.set)  # (a failure below lets the host finish)
        done = pool.submit(anyio.run, run_host, entry, spill.name, first_calls, go_on)
        assert first_calls.wait(90), done.exception() if done.done() else "the host's first calls"
        link = page.get_by_role("link", name="captured from test-host 9.8.7")
        deadline = time.monotonic() + 30
        while not link.count() and time.monotonic() < deadline:
            page.reload()  # the list is not live: reloaded until the capture's first upload has made it
        expect(link).to_be_visible()
        link.click()
        page.wait_for_load_state("load")
        host = page.get_by_role("region", name="The host")
        expect(host.locator('[data-capability="elicitation"]')).to_have_text("elicitation: yes")
        expect(page.get_by_role("button", name="Disconnect")).to_have_count(0)
        expect(page.get_by_role("status")).to_have_text("connected")
        log = self.transcript()
        expect(log.locator('.ev-send[data-method="tools/list"]')).to_have_count(1)
        expect(log).to_contain_text("hello capture")
        expect(log).not_to_contain_text("later on stderr")
        go_on.set()  # the rest of the host's calls, while the page is open
        expect(log).to_contain_text("later on stderr")
        done.result(timeout=60)
        expect(page.get_by_role("status")).to_have_text("ended")
        assert not os.listdir(spill.name)  # the playground took every record: nothing kept for later
        self.shot("captured-session")

        # The host's session as a regression test: replayed against the registered server.
        page.get_by_role("button", name="Replay", exact=True).click()
        page.get_by_label("Replay against").select_option(label="Captured peer")
        page.get_by_role("button", name="Start replay").click()
        region = page.get_by_role("region", name="Differences")
        expect(region).to_have_attribute("data-state", "done", timeout=60_000)
        expect(region.locator("#differences-summary")).to_contain_text("5 requests replayed: 5 same")
        self.shot("captured-replayed")
        assert not self.js_errors and not self.csp_violations, (self.js_errors, self.csp_violations)
