"""OAuth 2.1 from the page against real authorization servers started here on loopback (the
conformance suite's mock; the official SDK's authorization server): the browser sent to it and
back through /oauth/callback/, the session going on, the Authorization view listing every step;
a pre-registered client from the settings, JWT claims, Refresh and Revoke; and a flow the client
refuses, shown with where it stopped and what the spec expected."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.auth_peer import auth_mock, sdk_auth_server
from tests.peers.sdk_auth_server import PRE_REGISTERED

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
            for step in (
                "challenge",
                "resource-metadata",
                "authorization-server-metadata",
                "registration",
                "authorization-request",
                "authorization-response",
                "token",
                "retry",
                "step-up",
            ):
                expect(steps.locator(f'li.auth-step[data-step="{step}"]').first).to_be_visible()
            expect(steps.locator('li.auth-step[data-step="token"][data-status="ok"]')).to_have_count(2)
            # The 401 and its header, each document fetched with its body, the token response masked.
            expect(steps).to_contain_text('WWW-Authenticate: Bearer scope="mcp:basic"')
            prm = steps.locator('li.auth-http[data-step="resource-metadata"]').first
            prm.locator("summary").click()
            expect(prm).to_contain_text('"authorization_servers"')
            request = steps.locator('li.auth-step[data-step="authorization-request"]').first
            expect(request.get_by_role("table", name="Parameters of the authorization-request")).to_contain_text(
                "code_challenge_methodS256"
            )
            token = steps.locator('li.auth-http[data-step="token"]').first
            token.locator("summary").click()
            expect(token).to_contain_text('"access_token": "••••"')
            expect(token).to_contain_text("code=••••")
            record = page.get_by_role("region", name="Token from http://localhost:")
            expect(record).to_contain_text("mcp:basic mcp:write")
            self.shot("3-authorization-view")
            self.assert_every_block_copies()  # each step's details, headers and bodies, the JWT claims
            html = page.content()
            assert "test-token-" not in html and "test-auth-code" not in html

            page.get_by_role("button", name="Revoke token").click()
            expect(steps.locator('li.auth-step[data-step="revoke"][data-status="ok"]')).to_be_visible()
            expect(record).to_contain_text("none")
            page.get_by_role("link", name="Back to the session").click()
            expect(page.get_by_role("status")).to_have_text("connected")
            expect(self.result()).to_contain_text("test")
        self.assert_no_js_errors()

    def test_pre_registered_client_jwt_claims_refresh_and_revoke(self) -> None:
        page = self.page
        client_id, secret = PRE_REGISTERED
        with sdk_auth_server(redirect_uri=self.url("/oauth/callback/")) as mcp_url:
            self.log_in()
            self.add_server("SDK protected", transport="Streamable HTTP", url=mcp_url)
            page.get_by_role("link", name="Authorization settings").click()
            page.get_by_label("Client ID", exact=True).fill(client_id)
            page.get_by_label("Client secret").fill(secret)
            page.get_by_label("Token endpoint authentication").select_option("client_secret_post")
            page.get_by_role("button", name="Save").click()

            page.get_by_role("button", name="Connect").click()
            card = page.get_by_role("region", name="Authorization required")
            expect(card).to_contain_text(f"client_id {client_id}")
            card.get_by_role("link", name=re.compile(r"^Authorize at 127\.0\.0\.1:\d+$")).click()
            expect(page.get_by_role("status")).to_have_text("connected")
            expect(self.tool_button("whoami")).to_be_visible()

            page.get_by_role("link", name="Authorization", exact=True).click()
            record = page.get_by_role("region", name="Token from http://127.0.0.1:")
            expect(record).to_contain_text(f"{client_id} (pre-registered, client_secret_post)")
            expect(record).to_contain_text("mcp:read")
            expect(record).to_contain_text(re.compile(r"Expires\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"))
            record.get_by_text("decoded (not verified)").click()
            expect(record).to_contain_text('"alg": "HS256"')
            expect(record).to_contain_text(f'"aud": "{mcp_url}"')
            first_claims = record.locator("pre").nth(1).text_content()
            steps = page.get_by_role("list", name="Authorization steps")
            expect(steps.locator('li.auth-http[data-step="registration"]')).to_have_count(0)

            page.get_by_role("button", name="Refresh token").click()
            expect(steps.locator('li.auth-step[data-step="refresh"][data-status="ok"]')).to_be_visible()
            record.get_by_text("decoded (not verified)").click()
            expect(record.locator("pre").nth(1)).not_to_have_text(first_claims)  # a new jti, iat
            self.shot("jwt-claims-after-refresh")

            page.get_by_role("button", name="Revoke token").click()
            expect(steps.locator('li.auth-step[data-step="revoke"][data-status="ok"]')).to_be_visible()
            expect(steps.locator('li.auth-http[data-step="revoke"]')).to_have_count(2)
            expect(steps.locator('li.auth-http[data-step="revoke"]').first).to_contain_text("HTTP 200")
            expect(record).to_contain_text("Tokennone")
            html = page.content()
            assert secret not in html and "eyJ" not in html  # no token (a JWT starts so) on the page
        self.assert_no_js_errors()

    def test_a_refused_flow_says_where_it_stopped_and_what_the_spec_expected(self) -> None:
        page = self.page
        with auth_mock("auth/iss-wrong-issuer", "2026-07-28") as mcp_url:
            self.log_in()
            self.add_server("Mix-up", transport="Streamable HTTP", url=mcp_url, era="Modern")
            page.get_by_role("button", name="Connect").click()
            card = page.get_by_role("region", name="Authorization required")
            card.get_by_role("link", name=re.compile(r"^Authorize at ")).click()

            # The authorization server sent the browser back with another issuer's iss: refused.
            expect(page.get_by_role("status")).to_have_text("failed")
            expect(page.locator("#session-state .end-reason")).to_contain_text(
                "HTTP 401: authorization refused at authorization-response: the response's iss"
            )
            page.get_by_role("link", name="Authorization", exact=True).click()
            outcome = page.get_by_role("region", name="Authorization outcome")
            expect(outcome).to_contain_text("Authorization refused at authorization-response")
            expect(outcome).to_contain_text("the response's iss 'https://evil.example.com' is not the recorded issuer")
            expect(outcome).to_contain_text("The spec expects: iss identical to the issuer")
            steps = page.get_by_role("list", name="Authorization steps")
            expect(steps.locator('li.auth-step[data-status="refused"]')).to_have_count(1)
            expect(steps.locator('li[data-step="token"]')).to_have_count(0)
            self.shot("refused")
        self.assert_no_js_errors()
