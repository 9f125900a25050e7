"""A long session in Chromium (issue 31): a saved session of N events (default 100,000: the
initialize request first, a tools/call naming a city at seq 10, then progress notifications),
served by daphne (harness.App). Prints:

- first paint: from navigation to the first contentful paint, to the transcript's last line
  shown (the page's own window), and to the end of its socket's connect (the state strip replaced,
  after a replay of the lines if it sends one), with the main thread's long tasks until then;
- scroll to the top: scrolling the transcript up, a chunk at a time, until the initialize request
  is on the page (chunks loaded, lines the page held at most); and the "First line" button;
- filter: typing the city in "Filter the transcript" until its match in the whole session is
  listed, then choosing it until its line is shown, marked, in place.

    .venv/bin/python bench/long_session.py [N]
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import harness

from playground.transcripts.models import Session
from playground.transcripts.recorder import save_events
from playground.transcripts.search import catch_up

CITY = "Timbuktu"
CALL_SEQ = 10
BATCH = 5_000


def row(seq: int) -> dict[str, Any]:
    if seq == 1:
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench"}},
        }
        return {"seq": seq, "t": 0.001, "dir": "send", "raw": json.dumps(message), "message": message}
    if seq == CALL_SEQ:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "weather", "arguments": {"city": CITY}},
        }
        return {"seq": seq, "t": seq / 1000, "dir": "send", "raw": json.dumps(message), "message": message}
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p-1", "progress": seq, "total": 10**6, "message": f"step {seq}"},
    }
    return {"seq": seq, "t": seq / 1000, "dir": "recv", "raw": json.dumps(message), "message": message}


def seed(app: harness.App, total: int) -> int:
    session = Session.objects.create(server_name="long", owner=app.user, status="ended")
    for start in range(1, total + 1, BATCH):
        save_events(session.pk, [row(seq) for seq in range(start, min(total, start + BATCH - 1) + 1)])
    return session.pk


def in_chromium(app: harness.App, session_id: int, total: int) -> dict[str, float]:
    from playwright.sync_api import expect, sync_playwright

    out: dict[str, float] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.add_cookies([{"name": k, "value": v, "url": app.base} for k, v in app.http.cookies.items()])
            # The socket's connect ends with the state strip replacing the page's (after the
            # replay of the lines, when it sends one); the main thread's long tasks until then.
            context.add_init_script(CONNECT_DONE)
            page = context.new_page()
            t0 = time.perf_counter()
            page.goto(f"{app.base}/sessions/{session_id}/")
            log = page.get_by_role("log", name="Transcript")
            expect(log.locator(f"#ev-{total}")).to_be_visible(timeout=60_000)
            out["last_line_shown_ms"] = (time.perf_counter() - t0) * 1000
            out["first_contentful_paint_ms"] = page.evaluate(
                "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"
            )
            page.wait_for_function("() => window.__connectDone !== undefined", timeout=60_000)
            out["connect_done_ms"], out["long_tasks_ms"] = page.evaluate(
                "() => [window.__connectDone, window.__longAtConnect]"
            )
            expect(page.locator("#transcript-lines > p.older")).to_be_visible(timeout=60_000)  # (served with the lines)

            initialize = log.locator('.ev[data-method="initialize"]')
            chunks, most = 0, 0
            t1 = time.perf_counter()
            while not initialize.count():
                first = page.evaluate("() => +document.querySelector('#transcript-lines > .ev').id.slice(3)")
                page.evaluate("() => { document.getElementById('transcript').scrollTop = 0; }")
                page.wait_for_function(
                    "(first) => +document.querySelector('#transcript-lines > .ev').id.slice(3) !== first",
                    arg=first,
                    timeout=60_000,
                )
                chunks += 1
                most = max(most, page.evaluate("() => document.getElementById('transcript-lines').children.length"))
            out["scroll_to_top_s"] = time.perf_counter() - t1
            out["scroll_chunks"] = chunks
            out["scroll_chunk_ms"] = out["scroll_to_top_s"] * 1000 / max(chunks, 1)
            out["most_lines_held"] = most

            page.goto(f"{app.base}/sessions/{session_id}/")
            expect(log.locator(f"#ev-{total}")).to_be_visible(timeout=60_000)
            expect(page.locator("#transcript-lines > p.older")).to_be_visible(timeout=60_000)
            t4 = time.perf_counter()
            page.get_by_role("button", name="First line").click()
            expect(initialize).to_be_in_viewport(timeout=60_000)
            out["first_line_button_ms"] = (time.perf_counter() - t4) * 1000

            page.goto(f"{app.base}/sessions/{session_id}/")
            expect(log.locator(f"#ev-{total}")).to_be_visible(timeout=60_000)
            expect(page.locator("#transcript-lines > p.older")).to_be_visible(timeout=60_000)
            t2 = time.perf_counter()
            page.get_by_label("Filter the transcript").fill(CITY)
            hit = page.get_by_role("region", name="Matches in the whole session").get_by_role("button").first
            expect(hit).to_contain_text("tools/call", timeout=60_000)
            out["filter_match_listed_ms"] = (time.perf_counter() - t2) * 1000  # (typing pause 250 ms included)
            t3 = time.perf_counter()
            hit.click()
            line = log.locator(f"#ev-{CALL_SEQ}.ev-target")
            expect(line).to_be_in_viewport(timeout=60_000)
            out["filter_open_match_ms"] = (time.perf_counter() - t3) * 1000
        finally:
            browser.close()
    return out


CONNECT_DONE = """
window.__long = 0;
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long += e.duration; })
  .observe({type: "longtask", buffered: true});
document.addEventListener("DOMContentLoaded", () => {
  const served = document.getElementById("session-state");
  new MutationObserver((_, observer) => {
    if (document.getElementById("session-state") === served) return;
    window.__connectDone = performance.now();
    window.__longAtConnect = window.__long;
    observer.disconnect();
  }).observe(document.body, {childList: true, subtree: true});
});
"""


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    app = harness.App()
    app.start()
    try:
        t0 = time.perf_counter()
        session_id = seed(app, total)
        seeded = time.perf_counter() - t0
        t1 = time.perf_counter()
        while catch_up(budget=60):
            pass
        indexed = time.perf_counter() - t1
        print(f"{total:,} events saved in {seeded:.1f} s, indexed for search in {indexed:.1f} s")
        figures = in_chromium(app, session_id, total)
    finally:
        app.stop()
    print(f"first contentful paint           {figures['first_contentful_paint_ms']:8.0f} ms")
    print(f"last line shown (the page's)     {figures['last_line_shown_ms']:8.0f} ms")
    print(
        f"socket's connect done            {figures['connect_done_ms']:8.0f} ms "
        f"(main thread in long tasks until then: {figures['long_tasks_ms']:.0f} ms)"
    )
    print(
        f"scroll to the top                {figures['scroll_to_top_s']:8.1f} s "
        f"({figures['scroll_chunks']:.0f} chunks, {figures['scroll_chunk_ms']:.0f} ms each; "
        f"at most {figures['most_lines_held']:.0f} lines held)"
    )
    print(f"'First line' button              {figures['first_line_button_ms']:8.0f} ms")
    print(
        f"filter: match listed             {figures['filter_match_listed_ms']:8.0f} ms (250 ms typing pause included)"
    )
    print(f"filter: match opened in place    {figures['filter_open_match_ms']:8.0f} ms")


if __name__ == "__main__":
    main()
