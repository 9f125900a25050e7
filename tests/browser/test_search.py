"""Search sessions end to end: a tool call made in an older session, followed by more events
than a session page shows, is found from the home page's "Search sessions" box and opened at
its line — shown, marked and still there after the page's websocket replayed its window."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .helpers import LiveBrowserTestCase, peer_args

CITY = "Reykjavik"


class SearchTests(LiveBrowserTestCase):
    def disconnect(self) -> None:
        self.page.get_by_role("button", name="Disconnect").click()
        expect(self.page.get_by_role("status")).to_have_text("ended")

    def test_a_tool_call_of_an_older_session_is_found_and_opened_at_its_line(self) -> None:
        from playground.sessions.transcript_window import REPLAY_WINDOW
        from playground.transcripts.models import Session

        page = self.page
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("SDK peer", command=command, args=args)
        self.connect("weather")
        older = int(re.search(r"/sessions/(\d+)/", page.url).group(1))
        self.call_tool("weather", city=CITY)
        expect(self.result()).to_contain_text(CITY)
        request, _ = self.exchange("tools/call")
        call_seq = int(request.get_attribute("id").removeprefix("ev-"))
        # More events after it than the page's window: the SDK server's progress notifications.
        self.call_tool("slow", steps=str(REPLAY_WINDOW + 100), delay="0")
        expect(self.result()).to_contain_text(f"done after {REPLAY_WINDOW + 100} steps", timeout=60_000)
        self.disconnect()
        last_seq = Session.objects.get(pk=older).event_count
        assert last_seq - call_seq > REPLAY_WINDOW

        self.open_server("SDK peer")  # a newer session, without the city
        self.connect("echo")
        self.call_tool("echo", text="nothing to see")
        expect(self.result()).to_contain_text("nothing to see")
        self.disconnect()

        page.goto(self.url("/"))
        page.get_by_label("Search sessions").fill(CITY)
        self.shot("0-home")
        page.get_by_role("button", name="Search").click()
        results = page.get_by_role("region", name="Search results")
        expect(results.get_by_role("heading")).to_have_count(1)
        expect(results.get_by_role("heading")).to_contain_text(f"SDK peer · session {older}")
        hit = results.get_by_role("link").filter(has_text="tools/call")
        expect(hit).to_have_count(1)
        expect(hit.locator("mark")).to_have_text(CITY)
        expect(hit.locator("time")).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
        self.shot("1-results")
        page.set_viewport_size({"width": 420, "height": 800})
        self.shot("1b-results-narrow")
        page.set_viewport_size({"width": 1440, "height": 900})

        hit.click()
        expect(page).to_have_url(re.compile(rf"/sessions/{older}/\?at={call_seq}$"))
        line = self.transcript().locator(f"#ev-{call_seq}")
        # The page's websocket replays on connect: the same window comes back, the line marked again.
        self.replayed()
        expect(line).to_have_class(re.compile(r"\bev-target\b"))
        expect(line).to_have_attribute("open", "")
        expect(line).to_be_in_viewport()
        expect(line).to_contain_text(CITY)
        expect(self.transcript().locator(f"#ev-{last_seq}")).to_have_count(0)
        expect(self.transcript().locator(".ev")).to_have_count(REPLAY_WINDOW)  # (few before it: more after)
        expect(page.get_by_text(re.compile(rf"around event {call_seq}: newer events are not shown"))).to_be_visible()
        expect(page.get_by_role("button", name="Paused")).to_be_visible()
        self.shot("2-line")

        page.get_by_role("link", name="Show the latest").click()
        expect(self.transcript().locator(f"#ev-{last_seq}")).to_have_count(1)
        expect(self.transcript().locator(".ev-target")).to_have_count(0)
        self.assert_no_js_errors()
