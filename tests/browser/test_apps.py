"""MCP Apps in Chromium: the official basic example rendered on the sandbox origin, its bridge in
the transcript; a hostile app that cannot reach the page and cannot freeze it."""

from __future__ import annotations

import json
import re
import shutil
import time

from playwright.sync_api import Frame, expect

from .helpers import ROOT, LiveBrowserTestCase

VANILLA = (
    ROOT / "tools" / "npm" / "node_modules" / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist" / "index.js"
)
HOSTILE = ROOT / "tests" / "peers" / "hostile_app.py"
PROBE = "() => { try { return 'reachable: ' + window.top.document.title; } catch (e) { return e.name; } }"


class AppViolations(list):
    """The context's CSP reports, but those of the app's own document (its srcdoc, `about`: the
    eval probe of its bundle, the hostile app's fetch) kept apart: the page's must stay none."""

    def __init__(self) -> None:
        super().__init__()
        self.app: list[str] = []

    def append(self, text: str) -> None:
        mine = re.match(r"CSP violation: [a-z-]+ about ", text) or text.startswith(
            ("Connecting to", "Fetch API cannot")
        )
        (self.app if mine else super()).append(text)


class AppsTestCase(LiveBrowserTestCase):
    """An app's own document may break its policy (it is the app's): those reports are kept apart."""

    def setUp(self) -> None:
        super().setUp()
        self.csp_violations = AppViolations()

    def app_frames(self) -> tuple[Frame, Frame]:
        """(the sandbox proxy's frame, the app's own, inside it)."""
        page = self.page
        expect(page.locator("iframe.app-frame")).to_have_count(1)
        proxy = page.locator("iframe.app-frame").element_handle().content_frame()
        proxy.wait_for_selector("iframe")
        inner = proxy.locator("iframe").element_handle().content_frame()
        return proxy, inner


class AppsTests(AppsTestCase):
    def test_the_basic_example_runs_sandboxed_and_its_bridge_is_in_the_transcript(self) -> None:
        page = self.page
        self.log_in()
        self.add_server("Basic app", command=shutil.which("node") or "node", args=[str(VANILLA), "--stdio"])
        self.connect("get-time")
        expect(page.locator("#catalogue .app-ui")).to_have_count(1)
        self.call_tool("get-time")
        app = page.frame_locator("iframe.app-frame").frame_locator("iframe")
        time_shown = app.locator("#server-time")
        expect(time_shown).to_have_text(re.compile(r"^\d{4}-\d\d-\d\dT"))
        first = time_shown.text_content()
        # The app's own button: its tools/call goes through the session.
        app.get_by_role("button", name="Get Server Time").click()
        expect(time_shown).not_to_have_text(first or "")
        app.get_by_role("button", name="Send Message").click()
        expect(page.locator(".app-said")).to_contain_text("This is message text.")
        # ui/open-link asks first; refused, the app is told so.
        app.get_by_role("button", name="Open Link").click()
        ask = page.locator(".app-open-link")
        expect(ask).to_contain_text("The app asks to open https://modelcontextprotocol.io/")
        ask.get_by_role("button", name="Refuse").click()
        expect(ask).to_have_count(0)
        log = self.transcript()
        init = log.locator('.ev-lane-app.ev-recv[data-method="ui/initialize"]')
        expect(init).to_have_count(1)
        seq = init.get_attribute("id").removeprefix("ev-")
        expect(log.locator(f'.ev-lane-app.ev-send[data-reply-to="{seq}"]')).to_have_count(1)
        expect(log.locator('.ev-lane-app.ev-recv[data-method="tools/call"]')).to_have_count(1)
        expect(log.locator('.ev-send[data-method="tools/call"]:not(.ev-lane-app)')).to_have_count(2)
        expect(log.locator('.ev-lane-app.ev-send[data-method="ui/notifications/tool-result"]')).to_have_count(1)
        link = log.locator('.ev-lane-app.ev-recv[data-method="ui/open-link"]')
        expect(link).to_have_count(1)
        answer = log.locator(f'.ev-lane-app.ev-send[data-reply-to="{link.get_attribute("id").removeprefix("ev-")}"]')
        expect(answer).to_contain_text('"isError": true')
        # The app cannot reach the page: another origin, window.top's document throws.
        proxy, inner = self.app_frames()
        page_origin = page.evaluate("location.origin")
        assert proxy.evaluate("location.origin") not in (page_origin, "null")
        assert inner.evaluate("origin") != page_origin
        assert inner.evaluate(PROBE) == "SecurityError"
        self.shot("basic-app")
        # Calling again replaces the Result: the app is asked to tear down, then removed.
        self.call_tool("get-time")
        expect(log.locator('.ev-lane-app.ev-send[data-method="ui/resource-teardown"]')).to_have_count(1)
        expect(log.locator(".ev-lane-app", has_text="app torn down: its Result was replaced")).to_have_count(1)
        expect(log.locator('.ev-lane-app.ev-recv[data-method="ui/initialize"]')).to_have_count(2)
        self.assert_no_js_errors()

    def test_a_hostile_app_is_contained_bounded_and_the_page_stays_responsive(self) -> None:
        page = self.page
        self.log_in()
        self.add_server("Hostile app", command=str(ROOT / ".venv" / "bin" / "python"), args=[str(HOSTILE)])
        self.connect("show")
        self.call_tool("show")
        log = self.transcript()
        line = log.locator(".ev-lane-app.ev-recv", has_text="hostile report")
        expect(line).to_have_count(1)
        message = json.loads(line.locator("details.raw pre").text_content())
        report = json.loads(message["params"]["data"].split("hostile report ", 1)[1])
        assert report["top"] == "threw SecurityError"
        assert report["cookie"].startswith("threw") or report["cookie"] == ""
        assert report["fetch"].startswith("failed")  # connect-src 'none'
        # Flooded, busy-looping: the page answers at once, and counts what it dropped.
        started = time.monotonic()
        assert page.evaluate("() => 1 + 1") == 2
        assert time.monotonic() - started < 1.0
        counts = page.locator(".app-counts")
        expect(counts).to_contain_text(re.compile(r"dropped: [1-9]\d* over 50/s"))
        expect(counts).to_contain_text(re.compile(r"[1-9] over 256 KB"))
        _proxy, inner = self.app_frames()
        expect(inner.locator("#status")).to_have_text("hostile done")
        # A tool not visible to apps: refused; the note of what the page dropped is in the transcript.
        expect(log.locator(".ev-lane-app.ev-send", has_text="not visible to apps")).to_have_count(1)
        expect(log.locator(".ev-lane-app", has_text="messages from the app dropped").first).to_be_visible()
        self.shot("hostile-app")
        # The permissions it asks for: none until ticked; then its frame, and the app's inside it, get that one.
        assert page.locator("iframe.app-frame").get_attribute("allow") is None
        ask = page.locator(".app-ask")
        expect(ask).to_contain_text("The app asks for:")
        ask.get_by_label("clipboard-write").check()
        ask.get_by_role("button", name="Reload the app with these").click()
        expect(page.locator("iframe.app-frame")).to_have_attribute("allow", "clipboard-write")
        proxy, _inner = self.app_frames()
        assert proxy.locator("iframe").get_attribute("allow") == "clipboard-write"


class CapitalisedSandboxTests(AppsTestCase):
    """PLAYGROUND_APPS_SANDBOX written with capitals: the browser names the sandbox's origin in
    lower case, and the page is given that exact origin, so the app's messages are taken."""

    env = {"PLAYGROUND_APPS_SANDBOX": "LocalHost"}

    def test_the_basic_example_runs_on_a_sandbox_named_with_capitals(self) -> None:
        page = self.page
        self.log_in()
        self.add_server("Basic app", command=shutil.which("node") or "node", args=[str(VANILLA), "--stdio"])
        self.connect("get-time")
        self.call_tool("get-time")
        assert page.locator("#app-bridge").get_attribute("data-apps-sandbox") == f"http://localhost:{self._port}"
        app = page.frame_locator("iframe.app-frame").frame_locator("iframe")
        expect(app.locator("#server-time")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\dT"))
        expect(self.transcript().locator('.ev-lane-app.ev-recv[data-method="ui/initialize"]')).to_have_count(1)
        self.assert_no_js_errors()
