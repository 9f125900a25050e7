"""The live-server base class and UI steps shared by the browser tests.

Every step goes through the page with the names a person sees (labels, button and link
names, roles), so a renamed control fails here first.
"""

from __future__ import annotations

import functools
import os
import re
import select
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from channels.testing import ChannelsLiveServerTestCase
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, expect

ROOT = Path(__file__).resolve().parents[2]
SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
EVERYTHING = ROOT / "tools" / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
# Screenshots to look at, when PLAYGROUND_SHOTS_DIR names a folder for them: a full-page PNG
# costs the browser a few tenths of a second, and nobody looks at them in CI.
SHOTS = Path(os.environ["PLAYGROUND_SHOTS_DIR"]) if os.environ.get("PLAYGROUND_SHOTS_DIR") else None

USERNAME = "tester"
PASSWORD = "e2e-pass-9173"
TIMEOUT_MS = 20_000


@functools.cache
def _password_hash() -> str:
    """Hash once per run: PBKDF2 costs about a second on these machines."""
    from django.contrib.auth.hashers import make_password

    return make_password(PASSWORD)


# Processes started by the app (stdio servers live in daphne's process) ----------------


def _children_by_parent() -> dict[int, list[int]]:
    table: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":  # already exited, waiting for its parent to reap it
            continue
        table.setdefault(int(fields[1]), []).append(int(entry))
    return table


def descendants(root: int) -> list[int]:
    table, out, stack = _children_by_parent(), [], [root]
    while stack:
        for child in table.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def _wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait (pidfd, no polling) until each process has exited; return those still running."""
    left = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([fd], [], [], timeout)[0]:
                left.append(pid)
        finally:
            os.close(fd)
    return left


def end_processes(pids: list[int]) -> None:
    """SIGTERM (the whole group of a session leader), then SIGKILL what remains."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                if os.getpgid(pid) == pid:
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        pids = _wait_gone(pids, 5.0)
        if not pids:
            return


# The state strip a page was served with: its socket's connect replaces it last (`replayed`),
# after the transcript's lines when it sends them.
SERVED_STATE = (
    "document.addEventListener('DOMContentLoaded', () => "
    "{ window.__servedState = document.getElementById('session-state'); })"
)
# The first transcript line a page was served with (add it to a page before it loads): still on
# the page after its socket's connect when the connect did not send the lines again.
SERVED_LINE = (
    "document.addEventListener('DOMContentLoaded', () => "
    "{ window.__servedLine = document.querySelector('#transcript-lines > .ev'); })"
)


class LiveBrowserTestCase(ChannelsLiveServerTestCase):
    """daphne (another process, real websockets) + a fresh Chromium context per test."""

    host = "127.0.0.1"
    page: Page
    context_args: dict[str, Any] = {}  # more new_context() options (timezone_id, ...)
    env: dict[str, str] = {}  # environment of the live server's settings (read when it starts)

    @classmethod
    def setUpClass(cls) -> None:
        before = {name: os.environ.get(name) for name in cls.env}
        os.environ.update(cls.env)
        try:
            super().setUpClass()
        finally:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name)
                else:
                    os.environ[name] = value

    @pytest.fixture(autouse=True)
    def _browser_page(self, browser: Any, request: pytest.FixtureRequest) -> Any:
        self.browser = browser
        self.test_name = request.node.name
        self.js_errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1440, "height": 900}, **self.context_args)
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda exc: self.js_errors.append(str(exc)))
        # Every page works under the app's Content-Security-Policy: Chromium reports each
        # violation (a blocked inline script or style, a foreign load) on the console.
        self.csp_violations: list[str] = []
        self.context.add_init_script(SERVED_STATE)
        self.context.add_init_script(
            "document.addEventListener('securitypolicyviolation', e => console.log('CSP violation:', "
            "e.violatedDirective, e.sourceFile, e.lineNumber, e.target?.outerHTML?.slice(0, 300)))"
        )
        # The pages' warnings and failed requests, printed after the test: pytest shows them
        # with a failure (a load the page gave up on says why only there).
        self.console: list[str] = []

        def heard(message: Any) -> None:
            if "CSP violation" in message.text or "Content Security Policy" in message.text:
                self.csp_violations.append(message.text)
            elif message.type in ("warning", "error"):
                self.console.append(f"{message.type}: {message.text}")

        self.context.on("console", heard)
        self.context.on(
            "response",
            lambda response: (
                self.console.append(f"HTTP {response.status} {response.url}") if response.status >= 400 else None
            ),
        )
        self.context.on(
            "requestfailed", lambda request: self.console.append(f"failed: {request.url} {request.failure}")
        )
        expect.set_options(timeout=TIMEOUT_MS)
        yield
        if self.console or self.js_errors:
            said = [*(f"uncaught: {e}" for e in self.js_errors[-10:]), *self.console[-40:]]
            print("The pages' uncaught errors, console warnings and failed requests:", *said, sep="\n")
        self.context.close()
        assert self.csp_violations == [], f"the page broke its Content-Security-Policy: {self.csp_violations[:3]}"

    def setUp(self) -> None:
        from django.contrib.auth import get_user_model

        get_user_model().objects.create(username=USERNAME, password=_password_hash(), is_staff=False)

    def tearDown(self) -> None:
        # Sessions end (their workers write their last events) before the database is flushed.
        self.end_sessions()
        end_processes(descendants(self._server_process.pid))

    def end_sessions(self) -> None:
        """End every session still live, and wait for it to end. The owner's "stop" (the live
        list's POST) answers once the worker has saved the session's end, which it does after
        its last events: no page is loaded for it (a session page's load and replay cost
        Chromium ~1 s a test). A session that stop cannot end (another owner's, a stop past its
        wait) gets "Disconnect" pressed on its page, as before."""
        from playground.transcripts.models import Session

        ended = re.compile(r"^(ended|failed)$")
        for pk in Session.objects.filter(ended_at__isnull=True).values_list("pk", flat=True):
            if self._stopped(pk):
                continue
            try:
                self.page.goto(self.url(f"/sessions/{pk}/"))
                status = self.page.locator("#session-state").get_by_role("status")  # (panels have their own)
                if not ended.match(status.text_content(timeout=5000) or ""):
                    self.page.get_by_role("button", name="Disconnect").click(timeout=5000)
                expect(status).to_have_text(ended, timeout=10_000)
            except Exception as exc:  # the test's own failure matters more; the reaper follows
                print(f"session {pk} did not end cleanly: {exc}", file=sys.stderr)

    def _stopped(self, pk: int) -> bool:
        """POST the session's stop with this context's login and CSRF token; whether it ended."""
        from playground.transcripts.models import Session

        token = next((c["value"] for c in self.context.cookies() if c["name"] == "csrftoken"), None)
        if token is None:
            return False
        try:
            self.context.request.post(
                self.url(f"/sessions/{pk}/stop/"),
                headers={"X-CSRFToken": token, "Origin": self.live_server_url, "HX-Request": "true"},
                max_redirects=0,
                timeout=15_000,
            )
        except PlaywrightError:
            return False
        return Session.objects.filter(pk=pk, ended_at__isnull=False).exists()

    @classmethod
    def tearDownClass(cls) -> None:
        end_processes(descendants(cls._server_process.pid))
        super().tearDownClass()

    # Steps ---------------------------------------------------------------------------

    def url(self, path: str = "/") -> str:
        return self.live_server_url + path

    def shot(self, step: str, page: Page | None = None) -> None:
        if SHOTS is None:
            return
        SHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{self.test_name}-{step}")
        (page or self.page).screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    def log_in(self) -> None:
        page = self.page
        page.goto(self.url("/"))
        expect(page).to_have_url(re.compile(r"/login/"))
        page.get_by_label("Username").fill(USERNAME)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("link", name="Add server")).to_be_visible()

    def add_server(
        self,
        name: str,
        *,
        transport: str = "stdio",
        command: str = "",
        args: list[str] = (),
        env: dict[str, str] | None = None,
        url: str = "",
        headers: dict[str, str] | None = None,
        roots: list[str] = (),
        era: str = "",
        shot: bool = False,
    ) -> None:
        """Home → "Add server" → fill the form → "Save" → the server's page."""
        page = self.page
        page.goto(self.url("/"))
        page.get_by_role("link", name="Add server").click()
        page.get_by_label("Name", exact=True).fill(name)
        page.get_by_label("Transport").select_option(label=transport)
        if command:
            page.get_by_label("Command").fill(command)
        if args:
            page.get_by_label("Arguments").fill("\n".join(args))
        if env:
            page.get_by_label("Environment", exact=True).fill("\n".join(f"{k}={v}" for k, v in env.items()))
        if url:
            page.get_by_label("URL", exact=True).fill(url)
        if headers:
            page.get_by_label("Headers").fill("\n".join(f"{k}: {v}" for k, v in headers.items()))
        if roots:
            page.get_by_label("Roots").fill("\n".join(roots))
        if era:
            page.get_by_label("Era").select_option(label=era)
        if shot:
            self.shot("server-form")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()

    def open_server(self, name: str) -> None:
        self.page.goto(self.url("/"))
        self.page.get_by_role("link", name=name, exact=True).click()
        expect(self.page.get_by_role("heading", name=name, exact=True)).to_be_visible()

    def connect(self, first_tool: str) -> None:
        """On a server's page: "Connect", then wait for the catalogue to list `first_tool`."""
        page = self.page
        page.get_by_role("button", name="Connect").click()
        expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
        page.wait_for_load_state("load")  # the page's scripts run: a click before them does nothing
        expect(page.get_by_role("status")).to_have_text("connected")
        expect(self.tool_button(first_tool)).to_be_visible()

    def tool_button(self, name: str) -> Locator:
        return self.page.locator("#catalogue").get_by_role("button", name=name, exact=True)

    def open_tool(self, name: str) -> Locator:
        """Click a tool in the catalogue; return its form (the new one, even if the same tool's form
        was already open: the old one is marked first, and the step waits for its replacement)."""
        self.page.evaluate("() => document.querySelector('#workspace form#tool-form')?.setAttribute('data-old', '')")
        form = self.page.locator("#workspace form#tool-form:not([data-old])")
        for _ in range(3):
            # A catalogue refreshed under the click (a server's list_changed at start) replaces the
            # button clicked, and its request goes with it: the new button is clicked then, as a
            # person would.
            button = self.tool_button(name).element_handle()
            try:
                button.click()
            except PlaywrightError:  # (replaced before the click: the new one is clicked)
                continue
            self.page.wait_for_function(
                "([button]) => !button.isConnected || document.querySelector('#workspace form#tool-form:not([data-old])')",
                arg=[button],
            )
            if form.count() or button.evaluate("(button) => button.isConnected"):
                break
        expect(form).to_have_attribute("data-tool", name)
        # Values remembered for this tool are being put back (aria-busy): a field filled meanwhile
        # keeps what was typed, but the step waits so that what it fills is what gets sent.
        expect(form).not_to_have_attribute("aria-busy", "true")
        return form

    def call_tool(self, tool: str, **fields: Any) -> None:
        """Open `tool`, fill its fields (by label), press "Call tool"."""
        form = self.open_tool(tool)
        for label, value in fields.items():
            form.get_by_label(label, exact=True).fill(str(value))
        form.get_by_role("button", name="Call tool").click()

    def result(self) -> Locator:
        return self.page.get_by_role("region", name="Result")

    def transcript(self, page: Page | None = None) -> Locator:
        return (page or self.page).get_by_role("log", name="Transcript")

    # A line in view: its box meets the transcript's and the window's (what to_be_in_viewport
    # checks, for an element inside the one scrolling box). `text`: the first match holding it.
    IN_VIEW = """([selector, last, text]) => {
        let all = Array.from(document.querySelectorAll(selector));
        if (text) all = all.filter((el) => el.textContent.includes(text));
        const el = last ? all[all.length - 1] : all[0];
        if (!el) return false;  // (a hidden one has an empty box: not in view)
        const r = el.getBoundingClientRect();
        const log = el.closest('[role="log"]');
        const b = log ? log.getBoundingClientRect() : { top: 0, bottom: innerHeight, left: 0, right: innerWidth };
        const top = Math.max(r.top, b.top, 0), bottom = Math.min(r.bottom, b.bottom, innerHeight);
        const left = Math.max(r.left, b.left, 0), right = Math.min(r.right, b.right, innerWidth);
        return bottom > top && right > left;
    }"""

    def wait_in_view(
        self,
        selector: str,
        *,
        last: bool = False,
        text: str = "",
        page: Page | None = None,
        timeout: float = TIMEOUT_MS,
    ) -> None:
        """The element `selector` finds (the last with `last`; holding `text`) in view. Not
        `expect().to_be_in_viewport()` on a page of many transcript lines: Playwright (1.65) takes an
        aria snapshot of the whole page on every poll that fails, and each one held the page's
        main thread 1.5-2 s there (a Chromium trace: a style and layout pass per closed <details>
        line) — the replay the test waited for came 8-10 s a frame late on a loaded machine.
        A function polled in the page costs a query and one layout a frame."""
        (page or self.page).wait_for_function(self.IN_VIEW, arg=[selector, last, text], timeout=timeout)

    def replayed(self, page: Page | None = None) -> None:
        """The page's websocket has done its connect: replayed the transcript from the database in
        place of the lines the page was served with, or (a session page whose lines are still the
        latest: `?shown=`) left them. Click a line after this: a click whose mouse-down and
        mouse-up straddle the replay's swap opens nothing (the line pressed is gone when the button
        comes up). A replay that replaces the lines bumps transcript_window.js's generation (so do
        the person's own loads of older or later lines: none on a page just loaded); a session
        page's connect ends with the state strip, which replaces the one the page was served with."""
        (page or self.page).wait_for_function(
            """() => (!!window.transcriptWindow && window.transcriptWindow.state.generation > 0) ||
                (!!window.__servedState && document.getElementById('session-state') !== window.__servedState)""",
            timeout=TIMEOUT_MS,
        )

    def exchange(self, method: str, page: Page | None = None) -> tuple[Locator, Locator]:
        """The last request line for `method` and the response line that answers it."""
        log = self.transcript(page)
        request = log.locator(f'.ev-send[data-method="{method}"]').last
        expect(request).to_be_visible()
        seq = request.get_attribute("id").removeprefix("ev-")
        response = log.locator(f'.ev-recv[data-reply-to="{seq}"]')
        expect(response).to_have_count(1)
        return request, response

    def copy(self, button: Locator) -> str:
        """Click a Copy button; the clipboard once the page says the text is in it. The page's
        status line is emptied first (a previous copy's word is not this one's) and, unlike the
        button's `copied` mark, stays until the next copy: no 1.5 s window to look in."""
        status = self.page.locator("#copy-status")
        status.evaluate("el => { el.textContent = ''; }")
        button.click()
        expect(status).to_have_text("Copied to the clipboard")
        expect(button).to_have_attribute("title", "Copied")  # the button says it too
        return self.page.evaluate("() => navigator.clipboard.readText()")

    def assert_every_block_copies(self, page: Page | None = None) -> None:
        """Every block of text or JSON (<pre>) on the page has its Copy: the button of its
        `.copyable` box, or one naming it (data-copy="#id"). A transcript line's block is the
        exception: its Copy is on the line's summary (checked by the tests of the transcript)."""
        bare = (page or self.page).evaluate("""() => Array.from(document.querySelectorAll("pre")).filter((pre) =>
            !pre.closest(".ev") && !pre.closest(".copyable")?.querySelector(":scope > button.copy")
            && !(pre.id && document.querySelector(`button.copy[data-copy="#${CSS.escape(pre.id)}"]`))
        ).map((pre) => pre.outerHTML.slice(0, 160))""")
        assert bare == [], f"blocks without a Copy button: {bare}"

    def reconnect_socket(self, page: Page | None = None) -> None:
        """The session page's websocket closed and opened again, as a hidden tab's is (htmx's
        pauseOnBackground): the page then replays the transcript from the database."""
        (page or self.page).evaluate("""() => new Promise((closed) => {
            Object.defineProperty(document, 'hidden', {configurable: true, get: () => window.__hidden === true});
            document.addEventListener('htmx:ws:close', closed, {once: true});
            window.__hidden = true; document.dispatchEvent(new Event('visibilitychange'));
        }).then(() => { window.__hidden = false; document.dispatchEvent(new Event('visibilitychange')); })""")

    def answered_ping(self) -> None:
        """A ping sent and answered (legacy sessions): what the page and the worker sent before
        it is in the transcript by then, in order — a barrier before asserting something did
        not happen."""
        pings = self.transcript().locator('.ev-send[data-method="ping"]')
        count = pings.count()
        self.page.get_by_role("button", name="Ping").click()
        expect(pings).to_have_count(count + 1)
        self.exchange("ping")

    def share(self, page: Page | None = None) -> str:
        """Press "Share"; return the address behind the "Share link" it shows."""
        page = page or self.page
        page.get_by_role("button", name="Share").click()
        link = page.get_by_role("link", name="Share link")
        expect(link).to_be_visible()
        href = link.get_attribute("href")
        assert href and "/share/" in href, href
        return href

    def fresh_page(self, width: int = 1440, height: int = 900, **options: Any) -> Page:
        """A page in a context of its own (no cookies: logged out), closed with the test."""
        context = self.browser.new_context(viewport={"width": width, "height": height}, **options)
        context.add_init_script(SERVED_STATE)
        self.addCleanup(context.close)
        return context.new_page()

    def sessions_said(self) -> str:
        """What the database says of every session and its last events: for a failing wait's
        message (a page stuck on a state says nothing of why)."""
        from playground.transcripts.models import Event, Session

        said = []
        for s in Session.objects.order_by("pk"):
            said.append(f"session {s.pk} ({s.kind}): {s.status}, ended {s.ended_at}: {s.end_reason!r}")
            events = Event.objects.filter(session=s).order_by("-seq")[:12]
            said += [f"  {e.seq} {e.t:.3f} {e.dir} {e.method}" for e in reversed(events)]
        return "\n".join(said)

    def assert_no_js_errors(self) -> None:
        assert self.js_errors == [], self.js_errors

    def assert_inert(self, page: Page) -> None:
        """Our own probe fires; none of the server's did; no live link or image it chose."""
        page.evaluate("""() => { const i = document.createElement("img");
            i.onerror = () => { window.__probe = 1; }; i.src = "x-probe"; document.body.append(i); }""")
        page.wait_for_function("() => window.__probe === 1")
        assert page.evaluate("typeof window.__pwned") == "undefined"
        expect(page.locator("script:not([src])")).to_have_count(0)
        expect(page.locator("svg[onload], [onerror]:not([src='x-probe'])")).to_have_count(0)
        hrefs = page.locator("a[href]").evaluate_all("els => els.map(e => e.getAttribute('href'))")
        assert not [h for h in hrefs if h.strip().lower().startswith(("javascript:", "data:text", "data:image/svg"))], (
            hrefs
        )
        srcs = page.locator("img[src]").evaluate_all("els => els.map(e => e.getAttribute('src'))")
        assert not [s for s in srcs if not s.startswith(("data:image/png;base64,", "x-probe"))], srcs


def peer_args(mode: str = "stdio", *extra: str) -> tuple[str, list[str]]:
    """Command and arguments for the SDK peer, as typed into the server form."""
    return sys.executable, [str(SDK_PEER), mode, *extra]


class HttpPeer:
    """The SDK peer over Streamable HTTP (or, `mode="sse"`, the older HTTP+SSE transport) on a
    free loopback port, ready when uvicorn says so."""

    def __init__(self, mode: str = "http") -> None:
        import socket
        import subprocess
        import threading

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/{'sse' if mode == 'sse' else 'mcp'}"
        self.proc = subprocess.Popen(
            [sys.executable, str(SDK_PEER), mode, str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.output: list[str] = []
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self.ready.wait(20):
            self.stop()
            raise RuntimeError("the SDK peer did not start:\n" + "".join(self.output))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.output.append(line)
            if "Uvicorn running on" in line:
                self.ready.set()
        self.ready.set()  # exited: wake the waiter, which then finds no server

    def stop(self) -> None:
        end_processes([self.proc.pid])
        self.proc.wait(5)
        self._reader.join(5)
