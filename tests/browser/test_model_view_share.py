"""The Model view on a share page in Chromium: fetched by the page from the share's own read-only
views (computed once per catalogue, off the database thread), every secret masked, and a
catalogue past the page's budget says which check it did not run."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from playground.transcripts.models import Session, ShareLink

from .helpers import USERNAME, LiveBrowserTestCase

SECRET = "sk-share-model-view-42"


def _catalogue(tools: int, width: int) -> dict:
    return {
        "tools": [
            {
                "name": f"tool_{i}",
                "description": f"Tool {i}, key {SECRET}.",
                "inputSchema": {
                    "type": "object",
                    "properties": {f"p{j}": {"type": "string", "description": "P."} for j in range(width)},
                },
            }
            for i in range(tools)
        ]
    }


class ShareModelViewTests(LiveBrowserTestCase):
    def test_a_share_page_fetches_its_model_view(self) -> None:
        owner = get_user_model().objects.get(username=USERNAME)
        session = Session.objects.create(
            server_name="shared", owner=owner, status="ended", catalogue=_catalogue(120, 49), secret_values=[SECRET]
        )
        link = ShareLink.objects.create(session=session, created_by=owner)
        page = self.page
        page.goto(self.url(f"/share/{link.token}/"))
        panel = page.locator("details.model-view-panel")
        panel.locator("summary", has_text="Model view").click()
        anthropic = panel.locator('details.mv-provider[data-provider="anthropic"]')
        expect(anthropic).to_be_visible()
        expect(anthropic.locator("summary").first).to_contain_text("not checked")  # past the budget: said
        anthropic.locator("summary").first.click()
        late = anthropic.locator("ul.mv-tools > li").nth(119)
        late.locator("summary").click()
        expect(late.locator('li[data-rule="anthropic.draft-2020-12"]')).to_contain_text("Not checked")
        expect(panel).not_to_contain_text(SECRET)
        expect(panel).to_contain_text("key ••••")
        self.shot("1-share-panel")
        self.page.set_viewport_size({"width": 900, "height": 800})
        self.shot("2-narrow")
        self.assert_no_js_errors()
