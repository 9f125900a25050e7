"""The whole protocol in the page, end to end in Chromium: server requests answered by a
person (elicitation, sampling, roots), progress and Cancel, completion, templates,
subscriptions and logs against server-everything; an input_required round and a
subscriptions/listen stream against the SDK peer in the modern era; two sessions side by side."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from .helpers import EVERYTHING, HttpPeer, LiveBrowserTestCase, peer_args


def need_everything() -> None:
    if not EVERYTHING.exists():
        pytest.fail("server-everything is not installed: run `make peers`")


class ProtocolTests(LiveBrowserTestCase):
    def server_request(self):
        return self.page.get_by_role("region", name="Server request")

    def test_everything_roots_elicitation_and_sampling(self) -> None:
        need_everything()
        self.log_in()
        self.add_server(
            "Everything", command=str(EVERYTHING), args=["stdio"], roots=["file:///tmp/playground-root Project root"]
        )
        self.connect("get-roots-list")
        result = self.result()

        # roots/list is answered from the server's settings, without asking.
        self.open_tool("get-roots-list").get_by_role("button", name="Call tool").click()
        expect(result).to_contain_text("file:///tmp/playground-root")
        expect(result).to_contain_text("Project root")
        expect(self.server_request()).to_have_count(0)

        # Elicitation: the requested schema as a form labelled with property names.
        self.open_tool("trigger-elicitation-request").get_by_role("button", name="Call tool").click()
        card = self.server_request()
        expect(card).to_be_visible()
        expect(card).to_contain_text("Please provide inputs for the following fields:")
        card.get_by_label("name", exact=True).fill("Ada Lovelace")
        card.get_by_label("email", exact=True).fill("ada@example.org")
        card.get_by_label("check", exact=True).check()
        self.shot("1-elicitation")
        card.get_by_role("button", name="Accept").click()
        expect(card).to_have_count(0)
        expect(result).to_contain_text("User provided the requested information")
        expect(result).to_contain_text("Ada Lovelace")
        answer = self.transcript().locator('.ev-send[data-method="result"]').filter(has_text="Ada Lovelace")
        expect(answer).to_have_count(1)
        # Cancel: nothing is checked (the required name stays empty); the server is told "cancel".
        self.open_tool("trigger-elicitation-request").get_by_role("button", name="Call tool").click()
        expect(card).to_contain_text("Please provide inputs for the following fields:")
        card.get_by_role("button", name="Cancel", exact=True).click()
        expect(card).to_have_count(0)
        expect(result).to_contain_text("User cancelled the elicitation dialog.")
        expect(result).to_contain_text('"action": "cancel"')  # the server's echo of what it got
        answer = self.transcript().locator('.ev-send[data-method="result"]').filter(has_text="cancel")
        expect(answer).to_have_count(1)
        assert json.loads(answer.locator("details.raw pre").text_content())["result"] == {"action": "cancel"}

        # Sampling: the request is shown; a person writes the reply.
        form = self.open_tool("trigger-sampling-request")
        form.get_by_label("prompt", exact=True).fill("Say hi")
        form.get_by_role("button", name="Call tool").click()
        card = self.server_request()
        expect(card).to_contain_text("You are a helpful test server.")
        expect(card).to_contain_text("Resource trigger-sampling-request context: Say hi")
        expect(card).to_contain_text("maxTokens 100")
        card.get_by_label("content", exact=True).fill("Hi from a human")
        card.get_by_label("model", exact=True).fill("person-1")
        self.shot("2-sampling")
        card.get_by_role("button", name="Send reply").click()
        expect(card).to_have_count(0)
        expect(result).to_contain_text("Hi from a human")
        expect(result).to_contain_text("person-1")

        # URL mode: the whole URL with its host stressed, opened only when the person accepts.
        elicited = self.url("/elicited/?step=1")
        form = self.open_tool("trigger-url-elicitation")
        form.get_by_label("url", exact=True).fill(elicited)
        form.get_by_role("button", name="Call tool").click()
        expect(card).to_contain_text("not opened automatically")
        expect(card.locator("code.url .url-host")).to_have_text(elicited.split("/")[2])
        expect(card.locator("code.url")).to_have_text(elicited)
        assert len(self.context.pages) == 1
        self.shot("3-url-elicitation")
        with self.context.expect_page() as opened:
            card.get_by_role("button", name="Accept").click()
        assert opened.value.url == elicited
        opened.value.close()
        expect(card).to_have_count(0)
        expect(result).to_contain_text("accept")
        # The error path (-32042): the URLs to open are shown with the error, as links to click.
        form = self.open_tool("trigger-url-elicitation")
        form.get_by_label("url", exact=True).fill(self.url("/elicited/?step=2"))
        form.get_by_label("errorPath", exact=True).check()
        form.get_by_role("button", name="Call tool").click()
        expect(result).to_contain_text("JSON-RPC error -32042")
        needed = result.get_by_role("group", name="URL elicitations required")
        expect(needed.get_by_role("link", name="Open in a new tab")).to_have_attribute("rel", "noopener noreferrer")
        self.assert_no_js_errors()

    def test_everything_progress_cancel_completion_template_subscription(self) -> None:
        need_everything()
        page = self.page
        self.log_in()
        self.add_server("Everything", command=str(EVERYTHING), args=["stdio"])
        self.connect("trigger-long-running-operation")
        result = self.result()

        # Progress bar with its value, then a working Cancel.
        form = self.open_tool("trigger-long-running-operation")
        form.get_by_label("duration", exact=True).fill("60")
        form.get_by_label("steps", exact=True).fill("60")
        form.get_by_role("button", name="Call tool").click()
        bar = page.locator("#inflight").get_by_role("progressbar")
        expect(bar).to_be_visible()
        # A step a second: which one the page shows by now depends on the machine, not that it counts.
        expect(bar).to_have_attribute("aria-valuenow", re.compile(r"^[1-9]\d*$"))
        expect(bar).to_have_attribute("aria-valuemax", "60")
        expect(page.locator("#inflight .progress-value")).to_have_text(re.compile(r"^[1-9]\d* / 60 \(\d+%\)$"))
        expect(page.locator("#inflight .elapsed")).to_contain_text(" s")
        self.shot("1-progress")
        # The spinner turns, unless the system asks for less motion.
        spinner = page.locator("#inflight .spinner")
        animation = "el => getComputedStyle(el).animationName"
        assert spinner.evaluate(animation) == "spin"
        page.emulate_media(reduced_motion="reduce")
        assert spinner.evaluate(animation) == "none"
        page.emulate_media(reduced_motion="no-preference")
        page.locator("#inflight").get_by_role("button", name="Cancel request").click()
        expect(result).to_contain_text("cancelled")
        expect(bar).to_have_count(0)
        cancelled = self.transcript().locator('.ev-send[data-method="notifications/cancelled"]')
        expect(cancelled).to_have_count(1)

        # Completion as the user types; the first argument narrows the second.
        page.locator("#catalogue").get_by_role("button", name="completable-prompt", exact=True).click()
        workspace = page.locator("#workspace")
        workspace.get_by_label("department", exact=True).fill("E")
        workspace.get_by_role("option", name="Engineering").click()
        expect(workspace.get_by_label("department", exact=True)).to_have_value("Engineering")
        workspace.get_by_label("name", exact=True).focus()
        expect(workspace.get_by_role("option", name="Alice")).to_be_visible()
        expect(workspace.get_by_role("option", name="Charlie")).to_be_visible()
        self.shot("2-completion")
        workspace.get_by_role("option", name="Bob").click()
        workspace.get_by_role("button", name="Get prompt").click()
        expect(result).to_contain_text("Please promote Bob to the head of the Engineering team.")

        # A template: one field per variable, expanded, then read (a blob previewed as text).
        page.locator("#catalogue").get_by_role("button", name="Dynamic Blob Resource", exact=True).click()
        workspace.get_by_label("resourceId", exact=True).fill("7")
        workspace.get_by_role("button", name="Read resource").click()
        expect(result).to_contain_text("demo://resource/dynamic/blob/7")
        expect(result.locator("pre.blob-text")).to_contain_text("Resource 7: This is a base64 blob")
        expect(result.get_by_role("link", name="Download")).to_have_attribute("download", "7")
        self.shot("3-template")

        # Subscribe, then the server's updates for it; the log panel shows its messages.
        page.get_by_label("Log level").select_option("debug")
        page.get_by_role("button", name="Set level").click()
        expect(page.locator("#log-state")).to_contain_text("debug")
        expect(page.get_by_role("log", name="Log messages").locator(".t").first).to_have_text(
            re.compile(r"^\d\d:\d\d:\d\d\.\d{3}$")
        )
        item = page.locator("#catalogue li").filter(has_text="demo://resource/static/document/architecture.md")
        item.get_by_role("button", name="Subscribe").click()
        expect(page.get_by_role("list", name="Subscribed resources")).to_contain_text("architecture.md")
        expect(item.get_by_role("button", name="Unsubscribe")).to_be_visible()  # the catalogue says so too
        expect(page.get_by_role("log", name="Log messages")).to_contain_text("Received Subscribe Resource request")
        self.open_tool("toggle-subscriber-updates").get_by_role("button", name="Call tool").click()
        notes = page.get_by_role("log", name="Notifications")
        expect(notes.locator("li").filter(has_text="notifications/resources/updated").first).to_contain_text(
            "demo://resource/static/document/architecture.md"
        )
        self.shot("4-subscription")
        self.open_tool("toggle-subscriber-updates").get_by_role("button", name="Call tool").click()
        expect(result).to_contain_text("Stopped simulated resource updates")
        item.get_by_role("button", name="Unsubscribe").click()
        expect(page.get_by_role("list", name="Subscribed resources")).to_have_count(0)
        expect(item.get_by_role("button", name="Subscribe", exact=True)).to_be_visible()

        # Ping (legacy), and the raw request composer, which stays one click away from any form.
        page.get_by_role("button", name="Ping").click()
        expect(result.get_by_role("group")).to_contain_text("{}")  # the raw JSON, shown open
        page.get_by_role("button", name="Raw request").click()
        workspace.get_by_label("method", exact=True).fill("resources/read")
        workspace.get_by_label("params (JSON)").fill('{"uri": ')
        workspace.get_by_role("button", name="Send").click()
        expect(workspace.get_by_role("alert")).to_contain_text("params is not valid JSON")
        workspace.get_by_label("params (JSON)").fill('{"uri": "demo://resource/static/document/features.md"}')
        workspace.get_by_role("button", name="Send").click()
        expect(workspace.get_by_role("alert")).to_have_count(0)
        expect(result).to_contain_text("demo://resource/static/document/features.md")
        # An exact frame with an id of its own: its response is the result.
        workspace.get_by_label("exact frame").fill(
            '{"jsonrpc": "2.0", "id": "mine-1", "method": "tools/list", "params": {"cursor": 7}}'
        )
        workspace.get_by_role("button", name="Send").click()
        expect(result).to_contain_text("JSON-RPC error -32603")
        expect(result).to_contain_text("cursor")
        self.shot("5-raw")
        self.assert_no_js_errors()

    def completion_exchange(self, value: str) -> tuple[dict, dict]:
        """The completion/complete request sent for `value` and the server's answer, as parsed
        from their raw frames in the transcript."""
        log = self.transcript()
        request = log.locator('.ev-send[data-method="completion/complete"]').filter(
            has_text=re.compile(r'"value":\s*' + re.escape(json.dumps(value)))
        )
        expect(request).to_have_count(1)
        seq = request.get_attribute("id").removeprefix("ev-")
        response = log.locator(f'.ev-recv[data-reply-to="{seq}"]')
        expect(response).to_have_count(1)
        return (
            json.loads(request.locator("details.raw pre").text_content()),
            json.loads(response.locator("details.raw pre").text_content()),
        )

    def test_everything_template_variable_completion(self) -> None:
        """A template's variable completes as the user types, from the server's own completer:
        server-everything offers a positive integer id back and nothing for anything else."""
        need_everything()
        page = self.page
        self.log_in()
        self.add_server("Everything", command=str(EVERYTHING), args=["stdio"])
        self.connect("echo")
        page.locator("#catalogue").get_by_role("button", name="Dynamic Text Resource", exact=True).click()
        workspace = page.locator("#workspace")
        field = workspace.get_by_label("resourceId", exact=True)
        suggestions = workspace.locator("[data-suggestions]").get_by_role("option")

        field.fill("42")
        expect(suggestions).to_have_text(["42"])
        self.shot("1-template-completion")
        sent, answer = self.completion_exchange("42")
        assert sent["params"]["ref"] == {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}
        assert sent["params"]["argument"] == {"name": "resourceId", "value": "42"}
        assert answer["result"]["completion"]["values"] == ["42"]

        # Not an id: the server offers nothing, and the page's list follows it.
        field.fill("forty-two")
        expect(suggestions).to_have_count(0)
        assert self.completion_exchange("forty-two")[1]["result"]["completion"]["values"] == []

        # Pick the server's suggestion, then read the expanded URI.
        field.fill("7")
        workspace.get_by_role("listbox", name="Suggestions").get_by_role("option", name="7", exact=True).click()
        expect(field).to_have_value("7")
        expect(suggestions).to_have_count(0)  # the pick closes the list
        workspace.get_by_role("button", name="Read resource").click()
        expect(self.result()).to_contain_text("demo://resource/dynamic/text/7")
        expect(self.result()).to_contain_text("Resource 7: This is a plaintext resource")
        self.assert_no_js_errors()

    def test_modern_input_required_and_listen(self) -> None:
        """The SDK peer in the modern era over Streamable HTTP (the two-tab test has it over stdio)."""
        page = self.page
        peer = HttpPeer()
        self.addCleanup(peer.stop)
        self.log_in()
        self.add_server("SDK peer modern", transport="Streamable HTTP", url=peer.url, era="Modern")
        self.connect("greet")
        expect(page.locator("#session-state")).to_contain_text("modern era")
        result = self.result()
        # What the page declares it can answer, in this era's terms (no roots.listChanged here).
        page.locator("details.panel > summary", has_text="Client").click()
        expect(page.locator("#client-state")).to_contain_text('"roots": {}')
        expect(page.locator("#client-state")).to_contain_text('"elicitation": {"form": {}, "url": {}}')
        expect(page.get_by_role("button", name="Ping")).to_be_hidden()  # removed in 2026-07-28

        self.open_tool("greet").get_by_role("button", name="Call tool").click()
        card = self.server_request()
        expect(card).to_contain_text("input_required round 1")
        expect(card.get_by_label("requestState")).to_have_attribute("readonly", "")
        expect(page.locator("#inflight").get_by_text("waiting for your answer")).to_be_visible()
        card.get_by_label("name", exact=True).fill("Grace")
        self.shot("1-input-required")
        card.get_by_role("button", name="Accept").click()
        expect(result).to_contain_text("Hello, Grace!")
        expect(result.get_by_role("list", name="Input rounds")).to_contain_text("round 1")
        calls = self.transcript().locator('.ev-send[data-method="tools/call"]')
        expect(calls).to_have_count(2)
        expect(calls.last).to_contain_text("inputResponses")

        # subscriptions/listen: the builder, the acknowledgement and the tagged notifications.
        expect(page.get_by_role("button", name="Subscribe")).to_have_count(0)  # legacy only
        page.get_by_label("resourceSubscriptions (one URI per line)").fill("peer://greeting")
        page.get_by_role("button", name="Listen", exact=True).click()
        status = page.get_by_role("status", name="Stream status")
        expect(status).to_contain_text("open")
        form = self.open_tool("touch")
        form.get_by_role("button", name="Call tool").click()
        notes = page.get_by_role("log", name="Notifications")
        expect(notes.locator("li").filter(has_text="notifications/resources/updated")).to_contain_text("sub #")
        expect(notes.locator("li").filter(has_text="notifications/tools/list_changed")).to_have_count(1)
        expect(status).to_contain_text("2 notifications")
        self.shot("2-listen")
        work = page.locator(".work-col")
        assert work.evaluate("c => c.scrollWidth <= c.clientWidth"), "the panels overflow the column"
        page.get_by_role("button", name="Stop listening").click()
        expect(status).to_contain_text("closed by us")

        # A blob: previewed by its MIME type, downloadable.
        page.locator("#catalogue").get_by_role("button", name="pixel", exact=True).click()
        expect(result.get_by_role("img", name="blob preview (image/png)")).to_be_visible()
        expect(result.get_by_role("link", name="Download")).to_have_attribute("download", "pixel.png")

        # Cancel closes the request's stream (modern HTTP); the session's timeout applies to every call.
        self.open_tool("hang").get_by_role("button", name="Call tool").click()
        page.locator("#inflight").get_by_role("button", name="Cancel request").click()
        expect(result).to_contain_text("cancelled")
        expect(self.transcript().locator('.ev-note[data-method="cancelled"]').last).to_contain_text(
            "closed the response stream"
        )
        expect(self.transcript().locator('.ev-send[data-method="notifications/cancelled"]')).to_have_count(0)
        page.get_by_label("Request timeout").fill("1")
        page.get_by_label("Request timeout").press("Enter")
        self.open_tool("hang").get_by_role("button", name="Call tool").click()
        expect(result).to_contain_text("timed out after 1 s")
        self.assert_no_js_errors()

    def test_two_sessions_side_by_side(self) -> None:
        """Two servers, two tabs: each tab has its own worker, result and transcript."""
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("Peer A", command=command, args=args)
        self.add_server("Peer B", command=command, args=args, era="Modern")
        first = self.page
        self.open_server("Peer A")
        self.connect("echo")
        second = self.context.new_page()
        self.page = second
        self.open_server("Peer B")
        self.connect("echo")
        for page, text in ((first, "from A"), (second, "from B")):
            self.page = page
            form = self.open_tool("echo")
            form.get_by_label("text", exact=True).fill(text)
            form.get_by_role("button", name="Call tool").click()
        for page, mine, theirs, era in ((first, "from A", "from B", "legacy"), (second, "from B", "from A", "modern")):
            expect(self.result_of(page).locator("pre.text").first).to_have_text(mine)
            expect(self.transcript(page)).to_contain_text(mine)
            expect(self.transcript(page)).not_to_contain_text(theirs)
            expect(page.locator("#session-state")).to_contain_text(f"{era} era")
        self.shot("1-second-tab", second)
        second.close()
        self.page = first
        self.assert_no_js_errors()

    def result_of(self, page):
        return page.get_by_role("region", name="Result")
