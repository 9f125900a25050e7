"""The rough edges a newcomer's second walkthrough found (issue 31), in Chromium."""

from __future__ import annotations

import re
import sys

from playwright.sync_api import expect

from .helpers import ROOT, SDK_PEER, LiveBrowserTestCase

FAULTS = str(ROOT / "tests" / "peers" / "check_faults.py")


class RoughEdgeTests(LiveBrowserTestCase):
    def test_a_result_breaking_the_schema_says_what_is_wrong_where_the_result_is(self) -> None:
        """A text content item without `text` showed an empty grey box."""
        self.log_in()
        self.add_server("No text", command=sys.executable, args=[FAULTS, "text-without-text"])
        self.connect("go")
        self.call_tool("go", n=1)
        result = self.result()
        problem = result.get_by_role("note")
        expect(problem).to_contain_text("schema problem")
        expect(problem).to_contain_text("a text block needs `text` (a string)")
        expect(result.locator(".content-invalid pre")).to_contain_text('"type": "text"')
        self.shot("result-schema-problem")
        self.assert_no_js_errors()

    def test_exports_mask_secrets_unless_the_owner_ticks_include_secrets(self) -> None:
        self.log_in()
        self.add_server("Exports", command=sys.executable, args=[FAULTS, "none"], env={"API_TOKEN": "tok-123456789"})
        self.connect("go")
        page = self.page
        export = page.get_by_role("link", name="Export JSONL")
        expect(export).not_to_have_attribute("href", re.compile(r"secrets="))
        assert "tok-123456789" not in page.request.get(self.url(export.get_attribute("href"))).text()
        page.get_by_label("exports: include secrets").check()
        expect(export).to_have_attribute("href", re.compile(r"\?secrets=1$"))
        page.get_by_label("exports: include secrets").uncheck()
        expect(export).not_to_have_attribute("href", re.compile(r"secrets="))
        self.assert_no_js_errors()

    def test_the_home_page_lists_live_sessions_and_stop_ends_one(self) -> None:
        self.log_in()
        self.add_server("Left running", command=sys.executable, args=[FAULTS, "none"])
        self.connect("go")
        page = self.page
        session_url = page.url
        page.goto(self.url("/"))
        live = page.get_by_role("region", name="Live sessions")
        entry = live.get_by_role("listitem").filter(has_text="Left running")
        expect(entry).to_be_visible()
        entry.get_by_role("button", name="Stop").click()
        expect(page.get_by_role("region", name="Live sessions")).to_contain_text("None: no server is running for you.")
        page.goto(session_url)
        expect(page.get_by_role("status")).to_have_text("ended")
        self.assert_no_js_errors()

    def test_the_copy_button_covers_no_text_of_a_long_one_line_result(self) -> None:
        self.log_in()
        self.add_server("SDK", command=sys.executable, args=[str(SDK_PEER), "stdio"])
        self.connect("echo")
        long_word = "x" * 400  # one line, wrapped by the box
        self.call_tool("echo", text=long_word)
        text = self.result().locator("pre.text").first
        expect(text).to_contain_text(long_word)
        overlap = text.evaluate("""(pre) => {
            const button = pre.parentElement.querySelector(':scope > .copy').getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(pre);
            return [...range.getClientRects()].some((r) => r.right > button.left && r.left < button.right
                                                          && r.bottom > button.top && r.top < button.bottom);
        }""")
        assert overlap is False
