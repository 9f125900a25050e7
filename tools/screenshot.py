"""The front page's screenshot: the session page after a tool call on the bundled demo server.

    .venv/bin/python tools/screenshot.py [OUTPUT]        (default docs/images/session.png)

Starts the app as `make run` does, on a temporary SQLite database (`migrate`, then
`manage.py playground_setup`, which registers the demo server and prints a one-time login link),
serves it with daphne on a free loopback port, and drives headless Chromium (Debian's
/usr/bin/chromium through Playwright): the login link, "Playground demo", Connect, the `echo`
tool's form, Call tool, the response's transcript line opened. It saves the 1440x900 viewport as a PNG, then disconnects, stops daphne
(SIGTERM) and removes the temporary folder. Nothing outside that folder and OUTPUT is touched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from daphne_server import free_port, start_daphne, stop_daphne  # (tools/, this script's folder)
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "images" / "session.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1440, "height": 900}
TIMEOUT_MS = 30_000


def app_env(tmp: Path, port: int) -> dict[str, str]:
    """The environment `make run` gives the app, with a database of our own."""
    env = dict(
        os.environ,
        PLAYGROUND_SQLITE_PATH=str(tmp / "db.sqlite3"),
        PLAYGROUND_BIND="127.0.0.1",
        PLAYGROUND_PORT=str(port),
        PLAYGROUND_LOG_LEVEL="WARNING",
    )
    for name in ("DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "PLAYGROUND_USER", "PLAYGROUND_PASSWORD"):
        env.pop(name, None)
    return env


def set_up(env: dict[str, str]) -> str:
    """`migrate` and `playground_setup`; return the one-time login link it prints."""
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    out = subprocess.run(
        [*manage, "playground_setup"], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout
    match = re.search(r"http://\S+/login/token/\S+/", out)
    if match is None:
        raise RuntimeError(f"playground_setup printed no login link:\n{out}")
    return match.group(0)


def take(login_link: str, output: Path) -> None:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport=VIEWPORT, timezone_id="UTC", color_scheme="light")
            context.set_default_timeout(TIMEOUT_MS)
            expect.set_options(timeout=TIMEOUT_MS)
            page = context.new_page()

            page.goto(login_link)
            page.get_by_role("link", name="Playground demo", exact=True).click()
            page.get_by_role("button", name="Connect").click()
            expect(page).to_have_url(re.compile(r"/sessions/\d+/$"))
            page.wait_for_load_state("load")  # the page's scripts run: a click before them does nothing
            status = page.locator("#session-state").get_by_role("status")
            expect(status).to_have_text("connected")

            catalogue = page.locator("#catalogue")
            catalogue.get_by_role("button", name="echo", exact=True).click()
            form = page.locator("#workspace form#tool-form")
            expect(form).to_have_attribute("data-tool", "echo")
            form.get_by_label("text", exact=True).fill("Hello from MCP Playground")
            form.get_by_label("repeat", exact=True).fill("2")
            form.get_by_role("button", name="Call tool").click()
            result = page.get_by_role("region", name="Result")
            expect(result).to_contain_text("Hello from MCP Playground Hello from MCP Playground")
            transcript = page.get_by_role("log", name="Transcript")
            call = transcript.locator('.ev-send[data-method="tools/call"]').last
            seq = (call.get_attribute("id") or "").removeprefix("ev-")
            response = transcript.locator(f'.ev-recv[data-reply-to="{seq}"]')
            expect(response).to_have_count(1)
            response.locator(":scope > summary").click()  # the line open: its pretty JSON and raw text
            page.mouse.move(0, 0)  # no hover state in the picture
            page.wait_for_timeout(300)  # transitions settle

            output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(output), type="png")  # the viewport: 1440x900

            page.get_by_role("button", name="Disconnect").click()
            expect(status).to_have_text(re.compile(r"^(ended|failed)$"))
        finally:
            browser.close()


def main() -> None:
    output = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else OUTPUT
    if not os.path.exists(CHROMIUM):
        sys.exit(f"{CHROMIUM} is missing: run `make chromium`")
    tmp = Path(tempfile.mkdtemp(prefix="playground-screenshot-"))
    try:
        port = free_port()
        env = app_env(tmp, port)
        link = set_up(env)
        daphne = start_daphne(port, "playground.asgi:application", cwd=ROOT, env=env, log=tmp / "daphne.log")
        try:
            take(link, output)
        finally:
            stop_daphne(daphne)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}: {output.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
