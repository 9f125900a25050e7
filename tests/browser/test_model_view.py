"""Model view and Copy as curl in Chromium: the panel shows the server's tools as each model API
receives them and copies one provider's JSON; an HTTP request line shows its headers and copies
a curl command, masked unless the owner ticks "include secrets"."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from playground.modelview import providers
from playground.transcripts.models import Session

from .helpers import HttpPeer, LiveBrowserTestCase, peer_args

HEADER_SECRET = "s3cr3t-curl-789"
MASK = "••••"


class ModelViewTests(LiveBrowserTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.live_server_url)

    def test_model_view_copies_a_providers_json(self) -> None:
        page = self.page
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("Model view peer", command=command, args=args)
        self.connect("echo")
        panel = page.locator("details.model-view-panel")
        panel.locator("summary", has_text="Model view").click()
        openai = panel.locator('details.mv-provider[data-provider="openai"]')
        expect(openai).to_be_visible()  # fetched and shown
        openai.locator("summary").first.click()
        chat = openai.get_by_role("region", name="OpenAI Chat Completions tools")
        expect(chat).to_contain_text("≈")
        self.shot("1-openai-open")
        copied = json.loads(self.copy(chat.get_by_role("button", name="Copy")))
        session = Session.objects.get(server_name="Model view peer")
        expected = providers.render(providers.BY_ID["openai-chat"], session.catalogue["tools"])
        assert copied == expected and copied[0]["type"] == "function"
        # The panel names what each API refuses: the peer's tools keep to OpenAI's non-strict rules,
        # strict mode wants more (additionalProperties false, every property required).
        expect(openai.locator("summary").first).to_contain_text("strict only")
        # After "Refresh lists" the worker tells the page to fetch the panel again.
        with page.expect_response(lambda r: r.url.endswith(f"/sessions/{session.pk}/model-view/")):
            page.get_by_role("button", name="Refresh lists").click()
        expect(openai).to_be_visible()
        # The last tool result, as a model receives it.
        form = self.open_tool("echo")
        form.get_by_label("text", exact=True).fill("for the model")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result().locator("pre.text").first).to_have_text("for the model")
        panel.get_by_role("button", name="Show the last tool result as a model receives it").click()
        shown = page.locator("#model-view-result")
        expect(shown).to_contain_text("Last tool result")
        expect(shown).to_contain_text("SDK simple chatbot")
        chatbot = shown.locator("details.mv-shape", has_text="SDK simple chatbot")
        chatbot.locator("summary").click()
        expect(shown).to_contain_text(
            "Tool execution result: meta=None content=[TextContent(type='text', text='for the model'"
        )
        # Each shape copies as shown; every block of the panel has its Copy.
        assert self.copy(chatbot.get_by_role("button", name="Copy")) == chatbot.locator("pre").text_content()
        assert "text='for the model'" in chatbot.locator("pre").text_content()
        self.assert_every_block_copies()
        self.shot("2-tool-result")
        self.page.set_viewport_size({"width": 1100, "height": 800})
        self.shot("3-narrow")
        self.assert_no_js_errors()

    def test_the_panel_is_fetched_only_while_it_is_open(self) -> None:
        """Every tab gets the panel's loader at each catalogue change and reconnect: a closed
        panel is not fetched, an open one is (at opening, and at each change while open)."""
        page = self.page
        fetched: list[str] = []
        page.on("request", lambda r: fetched.append(r.url) if re.search(r"/sessions/\d+/model-view/$", r.url) else None)
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("Model view peer", command=command, args=args)
        self.connect("echo")
        loader = page.locator("#model-view", has_text="Loading the Model view")  # not fetched
        expect(loader).to_be_attached()
        page.evaluate("() => { document.getElementById('catalogue').dataset.before = '1'; }")
        page.get_by_role("button", name="Refresh lists").click()
        expect(page.locator("#catalogue:not([data-before])")).to_be_attached()  # the new lists are in
        self.answered_ping()  # answered after the loader that followed the lists
        expect(loader).to_be_attached()
        assert fetched == []
        panel = page.locator("details.model-view-panel")
        with page.expect_response(lambda r: re.search(r"/sessions/\d+/model-view/$", r.url) is not None):
            panel.locator("summary", has_text="Model view").click()
        expect(panel.locator('details.mv-provider[data-provider="openai"]')).to_be_visible()
        with page.expect_response(lambda r: re.search(r"/sessions/\d+/model-view/$", r.url) is not None):
            page.get_by_role("button", name="Refresh lists").click()  # open: fetched again
        expect(panel.locator('details.mv-provider[data-provider="openai"]')).to_be_visible()
        self.shot("1-panel-open")
        panel.locator("summary", has_text="Model view").click()  # closed again
        page.evaluate("() => { document.getElementById('catalogue').dataset.before = '1'; }")
        page.get_by_role("button", name="Refresh lists").click()
        expect(page.locator("#catalogue:not([data-before])")).to_be_attached()
        self.answered_ping()
        expect(loader).to_be_attached()
        assert len(fetched) == 2, fetched
        self.assert_no_js_errors()

    def test_copy_as_curl_masked_then_with_secrets(self) -> None:
        peer = HttpPeer()
        self.addCleanup(peer.stop)
        page = self.page
        self.log_in()
        self.add_server("Curl peer", transport="Streamable HTTP", url=peer.url, headers={"X-Api-Key": HEADER_SECRET})
        self.connect("echo")
        form = self.open_tool("echo")
        form.get_by_label("text", exact=True).fill("it's curl")
        form.get_by_role("button", name="Call tool").click()
        request, _response = self.exchange("tools/call")
        request.locator("summary").first.click()
        headers = request.get_by_label("Request headers")
        expect(headers).to_contain_text("Mcp-Session-Id: ")
        expect(headers).to_contain_text(f"X-Api-Key: {MASK}")
        expect(headers).to_contain_text("MCP-Protocol-Version: ")
        self.shot("1-request-line")
        masked = self.copy(request.get_by_role("button", name="Copy as curl"))
        assert f"X-Api-Key: {MASK}" in masked and HEADER_SECRET not in masked and peer.url in masked
        assert "--data-raw" in masked and "it'\"'\"'s curl" in masked
        page.get_by_label("curl: include secrets").check()
        assert f"X-Api-Key: {HEADER_SECRET}" in self.copy(request.get_by_role("button", name="Copy as curl"))
        self.assert_no_js_errors()
