"""Watch a host in Chromium: the region's entries are valid JSON with Copy; a host's connection
(the SDK client, its lines relayed and uploaded per the capture's contract with the token the
copied entry carries) appears in the server's list as "captured from ..." and its page follows
the uploads live; then it is replayed against the server."""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

import anyio
import httpx
from playwright.sync_api import expect

from tests.capture.helpers import ENV_SECRET, host_exchange

from .helpers import SDK_PEER, LiveBrowserTestCase


def recorded_exchange() -> list[dict]:
    """A real host's exchange (run in a thread of its own: the test thread runs Playwright's loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, host_exchange).result()


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
        token, server_id = entry["env"]["PLAYGROUND_CAPTURE_TOKEN"], int(args[args.index("--capture-server") + 1])

        # The host's connection, uploaded as the capture would: its first part, then the rest live.
        records = [{**r, "server": server_id} for r in recorded_exchange()]
        echo = next(r["i"] for r in records if r["kind"] == "frame" and "hello capture" in r.get("text", ""))

        def upload(part: list[dict]) -> None:
            answer = httpx.post(
                f"{self.live_server_url}/capture/v1/frames",
                content="".join(json.dumps(r) + "\n" for r in part),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"},
            )
            assert answer.status_code == 200, answer.text

        upload(records[:echo])
        page.reload()
        link = page.get_by_role("link", name="captured from test-host 9.8.7")
        expect(link).to_be_visible()
        link.click()
        page.wait_for_load_state("load")
        host = page.get_by_role("region", name="The host")
        expect(host.locator('[data-capability="elicitation"]')).to_have_text("elicitation: yes")
        expect(page.get_by_role("button", name="Disconnect")).to_have_count(0)
        expect(page.get_by_role("status")).to_have_text("connected")
        log = self.transcript()
        expect(log.locator('.ev-send[data-method="tools/list"]')).to_have_count(1)
        expect(log).not_to_contain_text("hello capture")
        upload(records[echo:])
        expect(log).to_contain_text("hello capture")
        expect(log).to_contain_text("a line on stderr")
        expect(page.get_by_role("status")).to_have_text("ended")
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
