"""Sessions as regression tests, in Chromium: Replay a session against the same server (all
same) and against a changed build (exactly that row changed, with its diff), an elicitation
answered from the recording, ignore rules, the share page of a replay, and Edit and resend.
The peers: two builds of an SDK MCPServer differing in one tool's output."""

from __future__ import annotations

import json
import re
import sys

from playwright.sync_api import Locator, expect

from .helpers import ROOT, LiveBrowserTestCase

VARIANT = str(ROOT / "tests" / "peers" / "sdk_variant.py")
REPLAY_MS = 60_000  # a replay starts a server and sends every request again


class ReplayTests(LiveBrowserTestCase):
    def add_build(self, build: str) -> str:
        name = f"Variant {build.upper()}"
        self.add_server(name, command=sys.executable, args=[VARIANT, "stdio", build])
        return name

    def record(self) -> str:
        """On a session of build A: echo, version, and ask_name answered "Ada" by the person."""
        self.call_tool("echo", text="hi")
        expect(self.result().locator("pre.text").first).to_have_text("hi")
        self.call_tool("version")
        expect(self.result()).to_contain_text("release 1.0 (stable)")
        self.call_tool("ask_name")
        card = self.page.get_by_role("region", name="Server request")
        card.get_by_label("name", exact=True).fill("Ada")
        card.get_by_role("button", name="Accept").click()
        expect(self.result()).to_contain_text("Hello, Ada!")
        return self.page.url

    def replay(self, target: str) -> Locator:
        """ "Replay" → "Replay against" `target` → the replay's page, its Differences done."""
        page = self.page
        before = page.url
        page.get_by_role("button", name="Replay", exact=True).click()
        select = page.get_by_label("Replay against")
        expect(select).to_be_visible()
        select.select_option(label=target)
        page.get_by_role("button", name="Start replay").click()
        expect(page).not_to_have_url(before)
        expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
        region = page.get_by_role("region", name="Differences")
        expect(region).to_have_attribute("data-state", "done", timeout=REPLAY_MS)
        return region

    def rows(self, region: Locator, status: str | None = None) -> Locator:
        return region.locator(".diff-row" + (f'[data-status="{status}"]' if status else ""))

    def test_replay_against_the_same_server_is_all_same(self) -> None:
        self.log_in()
        name = self.add_build("a")
        self.connect("echo")
        self.record()
        self.shot("1-original")
        # "Replay against" defaults to the session's own server.
        self.page.get_by_role("button", name="Replay", exact=True).click()
        expect(self.page.get_by_label("Replay against").locator("option:checked")).to_have_text(name)
        self.shot("2-replay-form")
        region = self.replay(name)
        # The catalogue's four lists and the three calls, each the same.
        expect(self.rows(region)).to_have_count(7)
        expect(self.rows(region, "same")).to_have_count(7)
        expect(region.locator("#differences-summary")).to_contain_text("7 requests replayed: 7 same")
        # The elicitation was answered from the recording: nobody was asked, the call said hello.
        expect(self.page.get_by_role("region", name="Server request")).to_have_count(0)
        expect(region).to_contain_text("1 server request answered from the recording")
        expect(
            self.transcript().locator('.ev-recv[data-method="result"]').filter(has_text="Hello, Ada!")
        ).to_have_count(1)
        self.shot("3-all-same")
        # A reload shows the same Differences (saved, then the live one).
        self.page.reload()
        region = self.page.get_by_role("region", name="Differences")
        expect(region).to_have_attribute("data-state", "done")
        expect(self.rows(region, "same")).to_have_count(7)
        self.assert_no_js_errors()

    def test_replay_against_a_changed_server_shows_that_row_changed(self) -> None:
        page = self.page
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.live_server_url)
        self.log_in()
        self.add_build("b")
        self.add_build("a")
        self.connect("echo")
        original = self.record()
        region = self.replay("Variant B")
        changed = self.rows(region, "changed")
        expect(changed).to_have_count(1)
        expect(self.rows(region, "same")).to_have_count(6)
        expect(changed).to_contain_text("tools/call")
        expect(changed).to_contain_text("version")
        expect(page.get_by_role("region", name="Server request")).to_have_count(0)
        # Expanded: the paths, old → new, and the two raw frames side by side.
        changed.locator("summary").click()
        changes = changed.get_by_role("list", name="Changes")
        expect(changes.locator("li").first).to_contain_text("/result/content/0/text")
        # A changed string is one word-level diff (issue 31): the words that changed, struck and underlined.
        first = changes.locator("li").first
        expect(first.locator("del")).to_have_text(["1.0", "stable"])
        expect(first.locator("ins")).to_have_text(["2.0", "beta"])
        expect(first.get_by_label("Changed words")).to_have_text('"release 1.02.0 (stablebeta)"')
        frames = changed.locator(".diff-frames pre")
        expect(frames).to_have_count(2)
        expect(frames.nth(0)).to_contain_text('"release 1.0 (stable)"')
        expect(frames.nth(1)).to_contain_text('"release 2.0 (beta)"')
        left, right = frames.nth(0).bounding_box(), frames.nth(1).bounding_box()
        assert left and right and abs(left["y"] - right["y"]) < 2 and right["x"] > left["x"] + left["width"] - 1
        # Each frame copies whole: the recorded response and the replayed one.
        recorded, replayed = (
            json.loads(self.copy(figure.get_by_role("button", name="Copy")))
            for figure in changed.locator(".diff-frames figure").all()
        )
        assert recorded["result"]["content"][0]["text"] == "release 1.0 (stable)"
        assert replayed["result"]["content"][0]["text"] == "release 2.0 (beta)"
        self.assert_every_block_copies()
        self.shot("1-changed")
        page.emulate_media(color_scheme="dark")
        self.shot("1-changed-dark")
        page.emulate_media(color_scheme="light")
        # The recorded event links to the original session.
        link = changed.get_by_role("link", name=re.compile(r"^event \d+$")).first
        assert link.get_attribute("href").startswith(original.removeprefix(self.live_server_url))

        # Its share link shows the Differences too, read-only.
        href = self.share(page)
        share_page = self.fresh_page(1280)
        share_page.goto(href)
        shared_region = share_page.get_by_role("region", name="Differences")
        expect(shared_region.locator('.diff-row[data-status="changed"]')).to_have_count(1)
        expect(shared_region.locator(".diff-row")).to_have_count(7)
        expect(shared_region.get_by_label("Ignore rules")).to_have_count(0)
        expect(share_page.get_by_role("button", name="Edit and resend", include_hidden=True)).to_have_count(
            0
        )  # (closed lines too)
        shared_region.locator('.diff-row[data-status="changed"] summary').click()
        self.assert_every_block_copies(share_page)
        self.shot("2-share", share_page)

        # An ignore rule for that field: saved for the server, and the rows compared again.
        region.get_by_label("Ignore rules").fill("/result/content/*/text\n/result/structuredContent/result")
        region.get_by_role("button", name="Save and compare again").click()
        region = page.get_by_role("region", name="Differences")
        expect(self.rows(region, "changed")).to_have_count(0)
        expect(self.rows(region, "same")).to_have_count(7)
        self.shot("3-ignored")
        # A reload shows the new comparison, from the database and from the live worker alike.
        page.reload()
        region = page.get_by_role("region", name="Differences")
        expect(region.locator("#differences-summary")).to_contain_text("7 same")
        expect(region.get_by_label("Ignore rules")).to_have_value(
            "/result/content/*/text\n/result/structuredContent/result"
        )
        self.open_server("Variant B")
        page.get_by_role("link", name="Edit").click()
        expect(page.get_by_label("Replay ignore rules")).to_have_value(
            "/result/content/*/text\n/result/structuredContent/result"
        )
        self.assert_no_js_errors()

    def test_edit_and_resend(self) -> None:
        page = self.page
        self.log_in()
        self.add_build("a")
        self.connect("echo")
        self.call_tool("echo", text="hi")
        expect(self.result().locator("pre.text").first).to_have_text("hi")
        request, _response = self.exchange("tools/call")
        request.locator(":scope > summary").click()
        request.get_by_role("button", name="Edit and resend").click()
        form = page.locator("#workspace form#tool-form")
        expect(form).to_have_attribute("data-tool", "echo")
        text = form.get_by_label("text", exact=True)
        expect(text).to_have_value("hi")
        expect(page.locator("#workspace")).to_contain_text("edit the arguments and call it again")
        text.fill("hi again")
        self.shot("1-tool-form")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result().locator("pre.text").first).to_have_text("hi again")

        # Not a tool call: the raw composer, prefilled with its method and params.
        workspace = page.locator("#workspace")
        page.locator("#catalogue").get_by_role("button", name="greeting", exact=True).click()
        workspace.get_by_label("name", exact=True).fill("Ada")
        workspace.get_by_role("button", name="Get prompt").click()
        expect(self.result()).to_contain_text("Say hello to Ada.")
        request, _response = self.exchange("prompts/get")
        request.locator(":scope > summary").click()
        request.get_by_role("button", name="Edit and resend").click()
        expect(page.get_by_label("method")).to_have_value("prompts/get")
        params = page.get_by_label("params (JSON)")
        assert json.loads(params.input_value()) == {"name": "greeting", "arguments": {"name": "Ada"}}
        params.fill('{"name": "greeting", "arguments": {"name": "Bo"}}')
        self.shot("2-composer")
        workspace.get_by_role("button", name="Send", exact=True).click()
        expect(self.result()).to_contain_text("Say hello to Bo.")
        # Only requests have it: not the server's answers, not notifications.
        expect(
            self.transcript().locator(".ev-recv").get_by_role("button", name="Edit and resend", include_hidden=True)
        ).to_have_count(0)
        notification = self.transcript().locator('.ev-send[data-method="notifications/initialized"]')
        expect(notification.get_by_role("button", name="Edit and resend", include_hidden=True)).to_have_count(0)
        self.assert_no_js_errors()
