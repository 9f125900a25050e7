"""Setting up a server as a newcomer does: a whole command line typed as the Command, a form that
shows the chosen transport's fields, a slow server that keeps the session connecting, the wrong
transport for an endpoint, and a session that ended — each on real servers, in Chromium."""

from __future__ import annotations

import re
import shlex
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import expect

from .helpers import EVERYTHING, SDK_PEER, HttpPeer, LiveBrowserTestCase


class SetupTests(LiveBrowserTestCase):
    def at_widths(self, step: str) -> None:
        """Screenshots at 1440 and 800 px (looked at while writing these tests)."""
        for width in (1440, 800):
            self.page.set_viewport_size({"width": width, "height": 900})
            self.shot(f"{step}-{width}")
        self.page.set_viewport_size({"width": 1440, "height": 900})

    def status(self):
        return self.page.get_by_role("status")

    def test_the_form_shows_one_transport_and_splits_a_whole_command_line(self) -> None:
        page = self.page
        self.log_in()
        page.get_by_role("link", name="Add server").click()
        command, url = page.get_by_label("Command"), page.get_by_label("URL", exact=True)
        expect(command).to_be_visible()
        expect(url).to_be_hidden()
        expect(page.get_by_label("Headers")).to_be_hidden()
        era_help = page.locator("#id_era-help")
        expect(era_help).to_have_text(re.compile(r"^Legacy: the initialize handshake .*today\.$"), use_inner_text=True)
        page.get_by_label("Era").select_option(label="Auto")
        expect(era_help).to_have_text(re.compile(r"^Auto: ask server/discover .*know it\.$"), use_inner_text=True)
        page.get_by_label("Era").select_option(label="Legacy")
        page.get_by_label("Transport").select_option(label="Streamable HTTP")
        expect(command).to_be_hidden()
        expect(url).to_be_visible()
        expect(page.get_by_label("Headers")).to_be_visible()  # (its hidden check above found a field)
        expect(page.locator("#id_transport-help")).to_have_text(
            re.compile(r"^Streamable HTTP: POST"), use_inner_text=True
        )
        self.at_widths("1-form-http")
        page.get_by_label("Transport").select_option(label="stdio")
        expect(url).to_be_hidden()

        # The whole line in Command, Arguments left empty: split on save, and said.
        page.get_by_label("Name", exact=True).fill("Everything")
        command.fill(f"{shlex.quote(str(EVERYTHING))} stdio")
        self.at_widths("2-form-stdio")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("heading", name="Everything", exact=True)).to_be_visible()
        expect(
            page.get_by_text(f"Split the command line into command `{EVERYTHING}` and argument `stdio`.")
        ).to_be_visible()
        settings = page.locator("dl.settings")
        expect(settings.locator("dt:text-is('Command') + dd")).to_have_text(str(EVERYTHING))
        expect(settings.locator("dt:text-is('Arguments') + dd")).to_have_text("stdio")
        self.at_widths("3-split-saved")
        self.connect("echo")  # it runs: server-everything answered and listed its tools
        self.assert_no_js_errors()

    def test_connecting_says_what_it_waits_for_and_an_ended_session_offers_reconnect(self) -> None:
        page = self.page
        gate = Path(tempfile.mkdtemp(prefix="playground-gate-")) / "go"
        self.addCleanup(gate.unlink, missing_ok=True)
        # A real server that is slow to start, as npx downloading a package is: it waits for the
        # test's go-ahead. Typed as one command line, quotes and all.
        peer = shlex.join([sys.executable, str(SDK_PEER), "stdio"])
        script = f"while [ ! -e {shlex.quote(str(gate))} ]; do sleep 0.05; done; exec {peer}"
        self.log_in()
        self.add_server("Slow peer", command=f"sh -c {shlex.quote(script)}")
        page.get_by_role("button", name="Connect").click()
        expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
        expect(self.status()).to_have_text("connecting")
        strip = page.locator("#session-state")
        expect(strip.locator(".waiting")).to_have_text("waiting for the server's answer to initialize")
        elapsed = strip.locator(".elapsed")
        expect(elapsed).to_have_text(re.compile(r"^\d+\.\d s$"))
        first = elapsed.text_content()
        expect(elapsed).not_to_have_text(first)  # it counts
        log = self.transcript()
        expect(log.locator('.ev-note[data-method="started"]')).to_have_count(1)
        expect(log.locator('.ev-note[data-method="connected"]')).to_have_count(0)  # nothing has answered
        self.at_widths("1-connecting")
        page.reload()  # a reloaded page is told too
        expect(strip.locator(".waiting")).to_have_text("waiting for the server's answer to initialize")

        gate.touch()
        expect(self.status()).to_have_text("connected")
        expect(self.tool_button("echo")).to_be_visible()
        expect(strip.locator(".connecting-for")).to_have_count(0)
        _request, response = self.exchange("initialize")
        answered = int(response.get_attribute("id").removeprefix("ev-"))
        connected = log.locator('.ev-note[data-method="connected"]')
        expect(connected).to_have_count(1)
        assert int(connected.get_attribute("id").removeprefix("ev-")) > answered

        # Ended: what acts on the connection is disabled; Reconnect is the way on.
        self.open_tool("echo")
        page.get_by_role("button", name="Disconnect").click()
        expect(self.status()).to_have_text("ended")
        for name in ("Ping", "Raw request", "Refresh lists", "Disconnect", "Call tool"):
            expect(page.get_by_role("button", name=name, exact=True)).to_be_disabled()
        reconnect = page.get_by_role("button", name="Reconnect")
        expect(reconnect).to_be_enabled()
        expect(page.get_by_role("button", name="Share")).to_be_enabled()
        self.at_widths("2-ended")
        old = page.url
        reconnect.click()
        expect(page).not_to_have_url(old)
        expect(self.status()).to_have_text("connected")
        expect(page.get_by_role("button", name="Ping")).to_be_enabled()
        self.assert_no_js_errors()

    def wrong_transport(
        self, peer: HttpPeer, transport: str, looks_like: str, evidence: str, unprocessed: bool = False
    ) -> None:
        page = self.page
        self.add_server(f"{transport} at {peer.url}", transport=transport, url=peer.url)
        page.get_by_role("button", name="Connect").click()
        expect(self.status()).to_have_text("failed")
        hint = page.locator("#session-state .connect-hint")
        expect(hint).to_contain_text(f"This looks like {looks_like}")
        expect(hint).to_contain_text(evidence)
        self.at_widths(f"hint-{transport.replace(' ', '-')}")
        failed = page.url
        if unprocessed:  # clicked before htmx processed the swapped-in button (a busy machine)
            fresh = hint.evaluate(
                "el => { const p = el.parentNode; el.outerHTML = el.outerHTML; return !p.querySelector('.connect-hint button')._htmx; }"
            )
            assert fresh
        hint.get_by_role("button", name="Switch to Auto and retry").click()
        expect(page).not_to_have_url(failed)
        expect(self.status()).to_have_text("connected")
        expect(self.tool_button("echo")).to_be_visible()
        expect(page.get_by_text("now uses the Auto transport.")).to_be_visible()

    def test_the_wrong_transport_says_so_and_switches_to_auto(self) -> None:
        sse, http = HttpPeer("sse"), HttpPeer("http")
        self.addCleanup(sse.stop)
        self.addCleanup(http.stop)
        self.log_in()
        self.wrong_transport(sse, "Streamable HTTP", "an SSE endpoint", "POST answered HTTP 405", unprocessed=True)
        self.wrong_transport(
            http, "SSE", "a Streamable HTTP endpoint", 'GET answered HTTP 400 "Bad Request: Missing session ID"'
        )
        self.assert_no_js_errors()
