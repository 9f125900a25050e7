"""OAuth 2.1 from the page: a server behind a real authorization server (the conformance
suite's mock, on loopback, started here), the browser sent to it and back through
/oauth/callback/, the session going on, and the Authorization view listing every step."""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.auth_peer import auth_mock

from .helpers import LiveBrowserTestCase


class AuthorizationTests(LiveBrowserTestCase):

    def test_authorization_code_flow_through_the_browser(self) -> None:
        page = self.page
        with auth_mock("auth/scope-step-up", "2025-11-25") as mcp_url:
            self.log_in()
            self.add_server("Protected", transport="Streamable HTTP", url=mcp_url)
            page.get_by_role("link", name="Authorization settings").click()
            expect(page.get_by_label("Redirect mode")).to_have_value("browser")
            page.get_by_role("link", name="Cancel").click()

            page.get_by_role("button", name="Connect").click()
            expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
            card = page.get_by_role("region", name="Authorization required")
            expect(card).to_contain_text("mcp:basic")
            self.shot("1-authorize-card")
            card.get_by_role("link", name=re.compile(r"^Authorize at localhost:\d+$")).click()

            # The authorization server approves and redirects to our callback, which returns here.
            expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
            expect(page.get_by_role("status")).to_have_text("connected")
            expect(self.tool_button("test-tool")).to_be_visible()
            expect(card).to_have_count(0)

            # A tool call needs mcp:write: 403 insufficient_scope → step-up → the browser again.
            form = self.open_tool("test-tool")
            form.get_by_role("button", name="Call tool").click()
            card = page.get_by_role("region", name="Authorization required")
            expect(card).to_contain_text("mcp:basic mcp:write")
            card.get_by_role("link", name=re.compile(r"^Authorize at ")).click()
            expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
            self.shot("2-after-step-up")

            page.get_by_role("link", name="Authorization", exact=True).click()
            steps = page.get_by_role("list", name="Authorization steps")
            for step in ("challenge", "resource-metadata", "authorization-server-metadata", "registration",
                         "authorization-request", "authorization-response", "token", "retry", "step-up"):
                expect(steps.locator(f'li.auth-step[data-step="{step}"]').first).to_be_visible()
            expect(steps.locator('li.auth-step[data-step="token"][data-status="ok"]')).to_have_count(2)
            # The 401 and its header, each document fetched with its body, the token response masked.
            expect(steps).to_contain_text('WWW-Authenticate: Bearer scope="mcp:basic"')
            prm = steps.locator('li.auth-http[data-step="resource-metadata"]').first
            prm.locator("summary").click()
            expect(prm).to_contain_text('"authorization_servers"')
            token = steps.locator('li.auth-http[data-step="token"]').first
            token.locator("summary").click()
            expect(token).to_contain_text('"access_token": "••••"')
            expect(token).to_contain_text("code=••••")
            record = page.get_by_role("region", name="Token from http://localhost:")
            expect(record).to_contain_text("mcp:basic mcp:write")
            self.shot("3-authorization-view")
            html = page.content()
            assert "test-token-" not in html and "test-auth-code" not in html

            page.get_by_role("button", name="Revoke token").click()
            expect(steps.locator('li.auth-step[data-step="revoke"][data-status="ok"]')).to_be_visible()
            expect(record).to_contain_text("none")
            page.get_by_role("link", name="Back to the session").click()
            expect(page.get_by_role("status")).to_have_text("connected")
            expect(self.result()).to_contain_text("test")
        self.assert_no_js_errors()
