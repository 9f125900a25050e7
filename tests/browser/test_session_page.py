"""The session page end to end: register a server through the form, connect, call tools with
the generated forms, read the Result region and the Transcript; against real peers."""

from __future__ import annotations

import json
import os
from unittest import mock

import pytest
from playwright.sync_api import expect

from .helpers import EVERYTHING, USERNAME, HttpPeer, LiveBrowserTestCase, peer_args


class SessionPageTests(LiveBrowserTestCase):
    def test_sdk_peer_over_stdio_add_and_replay(self) -> None:
        page = self.page
        self.log_in()
        self.shot("1-home")
        command, args = peer_args("stdio")
        self.add_server("SDK peer", command=command, args=args, shot=True)
        self.shot("2-server")
        self.connect("add")
        self.shot("3-connected")
        # The catalogue's search outlives a new catalogue (a reconnect's replay here; a refresh or
        # lists the server changed swap one in too): what was typed, the focus, the filter.
        search = page.get_by_label("Search the catalogue")
        search.click()
        page.keyboard.type("ad")
        expect(self.tool_button("echo")).to_be_hidden()
        page.evaluate("() => { document.getElementById('catalogue').dataset.before = '1'; }")
        self.reconnect_socket()
        expect(page.locator("#catalogue:not([data-before])")).to_be_attached()  # a new catalogue
        expect(search).to_have_value("ad")
        expect(search).to_be_focused()
        expect(self.tool_button("echo")).to_be_hidden()
        page.keyboard.type("d")  # typing goes on where it was
        expect(search).to_have_value("add")
        search.fill("")
        expect(self.tool_button("echo")).to_be_visible()

        form = self.open_tool("add")
        form.get_by_label("a", exact=True).fill("2")
        form.get_by_label("b", exact=True).fill("40")
        expect(page.locator("[data-params-preview]")).to_contain_text('"a": 2')
        form.get_by_role("button", name="Call tool").click()

        result = self.result()
        expect(result).to_contain_text("42")
        expect(result.locator("pre.text").first).to_have_text("42")
        request, response = self.exchange("tools/call")
        expect(request).to_contain_text('"name": "add"')
        expect(response).to_contain_text("42")
        self.shot("4-result")

        # The transcript comes back from the database after a reload.
        lines_before = self.transcript().locator(".ev").count()
        page.reload()
        expect(self.transcript().locator(".ev")).to_have_count(lines_before)
        request, response = self.exchange("tools/call")
        expect(response).to_contain_text("42")
        expect(page.get_by_role("status")).to_have_text("connected")
        self.shot("5-reloaded")
        self.assert_no_js_errors()

    def test_demo_server_nested_and_array_form(self) -> None:
        from django.core.management import call_command

        with mock.patch.dict(os.environ, PLAYGROUND_USER=USERNAME):  # the demo server is the setup user's
            call_command("playground_setup", "--no-link", stdout=open(os.devnull, "w"))
        page = self.page
        self.log_in()
        self.open_server("Playground demo")
        self.connect("create_ticket")
        form = self.open_tool("create_ticket")
        self.shot("1-empty-form")

        form.get_by_label("title", exact=True).fill("Printer on fire")
        assignees = form.get_by_role("group", name="assignees", exact=True)
        for _ in range(2):
            # The array's own button comes after its items' (each item has "tags" with one).
            assignees.get_by_role("button", name="Add item").last.click()
        first = form.get_by_role("group", name="assignees[0]", exact=True)
        second = form.get_by_role("group", name="assignees[1]", exact=True)
        first.get_by_label("name", exact=True).fill("Ada Lovelace")
        first.get_by_label("email", exact=True).fill("ada@example.org")
        tags = first.get_by_role("group", name="tags", exact=True)
        tags.get_by_role("button", name="Add item").click()
        tags.get_by_label("tags[0]", exact=True).fill("hardware")
        address = first.get_by_role("group", name="address", exact=True)
        address.get_by_role("checkbox", name="null", exact=True).first.uncheck()
        address.get_by_label("street", exact=True).fill("1 Analytical Way")
        address.get_by_label("city", exact=True).fill("London")
        second.get_by_label("name", exact=True).fill("Grace Hopper")
        second.get_by_label("email", exact=True).fill("grace@example.org")
        form.get_by_label("priority", exact=True).select_option("high")

        expected = {
            "title": "Printer on fire",
            "assignees": [
                {
                    "name": "Ada Lovelace",
                    "email": "ada@example.org",
                    "tags": ["hardware"],
                    "address": {"street": "1 Analytical Way", "city": "London", "postcode": None},
                },
                {"name": "Grace Hopper", "email": "grace@example.org", "address": None},
            ],
            "priority": "high",
            "labels": ["triage"],
            "estimate_hours": 1,
            "notify": True,
        }
        preview_box = page.locator("[data-params-preview]")
        expect(preview_box).to_contain_text("Grace Hopper")
        shown = json.loads(preview_box.text_content())
        assert shown == {"name": "create_ticket", "arguments": expected}, shown
        self.shot("2-filled-form")

        form.get_by_role("button", name="Call tool").click()
        result = self.result()
        expect(result).to_contain_text("matches outputSchema")
        expect(
            result.get_by_role("heading", name="structuredContent")
        ).to_be_in_viewport()  # not hidden under the long form
        structured = json.loads(
            result.locator("h4 + .copyable > pre.json, h4 ~ .copyable > pre.json").first.text_content()
        )
        assert structured["title"] == "Printer on fire"
        assert structured["priority"] == "high"
        assert [a["name"] for a in structured["assignees"]] == ["Ada Lovelace", "Grace Hopper"]
        assert structured["assignees"][0]["address"]["city"] == "London"

        # What went over the wire is exactly what the preview promised.
        request, _response = self.exchange("tools/call")
        sent = json.loads(request.locator("pre.json").first.text_content())
        assert sent["params"]["name"] == shown["name"]
        assert sent["params"]["arguments"] == shown["arguments"]
        self.shot("3-result")
        self.assert_no_js_errors()

    def test_server_everything_over_stdio_echo(self) -> None:
        if not EVERYTHING.exists():
            pytest.fail("server-everything is not installed: run `make peers`")
        self.log_in()
        self.add_server("Everything", command=str(EVERYTHING), args=["stdio"])
        self.connect("echo")
        form = self.open_tool("echo")
        form.get_by_label("message", exact=True).fill("hello from the browser")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result().locator("pre.text").first).to_have_text("Echo: hello from the browser")
        _request, response = self.exchange("tools/call")
        expect(response).to_contain_text("Echo: hello from the browser")
        self.shot("1-result")
        # server-everything announces tools/list_changed several times as it starts: the
        # catalogue refreshes it causes run one after another, never two lists in flight.
        expect(
            self.transcript().locator('.ev-recv[data-method="notifications/tools/list_changed"]').first
        ).to_be_attached()
        lines = self.page.eval_on_selector_all(
            "#transcript-lines > .ev",
            """els => els.map(e => [
            e.dataset.dir, e.dataset.method, (e.querySelector(':scope > summary .rid') || {}).textContent || ''])""",
        )
        lists = {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
        in_flight: set[str] = set()
        for direction, method, rid in lines:
            if direction == "send" and method in lists:
                assert not in_flight, f"{method} {rid} sent while {in_flight} still open"
                in_flight.add(rid)
            elif direction == "recv":
                in_flight.discard(rid)
        self.assert_no_js_errors()

    def test_sdk_peer_over_streamable_http(self) -> None:
        pytest.importorskip(
            "playground.mcp.transports.streamable_http", reason="the Streamable HTTP transport is not written yet"
        )
        peer = HttpPeer()
        self.addCleanup(peer.stop)
        self.log_in()
        self.add_server("SDK peer over HTTP", transport="Streamable HTTP", url=peer.url)
        self.connect("weather")
        expect(self.page.locator("#session-state")).to_contain_text("http")
        form = self.open_tool("weather")
        form.get_by_label("city", exact=True).fill("Lisbon")
        form.get_by_role("button", name="Call tool").click()
        result = self.result()
        expect(result).to_contain_text("matches outputSchema")
        expect(result.locator("pre.json").first).to_contain_text('"celsius": 21.5')
        request, response = self.exchange("tools/call")
        expect(response.locator(".http")).to_have_text("HTTP 200")
        expect(response).to_contain_text("Lisbon")
        self.shot("1-result")
        # A line opened (and its raw text) stays open when a reconnect replays the transcript.
        response.locator("summary").first.click()
        response.locator("details.raw > summary").click()
        self.page.locator("#transcript-lines > .ev").evaluate_all("els => els.forEach(e => e.dataset.before = '1')")
        self.reconnect_socket()
        expect(self.page.locator("#transcript-lines > .ev:not([data-before])").first).to_be_attached()  # replayed
        replayed = self.page.locator(f"#{response.get_attribute('id')}")
        expect(replayed).not_to_have_attribute("data-before", "1")
        expect(replayed).to_have_attribute("open", "")
        expect(replayed.locator("details.raw")).to_have_attribute("open", "")
        self.assert_no_js_errors()

    def test_demo_server_result_kinds(self) -> None:
        """An image, an error result, a resource, a prompt and progress, each in the Result region."""
        from django.core.management import call_command

        with mock.patch.dict(os.environ, PLAYGROUND_USER=USERNAME):  # the demo server is the setup user's
            call_command("playground_setup", "--no-link", stdout=open(os.devnull, "w"))
        page = self.page
        self.log_in()
        self.open_server("Playground demo")
        self.connect("swatch")
        result = self.result()

        form = self.open_tool("swatch")
        form.get_by_role("button", name="Call tool").click()
        image = result.get_by_role("img", name="image (image/png)")
        expect(image).to_be_visible()
        assert image.evaluate("i => i.complete && i.naturalWidth") == 32
        self.shot("1-image")

        form = self.open_tool("divide")
        form.get_by_label("a", exact=True).fill("1")
        form.get_by_label("b", exact=True).fill("0")
        form.get_by_role("button", name="Call tool").click()
        expect(result).to_contain_text("isError: true")
        expect(result).to_contain_text("Cannot divide by zero.")
        self.shot("2-error")

        form = self.open_tool("countdown")
        form.get_by_label("steps", exact=True).fill("3")
        form.get_by_label("delay_ms", exact=True).fill("100")
        form.get_by_role("button", name="Call tool").click()
        expect(result).to_contain_text("Lift-off after 3 steps.")
        expect(self.transcript().locator('.ev-recv[data-method="notifications/progress"]')).to_have_count(3)

        page.locator("#catalogue").get_by_role("button", name="readme", exact=True).click()
        expect(result).to_contain_text("# MCP Playground demo")
        self.shot("3-resource")

        page.locator("#catalogue").get_by_role("button", name="review_code", exact=True).click()
        page.locator("#workspace").get_by_label("code", exact=True).fill("print(1)")
        page.locator("#workspace").get_by_role("button", name="Get prompt").click()
        expect(result).to_contain_text("print(1)")
        self.shot("4-prompt")
        self.assert_no_js_errors()
