"""Check server, as a person uses it: the button on a server's page, the form fetching the
tool list on request with the read-only tool ticked, the report region filling row by row, a row's link to its transcript
line, and the report on the session's share page."""

from __future__ import annotations

import re
import sys

from playwright.sync_api import expect

from .helpers import ROOT, LiveBrowserTestCase

FAULTS = str(ROOT / "tests" / "peers" / "check_faults.py")
HOSTILE = str(ROOT / "tests" / "peers" / "hostile_server.py")


class CheckServerTests(LiveBrowserTestCase):
    def start_check(self, name: str, *args: str) -> None:
        page = self.page
        self.log_in()
        self.add_server(name, command=sys.executable, args=list(args))
        page.get_by_role("link", name="Check server").click()
        expect(page.get_by_role("heading", name=f"Check {name}")).to_be_visible()
        # A new server: no session listed its tools, and opening the form started nothing.
        expect(page.get_by_text("No session of this server has listed its tools yet.")).to_be_visible()
        expect(page.get_by_role("checkbox")).to_have_count(0)
        self.shot("form-before-fetch")
        page.get_by_role("button", name="Fetch the tool list").click()
        expect(page.get_by_text("The tools the server lists now.")).to_be_visible()

    def report(self):
        return self.page.get_by_role("region", name="Server check")

    def test_check_form_report_links_and_share(self):
        page = self.page
        self.start_check("checked", FAULTS, "none")
        # The tools come from the server; the read-only one is ticked, the other is not.
        go = page.get_by_role("checkbox", name=re.compile(r"^go\b"))
        other = page.get_by_role("checkbox", name=re.compile(r"^other\b"))
        expect(go).to_be_checked()
        expect(other).not_to_be_checked()
        expect(page.get_by_text("Calling a tool runs it, with its side effects")).to_be_visible()
        self.shot("form")
        page.get_by_role("button", name="Start check").click()
        expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
        report = self.report()
        expect(report).to_be_visible()
        # (The running summary says "0 failed" from the start: wait for the end, then read it.)
        try:
            expect(report.locator(".check-summary")).not_to_contain_text("Running", timeout=60_000)
        except AssertionError as exc:
            state = page.locator("#session-state").inner_text()
            raise AssertionError(f"{exc}\nthe page's state: {state}\n{self.sessions_said()}") from None
        expect(report.locator(".check-summary")).to_contain_text("0 failed")
        call = report.locator('[data-check="tools/call: go"]')
        expect(call.locator(".check-status")).to_have_text("pass")
        expect(call).to_contain_text('called with {"n": 1}')
        expect(report.locator('[data-check="timing"]')).to_be_visible()
        expect(page.get_by_role("status")).to_have_text("ended")
        # The check's own invalid probes are marked on their lines, not counted in the header.
        expect(page.locator("#schema-lint")).to_have_text("no schema problems")
        probe = self.transcript().locator('[data-method="mcp-playground-check/no-such-method"]').first
        expect(probe.locator(".schema-flag")).to_have_text("schema problem, sent on purpose")
        probe.locator("summary").first.click()
        expect(probe.get_by_role("group", name="schema problem")).to_contain_text(
            "Sent invalid on purpose (the server check: a method that does not exist)"
        )
        self.shot("report")

        # A row's link scrolls its transcript line into view.
        link = report.locator('[data-check="ping"] .check-seqs a').first
        seq = link.get_attribute("data-ev")
        link.click()
        target = self.transcript().locator(f"#ev-{seq}")
        expect(target).to_have_attribute("data-method", "ping")
        expect(target).to_be_in_viewport()
        box, pane = target.bounding_box(), self.transcript().bounding_box()
        assert box and pane and pane["y"] <= box["y"] <= pane["y"] + pane["height"], (box, pane)
        self.shot("linked-line")

        # The share page shows the saved report, read-only, with the same links.
        href = self.share(page)
        shared = self.fresh_page()
        shared.goto(href)
        shared_report = shared.get_by_role("region", name="Server check")
        expect(shared_report.locator('[data-check="tools/call: go"] .check-status')).to_have_text("pass")
        expect(shared_report.locator(".check-summary")).to_contain_text("0 failed")
        expect(shared.locator("form")).to_have_count(0)
        shared_link = shared_report.locator('[data-check="ping"] .check-seqs a').first
        shared_link.click()
        expect(shared.locator(f"#ev-{shared_link.get_attribute('data-ev')}")).to_be_in_viewport()
        self.shot("share", shared)
        self.assert_no_js_errors()

    def test_a_failing_check_shows_the_fail_and_why(self):
        self.start_check("pinger", FAULTS, "ping-fails")
        self.page.get_by_role("button", name="Start check").click()
        report = self.report()
        expect(report.locator(".check-summary")).to_contain_text("1 failed", timeout=60_000)
        ping = report.locator('[data-check="ping"]')
        expect(ping.locator(".check-status")).to_have_text("fail")
        expect(ping).to_contain_text("ping broke")
        self.assert_no_js_errors()

    def test_a_hostile_server_s_strings_in_the_report_are_text(self):
        """The SDK server with script payloads: its tool named with one, ticked and called, and its
        error messages quoted in the rows are shown as text, live and after a reload; no script runs."""
        page = self.page
        self.start_check("hostile", HOSTILE, "stdio")
        page.get_by_role("checkbox", name=re.compile(r"^fail\b")).check()
        page.get_by_role("checkbox", name=re.compile(r"^named <script>")).check()
        page.get_by_role("button", name="Start check").click()
        report = self.report()
        summary = report.locator(".check-summary")
        expect(summary).not_to_contain_text("Running", timeout=60_000)
        expect(summary).to_contain_text("Tools called: fail, named <script>window.__pwned=1</script>")
        for shown in ("live", "reloaded"):  # live, then rendered from the saved report
            expect(report.locator('[data-check="tools/call: fail"]')).to_contain_text(
                'error -32000: failure <script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
            )
            named = report.locator('[data-check^="tools/call: named <script>window.__pwned=1</script>"]')
            expect(named.locator(".check-status")).to_have_text("pass")
            expect(report.locator('[data-check="tools: names"]')).to_contain_text(
                "'named <script>window.__pwned=1</script>…' is 161 characters"
            )
            self.assert_inert(page)
            self.shot(f"hostile-report-{shown}")
            if shown == "live":
                page.reload()
                report = self.report()
        self.assert_no_js_errors()
