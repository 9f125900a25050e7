"""Untrusted content in a real browser: a hostile server puts script payloads in every string it
controls; no script runs on the session page, after a reload, on the share page, or when the
exports are opened; `javascript:` URIs are never links and SVG is never rendered."""

from __future__ import annotations

import re
import sys
from urllib.parse import urljoin

from playwright.sync_api import Page, expect

from .helpers import ROOT, LiveBrowserTestCase

HOSTILE = ROOT / "tests" / "peers" / "hostile_server.py"
MISBEHAVING = ROOT / "tests" / "peers" / "misbehaving.py"
PAYLOAD = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'


class HostileServerTests(LiveBrowserTestCase):
    def call(self, tool: str, text: str | None = None) -> None:
        form = self.open_tool(tool)
        if text is not None:
            form.get_by_label("text", exact=True).fill(text)
        form.get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text(tool)

    def open_download(self, page: Page, href: str) -> str:
        """Open an export address in the browser: it must download, never render."""
        with page.expect_download() as info:
            try:
                page.goto(href)
            except Exception:  # navigation is aborted in favour of the download
                pass
        return open(info.value.path(), encoding="utf-8").read()

    def test_no_server_string_runs_as_script_anywhere(self) -> None:
        page = self.page
        self.log_in()
        self.add_server("Hostile", command=str(ROOT / ".venv" / "bin" / "python"), args=[str(HOSTILE), "stdio"])
        self.connect("echo")
        self.call("echo", PAYLOAD)
        expect(self.result().locator("pre.text").first).to_contain_text("window.__pwned=1")
        expect(self.result()).to_contain_text("image not shown")  # SVG and bad data are blocked
        expect(self.result()).to_contain_text("javascript:window.__pwned=1//")  # shown as text
        self.call("fail")
        expect(self.result()).to_contain_text("failure <script>")  # a JSON-RPC error message
        self.call("tool_error")
        expect(self.result()).to_contain_text("tool error <script>")  # an isError result
        page.locator("#catalogue").get_by_role("button", name=re.compile(r"^res ")).click()
        expect(self.result()).to_contain_text("resources/read")
        expect(page.get_by_role("log", name="Log messages")).to_contain_text("log <script>")  # echo's log
        # A tool named with the payload; a form generated from a hostile schema.
        page.locator("#catalogue").get_by_role("button", name=re.compile(r"^named <script>")).click()
        page.locator("#workspace form#tool-form").get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("named ok")
        form = self.open_tool("form")
        expect(form).to_contain_text("<script>window.__pwned=1</script>")  # titles, descriptions: text
        form.locator("select").select_option("plain")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("form plain <script>")
        # Server requests: an elicitation and a sampling request carrying payloads, answered no.
        for tool, words, button, outcome in (
            ("ask", "Question <script>", "Decline", "answered decline"),
            ("sample", "System <script>", "Reject", "sample"),
        ):
            self.open_tool(tool).get_by_role("button", name="Call tool").click()
            card = page.get_by_role("region", name="Server request")
            expect(card).to_contain_text(words)
            self.assert_inert(page)
            card.get_by_role("button", name=button).click()
            expect(card).to_have_count(0)
            expect(self.result()).to_contain_text(outcome)
        # A resource template and a prompt argument described with the payload.
        page.locator("#catalogue").get_by_role("button", name=re.compile(r"^tpl <script>")).click()
        expect(page.locator("#workspace")).to_contain_text("tpl://{name}")
        page.locator("#catalogue").get_by_role("button", name="hostile_prompt", exact=True).click()
        expect(page.locator("#workspace")).to_contain_text("Argument <script>")
        _request, response = self.exchange("tools/call")
        response.locator("summary").first.click()
        self.shot("1-session")
        self.assert_inert(page)
        expect(page.get_by_role("status")).to_have_text("connected")  # the page works on

        page.reload()
        expect(self.transcript()).to_contain_text("starting <script>")  # stderr, replayed
        self.assert_inert(page)

        href = self.share()
        shared = self.fresh_page(1280, 720)  # (the browser's default size)
        shared.on("pageerror", lambda exc: self.js_errors.append(f"share page: {exc}"))
        shared.goto(href)
        expect(self.transcript(shared)).to_contain_text("Instructions")
        self.shot("2-share", shared)
        self.assert_inert(shared)

        exports = [
            urljoin(shared.url, shared.get_by_role("link", name=n, exact=True).get_attribute("href"))
            for n in ("Download JSONL", "JSON")
        ]
        exports += [
            self.url(f"/sessions/{page.url.rstrip('/').rsplit('/', 1)[1]}/export.{ext}") for ext in ("jsonl", "json")
        ]
        for url in exports:
            viewer = shared.context.new_page() if "/share/" in url else self.context.new_page()
            text = self.open_download(viewer, url)
            assert "window.__pwned=1" in text  # the payload is in there, as data
            assert viewer.evaluate("typeof window.__pwned") == "undefined"
            viewer.close()
        self.assert_no_js_errors()


class FloodedPageTests(LiveBrowserTestCase):
    """The page's own window: every line of a flood reaches it here (the server-side budget is
    lifted), and it keeps its last PLAYGROUND_PAGE_KEEP_LINES and goes on answering."""

    KEEP = 300
    env = {"PLAYGROUND_PAGE_MAX_LINES": "1000000", "PLAYGROUND_PAGE_KEEP_LINES": str(KEEP)}

    def test_a_flood_keeps_the_page_to_its_window_and_responsive(self) -> None:
        page = self.page
        self.log_in()
        self.add_server("Flood", command=sys.executable, args=[str(MISBEHAVING), "flood", "1000"])
        self.connect("go")
        self.open_tool("go").get_by_role("button", name="Call tool").click()
        expect(self.result()).to_contain_text("flood done")
        lines = page.locator("#transcript-lines > details")
        # (the schema lint's note on what it sampled of the flood comes when the flood is over, any time after)
        frames = page.locator("#transcript-lines > details:not(.kind-lint)")
        answer = lines.filter(has_text="flood done")  # the call's answer: the flood's tail arrived
        expect(answer).to_have_count(1)
        expect(frames.last).to_have_id(answer.get_attribute("id"))
        assert lines.count() == self.KEEP  # the window, not all 1,000 lines
        expect(page.locator('#transcript-lines > details[data-method="tools/call"]')).to_have_count(0)  # left it
        self.shot("flooded")
        page.get_by_role("button", name="Ping").click()
        expect(self.result()).to_contain_text("ping")
        _ping, pong = self.exchange("ping")
        expect(frames.last).to_have_id(pong.get_attribute("id"))
        assert lines.count() == self.KEEP  # still windowed
        self.assert_no_js_errors()
