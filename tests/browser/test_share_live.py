"""Live shares in Chromium: a share link of a live session streams to several logged-out viewers
as it happens (read-only, secrets masked, marked Live), revoking the link disconnects them within
a second, and a share of an ended session is a Snapshot with no Following control."""

from __future__ import annotations

import re
import time
from urllib.parse import urlsplit

from playwright.sync_api import Page, WebSocket, expect

from .helpers import EVERYTHING, SERVED_LINE, TIMEOUT_MS, LiveBrowserTestCase, peer_args

ENV_SECRET = "s3cr3t-env-live-456"
MASK = "••••"
REVOKE_DEADLINE = 1.0  # seconds from "Revoke" to the last viewer's socket closed (issue 14)


class LiveShareTests(LiveBrowserTestCase):
    def viewer(self, href: str, width: int = 1440) -> tuple[Page, dict[str, list]]:
        """The link in a fresh, logged-out context; keeps its sockets and the frames they sent."""
        page = self.fresh_page(width)
        page.on("pageerror", lambda exc: self.js_errors.append(f"viewer: {exc}"))
        sockets: dict[str, list] = {"opened": [], "sent": []}

        def on_socket(ws: WebSocket) -> None:
            sockets["opened"].append(ws)
            ws.on("framesent", lambda frame: sockets["sent"].append(frame))

        page.on("websocket", on_socket)
        page.add_init_script(SERVED_LINE)
        page.goto(href)
        expect(page.get_by_role("link", name="Add server")).to_have_count(0)  # not logged in
        return page, sockets

    @staticmethod
    def wait_closed(ws: WebSocket) -> None:
        """Until the server has closed it (Playwright's own deadline: a socket left open fails)."""
        if not ws.is_closed():
            ws.wait_for_event("close", timeout=TIMEOUT_MS)

    def assert_acts_on_nothing(self, page: Page) -> None:
        for selector in ("form", "[hx-ws\\:send]", "[hx-post]", "textarea"):
            expect(page.locator(selector)).to_have_count(0)
        # It may fetch its own read-only parts (the Model view's last tool result), nothing else.
        token = urlsplit(page.url).path.rstrip("/").rsplit("/", 1)[-1]
        fetches = page.locator("[hx-get]").evaluate_all("els => els.map(e => e.getAttribute('hx-get'))")
        assert all(url.startswith(f"/share/{token}/") for url in fetches), fetches
        for name in ("Call tool", "Share", "Disconnect", "Reconnect", "Ping", "Raw request", "Revoke", "Edit"):
            expect(page.get_by_role("button", name=name, exact=True, include_hidden=True)).to_have_count(0)

    def test_a_live_share_streams_to_viewers_masked_and_revoking_disconnects_them(self) -> None:
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("Peer with a token", command=command, args=args, env={"API_TOKEN": ENV_SECRET})
        self.connect("echo")
        self.answered_ping()  # (every event so far saved: none comes while the viewers load)
        href = self.share()
        viewers = [self.viewer(href), self.viewer(href, width=800)]
        for page, sockets in viewers:
            expect(page.locator("#share-mode .mode-name")).to_have_text("Live")
            expect(page.get_by_role("button", name="Following")).to_be_visible()
            expect(self.transcript(page).locator('[data-method="tools/list"]')).to_have_count(1)
            socket_url = (
                self.url(href.split(self.live_server_url)[-1]).replace("http", "ws", 1).replace("/share/", "/ws/share/")
            )
            # It says what its lines hold: its connect (done once the state strip is replaced)
            # leaves the lines it was served with (no event came since), not swapped in again.
            assert [re.sub(r"\?shown=\d+\.\d+$", "", ws.url) for ws in sockets["opened"]] == [socket_url], sockets
            self.replayed(page)
            kept = "() => [window.__servedLine.isConnected, window.transcriptWindow.state.generation]"
            assert page.evaluate(kept) == [True, 0], self.sessions_said()
            self.assert_acts_on_nothing(page)
            self.assert_every_block_copies(page)  # (the server's instructions)

        # The owner works; every viewer sees it as it happens, with the secret masked.
        form = self.open_tool("echo")
        form.get_by_label("text", exact=True).fill(f"the token is {ENV_SECRET}")
        form.get_by_role("button", name="Call tool").click()
        expect(self.result().locator("pre.text").first).to_have_text(f"the token is {ENV_SECRET}")
        for page, _sockets in viewers:
            _request, response = self.exchange("tools/call", page)
            expect(response).to_contain_text(f"the token is {MASK}")
            assert ENV_SECRET not in page.content()
        self.shot("1-viewer-live-1440", viewers[0][0])
        self.shot("1-viewer-live-800", viewers[1][0])
        self.shot("1-owner")

        # Revoked: within a second the viewers' sockets close (the time each close reached this
        # test: later than it happened, never earlier), and their pages say so, keeping what they had.
        closed: list[float] = []
        for _page, sockets in viewers:
            sockets["opened"][0].on("close", lambda _ws: closed.append(time.monotonic()))
        revoked = time.monotonic()
        self.page.locator("#share-area").get_by_role("button", name="Revoke").click()
        for _page, sockets in viewers:
            (socket,) = sockets["opened"]
            self.wait_closed(socket)  # the server closed it
        assert len(closed) == 2 and max(closed) - revoked < REVOKE_DEADLINE, [t - revoked for t in closed]
        for page, sockets in viewers:
            expect(page.get_by_role("status").filter(has_text="Revoked")).to_have_count(1)
            expect(page.get_by_text("This share link was revoked.")).to_be_visible()
            expect(page.get_by_role("button", name="Following", include_hidden=True)).to_have_count(0)
            assert sockets["sent"] == [], sockets["sent"]  # a viewer never sent a thing
            expect(self.transcript(page).locator('[data-method="tools/call"]')).to_have_count(1)
        self.shot("2-viewer-revoked", viewers[0][0])
        assert viewers[0][0].goto(href).status == 404
        self.assert_no_js_errors()

    def test_a_line_that_comes_again_is_shown_once_on_the_owners_and_a_viewers_page(self) -> None:
        """The replay on (re)connect reads lines the worker also sends to the live group once it
        has them saved (or is sending them): the page keeps the first of two lines of one id."""
        self.log_in()
        command, args = peer_args("stdio")
        self.add_server("Peer", command=command, args=args)
        self.connect("echo")
        watching, _sockets = self.viewer(self.share())
        for page in (self.page, watching):
            line = self.transcript(page).locator('.ev-send[data-method="tools/list"]')
            expect(line).to_have_count(1)
            line_id = line.get_attribute("id")
            page.evaluate(
                """(id) => {
                const line = document.getElementById(id);
                line.dataset.first = "1";
                const again = line.cloneNode(true);
                delete again.dataset.first;
                document.getElementById("transcript-lines").append(again);    // as an htmx append does
            }""",
                line_id,
            )
            expect(page.locator(f'[id="{line_id}"]')).to_have_count(1)
            expect(page.locator(f'[id="{line_id}"]')).to_have_attribute("data-first", "1")
        # Lines that are new still come.
        form = self.open_tool("echo")
        form.get_by_label("text", exact=True).fill("after the repeat")
        form.get_by_role("button", name="Call tool").click()
        for page in (self.page, watching):
            _request, response = self.exchange("tools/call", page)
            expect(response).to_contain_text("after the repeat")
        self.assert_no_js_errors()

    def test_an_ended_sessions_share_is_a_snapshot(self) -> None:
        self.log_in()
        self.add_server("Everything", command=str(EVERYTHING), args=["stdio"])
        self.connect("echo")
        watching, sockets = self.viewer(self.share())
        mode = watching.get_by_role("status").filter(has=watching.locator(".mode-name"))  # the page's status line
        expect(mode.locator(".mode-name")).to_have_text("Live")
        expect(watching.get_by_role("button", name="Following")).to_be_visible()
        self.page.get_by_role("button", name="Disconnect").click()
        expect(self.page.get_by_role("status")).to_have_text("ended")
        # The page that was watching turns into the snapshot it now is: nothing more to follow.
        expect(mode.locator(".mode-name")).to_have_text("Snapshot")
        expect(watching.locator("#session-state").get_by_role("status")).to_have_text("ended")
        expect(self.transcript(watching).locator('[data-method="closed"]')).to_have_count(1)
        expect(watching.get_by_role("button", name="Following", include_hidden=True)).to_have_count(0)
        expect(watching.get_by_role("button", name="Paused", include_hidden=True)).to_have_count(0)
        self.shot("0-watching-ended", watching)

        # A share made now, of the ended session: a snapshot from the start, no socket, no Following.
        page, sockets = self.viewer(self.share())
        expect(page.locator("#share-mode .mode-name")).to_have_text("Snapshot")
        expect(page.locator("#session-state").get_by_role("status")).to_have_text("ended")
        expect(self.transcript(page).locator('[data-method="tools/list"]').first).to_be_attached()
        expect(page.get_by_role("button", name="Following", include_hidden=True)).to_have_count(0)
        expect(page.locator("[hx-ws\\:connect]")).to_have_count(0)
        page.wait_for_load_state("networkidle")
        assert sockets["opened"] == [], sockets
        self.assert_acts_on_nothing(page)
        self.shot("1-snapshot", page)
        assert re.search(r"session \d{4}-\d{2}-\d{2}", page.locator("h1").text_content())
        self.assert_no_js_errors()
