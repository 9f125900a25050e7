"""The transcript and the layout as a newcomer meets them, on real servers: times of day, a
filter that keeps requests with their answers, Clear, the state a reload restores (log level,
Notifications panel), no horizontal scrolling from 1440 down to 390 px, and both colour
themes readable (WCAG AA, measured on the page's computed colours)."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.sync_api import Locator, Page, expect

from .helpers import EVERYTHING, HttpPeer, LiveBrowserTestCase
from .test_protocol import need_everything

# A zone unlike the machine's (UTC here): the page shows the viewer's local time.
ZONE = "Asia/Kathmandu"  # UTC+05:45
TIME_OF_DAY = re.compile(r"^\d\d:\d\d:\d\d\.\d{3}$")
WIDTHS = (1440, 1024, 800, 390)


def shown_time(origin_ms: int, t: float) -> str:
    """The time of day a line recorded at `t` shows in ZONE: the origin plus `t` in ms as the
    line carries it (one decimal), cut to the millisecond as a JavaScript Date does."""
    total = origin_ms + float(f"{t * 1000:.1f}")
    moment = datetime.fromtimestamp(math.floor(total) / 1000, ZoneInfo(ZONE))
    return moment.strftime("%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def seq_of(line: Locator) -> int:
    return int((line.get_attribute("id") or "").removeprefix("ev-"))


# The WCAG 2 contrast of every piece of text the page shows, against what is really behind it
# (the element's own and its ancestors' backgrounds, composited). Returns the failures.
CONTRAST_JS = r"""() => {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, bottom) => ({ r: top.r * top.a + bottom.r * (1 - top.a), g: top.g * top.a + bottom.g * (1 - top.a),
                                   b: top.b * top.a + bottom.b * (1 - top.a), a: 1 });
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const dark = matchMedia("(prefers-color-scheme: dark)").matches;
  const canvas = dark ? { r: 18, g: 18, b: 18, a: 1 } : { r: 255, g: 255, b: 255, a: 1 };
  function backdrop(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.backgroundImage !== "none") return null;        // a gradient or image: not measured here
      const c = parse(cs.backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = canvas;
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  }
  const large = (cs) => { const px = parseFloat(cs.fontSize); return px >= 24 || (px >= 18.66 && Number(cs.fontWeight) >= 700); };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const failures = [];
  let measured = 0;
  function check(el, cs, text, color) {
    if (el.closest(":disabled, [aria-disabled=true]")) return;          // inactive controls are exempt
    if (Number(cs.opacity) < 1) return;
    const fg = parse(color), bg = backdrop(el);
    if (!fg || !bg) return;
    const need = large(cs) ? 3 : 4.5;
    const r = ratio(fg.a < 1 ? over(fg, bg) : fg, bg);
    measured++;
    if (r < need) failures.push(`${name(el)} "${text.slice(0, 40)}" ${color} on rgb(${Math.round(bg.r)}, ${Math.round(bg.g)}, ${Math.round(bg.b)}): ${r.toFixed(2)} < ${need}`);
  }
  for (const el of document.body.querySelectorAll("*")) {
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const rect = el.getBoundingClientRect();
    if (rect.width <= 1 || rect.height <= 1) continue;                  // visually hidden (screen readers only)
    const cs = getComputedStyle(el);
    const own = Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim();
    if (own) check(el, cs, own, cs.color);
    if (el.matches("input:not([type=checkbox]):not([type=radio]):not([type=hidden]), textarea, select")) {
      if (el.value) check(el, cs, el.value, cs.color);
      else if (el.placeholder) check(el, cs, el.placeholder, getComputedStyle(el, "::placeholder").color);
    }
    const before = getComputedStyle(el, "::before");
    if (before.content && !["none", "normal", '""'].includes(before.content)) check(el, cs, before.content, before.color);
  }
  return { measured, failures };
}"""


class TranscriptViewTests(LiveBrowserTestCase):
    context_args = {"timezone_id": ZONE}

    def line_ms_before(self, line: Locator) -> float:
        """The recorded ms of the transcript line shown just before `line`."""
        return float(
            line.evaluate("""el => { let p = el.previousElementSibling;
            while (p && !p.matches('.ev')) p = p.previousElementSibling;
            return p.querySelector(':scope > summary > .t').dataset.ms; }""")
        )

    def filter_for(self, text: str) -> None:
        self.page.get_by_label("Filter the transcript").fill(text)

    def test_times_filter_pairs_clear_and_what_a_reload_restores(self) -> None:
        from playground.transcripts.models import Event, Session

        need_everything()
        page = self.page
        self.log_in()
        self.add_server("Everything", command=str(EVERYTHING), args=["stdio"])
        self.connect("get-sum")
        result = self.result()
        self.call_tool("get-sum", a=2, b=3)
        expect(result).to_contain_text("The sum of 2 and 3 is 5.")
        request, response = self.exchange("tools/call")

        # Times of day: the session's clock origin (the real time the tap started) plus each
        # event's recorded t, in the viewer's zone; the gap to the line before on hover.
        session = Session.objects.get()
        assert session.clock_origin is not None
        assert abs((session.clock_origin - session.started_at).total_seconds()) < 30
        t_of = {e.seq: e.t for e in Event.objects.filter(session=session, seq__in=[seq_of(request), seq_of(response)])}
        for line in (request, response):
            expect(line.locator(":scope > summary > .t")).to_have_text(
                shown_time(session.clock_origin_ms, t_of[seq_of(line)])
            )
        time = response.locator(":scope > summary > .t")
        gap = float(f"{t_of[seq_of(response)] * 1000:.1f}") - self.line_ms_before(response)
        time.hover()
        expect(time).to_have_attribute(
            "title", re.compile("^" + re.escape(f"+{gap:.1f} ms since the previous line · "))
        )
        self.shot("1-times")

        # Relative milliseconds as an option, remembered across a reload.
        relative = page.get_by_label("relative ms")
        relative.check()
        expect(time).to_have_text(f"{t_of[seq_of(response)] * 1000:.1f}")
        page.reload()
        expect(page.get_by_label("relative ms")).to_be_checked()
        _request, response = self.exchange("tools/call")
        expect(response.locator(":scope > summary > .t")).to_have_text(f"{t_of[seq_of(response)] * 1000:.1f}")
        page.get_by_label("relative ms").uncheck()
        expect(response.locator(":scope > summary > .t")).to_have_text(TIME_OF_DAY)

        # The filter keeps a request with its answer and its progress, live lines included.
        self.call_tool("trigger-long-running-operation", duration=1, steps=3)
        expect(result).to_contain_text("Long running operation completed")
        long_request, long_response = self.exchange("tools/call")
        log = self.transcript()
        progress = log.locator('.ev-recv[data-method="notifications/progress"]')
        expect(progress).to_have_count(3)
        self.filter_for("get-sum")
        calls = log.locator('.ev-send[data-method="tools/call"]').filter(has_text='"get-sum"')
        sum_request = log.locator(f"#ev-{seq_of(calls)}")
        sum_response = log.locator(f'.ev-recv[data-reply-to="{seq_of(sum_request)}"]')
        expect(sum_response).to_be_visible()
        expect(sum_response).not_to_contain_text("get-sum")  # shown for its request, not its text
        expect(long_request).to_be_hidden()
        for i in range(3):
            expect(progress.nth(i)).to_be_hidden()
        self.filter_for("trigger-long-running")
        expect(long_request).to_be_visible()
        expect(long_response).to_be_visible()
        for i in range(3):
            expect(progress.nth(i)).to_be_visible()
            expect(progress.nth(i)).not_to_contain_text("trigger-long-running")
        expect(sum_response).to_be_hidden()
        self.shot("2-filter-progress")
        self.filter_for("get-sum")
        self.call_tool("get-sum", a=4, b=5)  # arrives while the filter is on
        expect(result).to_contain_text("The sum of 4 and 5 is 9.")
        new_request, new_response = self.exchange("tools/call")
        expect(new_response).to_be_visible()
        expect(new_response).to_contain_text("The sum of 4 and 5 is 9.")
        # A matching response shows the request it answers.
        self.filter_for("The sum of 4 and 5")
        expect(new_request).to_be_visible()
        expect(sum_request).to_be_hidden()
        # The direction boxes still apply.
        page.get_by_label("→").uncheck()
        expect(new_request).to_be_hidden()
        expect(new_response).to_be_visible()
        page.get_by_label("→").check()
        self.filter_for("")
        expect(long_request).to_be_visible()

        # Clear empties this view only: live lines keep coming, the database and the export keep all.
        lines = log.locator("#transcript-lines > .ev")
        count = lines.count()
        last_cleared = seq_of(lines.last)
        page.get_by_role("button", name="Clear").click()
        expect(lines).to_have_count(0)
        note = log.get_by_role("note")
        expect(note).to_have_text(
            re.compile(
                rf"^Cleared {count} lines from this view at \d\d:\d\d:\d\d\. The saved transcript and the exports "
                r"keep everything; reloading the page shows it all again\.$"
            )
        )
        self.call_tool("echo", message="after the clear")
        expect(result).to_contain_text("Echo: after the clear")
        expect(log.locator(".ev-recv").filter(has_text="Echo: after the clear")).to_be_visible()
        assert min(int(i.removeprefix("ev-")) for i in lines.evaluate_all("els => els.map(e => e.id)")) > last_cleared
        self.shot("3-cleared")
        saved = Event.objects.filter(session=session).count()
        assert saved > count
        export = page.request.get(self.url(page.get_by_role("link", name="Export JSONL").get_attribute("href")))
        exported = [json.loads(x) for x in export.text().splitlines()]
        assert len(exported) >= saved
        assert any(
            e["dir"] == "send" and (e.get("message") or {}).get("params", {}).get("name") == "get-sum" for e in exported
        )

        # A reconnect (a hidden tab's socket closes; it replays from the database when shown
        # again) keeps the view cleared.
        lines.evaluate_all("els => els.forEach(e => e.dataset.before = '1')")
        self.reconnect_socket()
        expect(log.locator("#transcript-lines > .ev:not([data-before])").first).to_be_attached()  # the replay came
        expect(note).to_be_visible()
        assert min(int(i.removeprefix("ev-")) for i in lines.evaluate_all("els => els.map(e => e.id)")) > last_cleared

        # The log level: "not set" until the server accepts one, then that level, after a reload too.
        level = page.get_by_label("Log level")
        expect(level).to_have_value("")
        level.select_option("debug")
        page.get_by_role("button", name="Set level").click()
        expect(page.locator("#log-state")).to_contain_text("level set to debug")

        # A reload rebuilds the view from the database: everything is back.
        page.reload()
        expect(self.transcript().get_by_role("note")).to_have_count(0)
        expect(lines.first).to_have_attribute("id", "ev-1")
        assert lines.count() >= count
        expect(page.get_by_label("Log level")).to_have_value("debug")
        expect(page.get_by_role("log", name="Log messages").locator(".t").first).to_have_text(TIME_OF_DAY)
        self.shot("4-reloaded")
        self.assert_no_js_errors()

    def test_notifications_panel_opens_on_the_newest_entry(self) -> None:
        """The SDK peer, modern, over Streamable HTTP: listening, `touch` sends two notifications a call."""
        peer = HttpPeer()
        self.addCleanup(peer.stop)
        page = self.page
        self.log_in()
        self.add_server("SDK peer over HTTP", transport="Streamable HTTP", url=peer.url, era="Modern")
        self.connect("touch")
        page.get_by_label("resourceSubscriptions (one URI per line)").fill("peer://greeting")
        page.get_by_role("button", name="Listen", exact=True).click()
        expect(page.get_by_role("status", name="Stream status")).to_contain_text("open")
        feed = page.get_by_role("log", name="Notifications")
        for i in range(10):
            self.open_tool("touch").get_by_role("button", name="Call tool").click()
            expect(feed.locator("li").filter(has_text="notifications/resources/updated")).to_have_count(i + 1)
        entries = page.locator("#feed-notes > li")  # (counted while the panel is closed too)
        total = entries.count()
        at_bottom = (
            "ol => ol.scrollHeight > ol.clientHeight + 20 && ol.scrollTop + ol.clientHeight >= ol.scrollHeight - 2"
        )
        assert feed.evaluate(at_bottom), "the feed follows its newest entry"
        expect(entries.first.locator(".t")).to_have_text(TIME_OF_DAY)

        page.reload()
        expect(entries).to_have_count(total)
        page.wait_for_function(f"() => ({at_bottom})(document.getElementById('feed-notes'))")
        self.shot("1-reloaded")

        # Scrolled up, it stays where the person put it; closed and opened, it shows the newest.
        feed.evaluate("ol => { ol.scrollTop = 0; ol.dispatchEvent(new Event('scroll')); }")
        self.open_tool("touch").get_by_role("button", name="Call tool").click()
        expect(entries).to_have_count(total + 2)
        assert feed.evaluate("ol => ol.scrollTop") == 0
        feed.evaluate("ol => { ol.scrollTop = ol.scrollHeight; ol.dispatchEvent(new Event('scroll')); }")
        panel = page.locator("details.panel:has(#feed-notes)")
        panel.locator("summary").click()
        expect(feed).to_be_hidden()
        self.open_tool("touch").get_by_role("button", name="Call tool").click()
        expect(entries).to_have_count(total + 4)
        panel.locator("summary").click()
        page.wait_for_function(f"() => ({at_bottom})(document.getElementById('feed-notes'))")
        self.shot("2-reopened")
        page.get_by_role("button", name="Stop listening").click()
        expect(page.get_by_role("status", name="Stream status")).to_contain_text("closed by us")
        self.assert_no_js_errors()


class LayoutTests(LiveBrowserTestCase):
    def controls(self, page: Page) -> list[Locator]:
        """The session page's main controls, each of which must be reachable at every width."""
        return [
            page.get_by_placeholder("Search tools, resources, prompts"),
            self.tool_button("get-sum"),
            page.locator("#workspace").get_by_role("button", name="Call tool"),
            page.get_by_label("Filter the transcript"),
            page.get_by_role("button", name="Clear"),
            page.get_by_role("button", name="Following"),
            page.get_by_label("Log level"),
            page.get_by_role("button", name="Disconnect"),
            page.get_by_role("button", name="Share"),
            page.get_by_role("link", name="Export JSONL"),
        ]

    def no_horizontal_scroll(self, page: Page, where: str) -> None:
        widths = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        assert widths[0] <= widths[1], f"{where}: the page scrolls sideways ({widths[0]} > {widths[1]} px)"

    def contrast(self, page: Page, where: str, least: int = 10) -> None:
        report = page.evaluate(CONTRAST_JS)
        print(f"{where}: {report['measured']} texts measured")
        assert report["measured"] >= least, f"{where}: too little text measured ({report['measured']})"
        assert report["failures"] == [], f"{where}: text below WCAG AA contrast:\n" + "\n".join(report["failures"])

    def test_columns_stack_controls_stay_reachable_both_themes_readable(self) -> None:
        need_everything()
        page = self.page
        self.log_in()
        self.add_server("Everything", command=str(EVERYTHING), args=["stdio"])
        server_page = page.url
        self.connect("get-sum")
        result = self.result()

        # Everything a session shows: an error, a result checked against its output schema, a
        # log message, stderr and notes in the transcript, one line opened.
        page.get_by_role("button", name="Raw request", exact=True).click()
        page.locator("#workspace").get_by_label("method", exact=True).fill("no/such-method")
        page.locator("#workspace").get_by_role("button", name="Send").click()
        expect(result).to_contain_text("-32601")
        form = self.open_tool("get-structured-content")
        form.get_by_label("location", exact=True).select_option("Chicago")
        form.get_by_role("button", name="Call tool").click()
        expect(result).to_contain_text("matches outputSchema")
        page.get_by_label("Log level").select_option("debug")
        page.get_by_role("button", name="Set level").click()
        expect(page.locator("#log-state")).to_contain_text("debug")
        # (Opened where it is: a click() scrolls the line into view first, as a person scrolls to a
        # line below the fold, and that scroll up pauses the transcript — which then failed the
        # check below that a resize keeps it following, at 1440 px, before any resize.)
        opened = self.exchange("tools/call")[1]
        opened.locator(":scope > summary").dispatch_event("click")
        expect(opened).to_have_attribute("open", "")
        form = self.open_tool("get-sum")
        form.get_by_label("a", exact=True).fill("2")
        form.get_by_label("b", exact=True).fill("3")

        # The server's instructions open in a box of their own: the workspace stays in view.
        page.locator("#session-state").get_by_text("instructions", exact=True).click()
        box = page.locator("#session-state .instructions pre")
        expect(box).to_be_visible()
        assert box.evaluate("el => el.scrollHeight > el.clientHeight"), "long instructions scroll in their box"
        assert page.evaluate("() => document.querySelector('#workspace').getBoundingClientRect().top < innerHeight / 2")
        expect(form.get_by_role("button", name="Call tool")).to_be_in_viewport()

        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                where = f"session page, {theme}, {width} px"
                page.evaluate("() => window.scrollTo(0, 0)")
                self.shot(f"{theme}-{width}")
                self.no_horizontal_scroll(page, where)
                columns = page.evaluate("""() => ['.catalogue-col', '.work-col', '.transcript-col'].map(s => {
                    const r = document.querySelector(s).getBoundingClientRect(); return [r.left, r.top]; })""")
                if width > 900:
                    assert columns[0][0] < columns[1][0] < columns[2][0], f"{where}: three columns side by side"
                    heights = page.evaluate("() => [document.documentElement.scrollHeight, innerHeight]")
                    assert heights[0] <= heights[1], (
                        f"{where}: the columns stay put, the page does not scroll {heights}"
                    )
                else:
                    assert columns[0][1] < columns[1][1] < columns[2][1], f"{where}: the columns stack in order"
                # A resize is not the person scrolling up: the transcript keeps following.
                expect(page.locator("#transcript-follow"), f"{where}: the transcript follows").to_have_text("Following")
                for control in self.controls(page):
                    control.scroll_into_view_if_needed()
                    control.click(trial=True)  # visible, enabled, not covered by anything
                    self.no_horizontal_scroll(page, where)
            self.contrast(page, f"session page, {theme}", least=200)

        # The other pages: same widths, same themes.
        share_url = self.share(page)
        for url, name in (
            (self.url("/"), "home"),
            (server_page, "server page"),
            (self.url("/servers/add/"), "server form"),
            (share_url, "share page"),
        ):
            page.goto(url)
            for theme in ("light", "dark"):
                page.emulate_media(color_scheme=theme)
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 900})
                    self.no_horizontal_scroll(page, f"{name}, {theme}, {width} px")
                    if width in (1440, 390):
                        self.shot(f"{name}-{theme}-{width}")
                page.set_viewport_size({"width": 1440, "height": 900})
                self.contrast(page, f"{name}, {theme}")
        self.assert_no_js_errors()
