"""Schema lint in Chromium: a server that breaks the MCP schema of its version once gets a
"schema problem" badge on that frame's transcript line (the JSON pointer, the schema's message,
a link to the spec section), a count in the session header, live and after a reload, and the
same on the read-only share page."""

from __future__ import annotations

import re
import sys

from playwright.sync_api import Page, expect

from tests.sessions.helpers import BREAKER, BROKEN

from .helpers import LiveBrowserTestCase, peer_args

SPEC = "https://modelcontextprotocol.io/specification/"


class SchemaLintTests(LiveBrowserTestCase):
    def badge(self, page: Page, pointer: str, message: str, version: str) -> None:
        """The flagged line: open it, read its problem, follow nothing (the link opens a new tab)."""
        flag = self.transcript(page).locator(".ev").get_by_text("schema problem", exact=True)
        expect(flag).to_have_count(1)
        expect(flag).to_be_visible()
        flag.click()  # the line opens
        group = self.transcript(page).get_by_role("group", name="schema problem")
        expect(group).to_be_visible()
        expect(group.locator("li")).to_have_count(1)
        expect(group.locator("li")).to_contain_text(f"{pointer} {message}")
        link = group.get_by_role("link", name=re.compile(r"^spec: "))
        expect(link).to_have_attribute("href", re.compile(rf"^{re.escape(SPEC + version)}/"))
        expect(link).to_have_attribute("target", "_blank")

    def header(self, page: Page) -> None:
        expect(page.locator("#schema-lint")).to_have_text("1 schema problem")

    def test_each_version_s_broken_message_is_badged_counted_and_shared(self) -> None:
        self.log_in()
        page = self.page
        for version, (definition, pointer, message) in BROKEN.items():
            self.add_server(
                f"breaker {version}",
                command=sys.executable,
                args=[BREAKER, version],
                era="Modern" if version >= "2026" else "",
            )
            self.connect("go")
            expect(page.locator("#schema-lint")).to_be_visible()
            form = self.open_tool("go")
            form.get_by_role("button", name="Call tool").click()
            expect(self.result()).to_contain_text("went" if version != "2025-11-25" else "tools/call")
            self.header(page)
            self.badge(page, pointer, message, version)
            expect(self.transcript().get_by_role("group", name="schema problem")).to_contain_text(
                f"Breaks {definition} of MCP {version}"
            )
            if version == "2025-11-25":
                self.shot("live-badge")
            # Reloaded: from the database.
            page.reload()
            expect(page.get_by_role("status")).to_have_text("connected")
            self.replayed(page)
            self.header(page)
            self.badge(page, pointer, message, version)
            # Shared: read-only, the same.
            href = self.share(page)
            shared = self.fresh_page(1024, 800, color_scheme="dark")
            shared.goto(href)
            self.replayed(shared)
            self.header(shared)
            self.badge(shared, pointer, message, version)
            if version == "2025-11-25":
                self.shot("shared-dark", shared)
            page.get_by_role("button", name="Disconnect").click()
            expect(page.get_by_role("status")).to_have_text("ended")
        self.assert_no_js_errors()

    def test_a_valid_session_has_no_badge_and_says_so(self) -> None:
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("SDK peer", command=command, args=args)
        self.connect("echo")
        form = self.open_tool("echo")
        form.get_by_label("text", exact=True).fill("fine")
        form.get_by_role("button", name="Call tool").click()
        _request, response = self.exchange("tools/call")
        expect(self.page.locator("#schema-lint")).to_have_text("no schema problems")
        expect(self.transcript().locator(".schema-flag")).to_have_count(0)
        self.assert_no_js_errors()
