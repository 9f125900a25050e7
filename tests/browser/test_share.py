"""Share links and untrusted content: a read-only page for anyone with the link, secrets
masked on the page and in its exports, and server text never executed as HTML."""

from __future__ import annotations

import json
from urllib.parse import urljoin, urlsplit

import pytest
from playwright.sync_api import Page, expect

from .helpers import HttpPeer, LiveBrowserTestCase, peer_args

ENV_SECRET = "s3cr3t-env-456"
HEADER_SECRET = "s3cr3t-value-123"
MASK = "••••"
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'


class ShareTests(LiveBrowserTestCase):
    def call_echo(self, text: str) -> None:
        form = self.open_tool("echo")
        form.get_by_label("text", exact=True).fill(text)
        form.get_by_role("button", name="Call tool").click()
        expect(self.result().locator("pre.text").first).to_have_text(text)
        _request, response = self.exchange("tools/call")
        expect(response).to_be_attached()

    def open_logged_out(self, href: str) -> tuple[Page, list[str]]:
        """The share link in a fresh context (no cookies); records any websocket it opens."""
        page = self.fresh_page()
        page.on("pageerror", lambda exc: self.js_errors.append(f"share page: {exc}"))
        sockets: list[str] = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        page.goto(href)
        page.wait_for_load_state("networkidle")
        self.replayed(page)
        expect(page.get_by_role("link", name="Add server")).to_have_count(0)  # not logged in
        return page, sockets

    def assert_read_only(self, page: Page, sockets: list[str]) -> None:
        # A live session's share (these tests share live ones) follows it over its own read-only
        # socket, and nothing else.
        token = page.url.rstrip("/").rsplit("/", 1)[-1]
        expect(page.locator("[hx-ws\\:connect]")).to_have_count(1)
        assert sockets and all(urlsplit(url).path == f"/ws/share/{token}/" for url in sockets), sockets
        for selector in ("form", "[hx-ws\\:send]", "[hx-post]", "textarea"):
            expect(page.locator(selector)).to_have_count(0)
        # It may fetch its own read-only parts (the Model view's last tool result), nothing else.
        fetches = page.locator("[hx-get]").evaluate_all("els => els.map(e => e.getAttribute('hx-get'))")
        assert all(url.startswith(f"/share/{token}/") for url in fetches), fetches
        for name in ("Call tool", "Share", "Disconnect", "Reconnect", "Ping", "Connect", "Send"):
            expect(page.get_by_role("button", name=name, exact=True, include_hidden=True)).to_have_count(0)

    def assert_exports_clean(self, page: Page, secrets: list[str]) -> None:
        for name in ("Download JSONL", "JSON"):
            href = urljoin(page.url, page.get_by_role("link", name=name, exact=True).get_attribute("href"))
            response = page.request.get(href)
            assert response.ok, (href, response.status)
            text = response.text()
            assert "tools/call" in text
            assert MASK in text
            for secret in secrets:
                assert secret not in text, f"{secret!r} leaked in {href}"
            if name == "JSON":
                assert json.loads(text)["events"]
            else:
                assert all(json.loads(line) for line in text.splitlines())

    def test_share_is_read_only_and_masks_env_secret(self) -> None:
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("Peer with a token", command=command, args=args, env={"API_TOKEN": ENV_SECRET})
        self.connect("echo")
        self.call_echo(f"the token is {ENV_SECRET}")
        # The owner sees what the server said; the share must not.
        expect(self.transcript()).to_contain_text(ENV_SECRET)
        href = self.share()
        self.shot("1-shared")

        page, sockets = self.open_logged_out(href)
        log = self.transcript(page)
        expect(log).to_be_visible()
        request, response = self.exchange("tools/call", page)
        expect(response).to_contain_text(f"the token is {MASK}")
        self.shot("2-share-page", page)
        assert ENV_SECRET not in page.content()
        self.assert_read_only(page, sockets)
        self.assert_exports_clean(page, [ENV_SECRET])
        self.assert_no_js_errors()

    def test_share_masks_header_secret_over_http(self) -> None:
        pytest.importorskip(
            "playground.mcp.transports.streamable_http", reason="the Streamable HTTP transport is not written yet"
        )
        peer = HttpPeer()
        self.addCleanup(peer.stop)
        self.log_in()
        self.add_server(
            "HTTP peer with a header",
            transport="Streamable HTTP",
            url=peer.url,
            headers={"Authorization": f"Bearer {HEADER_SECRET}"},
        )
        self.connect("echo")
        # The bare credential, without its "Bearer " scheme: a server may echo just that.
        self.call_echo(f"the header was {HEADER_SECRET}")
        href = self.share()

        page, sockets = self.open_logged_out(href)
        _request, response = self.exchange("tools/call", page)
        expect(response).to_contain_text(f"the header was {MASK}")
        self.shot("1-share-page", page)
        assert HEADER_SECRET not in page.content()
        self.assert_read_only(page, sockets)
        self.assert_exports_clean(page, [HEADER_SECRET])
        self.assert_no_js_errors()

    def test_hostile_html_in_results_is_text(self) -> None:
        page = self.page
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("Hostile echo", command=command, args=args)
        self.connect("echo")
        self.call_echo(HOSTILE)
        _request, response = self.exchange("tools/call")
        response.locator("summary").first.click()  # open the pretty JSON too
        expect(response.locator("pre.json")).to_be_visible()
        self.shot("1-session")
        self.assert_inert(page)
        page.reload()  # replayed from the database
        expect(self.result().locator("pre.text").first).to_have_text(HOSTILE)
        self.assert_inert(page)

        shared, _sockets = self.open_logged_out(self.share())
        _request, response = self.exchange("tools/call", shared)
        response.locator("summary").first.click()
        expect(response.locator("pre.json")).to_contain_text("onerror")
        self.shot("2-share-page", shared)
        self.assert_inert(shared)
        self.assert_no_js_errors()
