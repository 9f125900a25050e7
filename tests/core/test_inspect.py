"""`manage.py inspect`: from a server's own folder, one command registers it, serves the app and
prints a one-time link that lands on a live session of it; run again, it reuses the server."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import PEERS
from tests.daphne_process import MANAGE, ROOT, app_env, tab, until
from tests.http_peers import wait_port

LINK = re.compile(r"^  (http://127\.0\.0\.1:(\d+)/login/token/\S+/)$", re.M)
pytestmark = pytest.mark.timeout(120)


def inspect(folder: Path, env: dict[str, str], *argv: str) -> tuple[subprocess.Popen, str, int]:
    """`manage.py inspect ARGV` run from `folder`: the process (serving) and what it printed up to its link."""
    proc = subprocess.Popen(
        [*MANAGE, "inspect", *argv],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    printed = []
    assert proc.stdout is not None
    for line in proc.stdout:  # until the link (then daphne serves)
        printed.append(line)
        if match := LINK.match(line.rstrip("\n")):
            wait_port(int(match.group(2)), proc, timeout=30)
            return proc, "".join(printed), int(match.group(2))
    proc.wait()
    raise AssertionError("inspect printed no link:\n" + "".join(printed))


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(20)


def land(link: str, port: int) -> tuple[httpx.Client, int]:
    """Follow the link as a browser does: the session it lands on."""
    browser = httpx.Client(follow_redirects=True, timeout=30)
    response = browser.get(link)
    assert response.status_code == 200, response.text[:500]
    return browser, int(re.fullmatch(rf"http://127\.0\.0\.1:{port}/sessions/(\d+)/", str(response.url)).group(1))


def test_inspect_registers_a_relative_command_and_lands_on_a_live_session_of_it(tmp_path):
    folder = tmp_path / "my-server"
    folder.mkdir()
    shutil.copy(PEERS / "sdk_server.py", folder / "server.py")
    launcher = folder / "run"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} server.py stdio\n")
    launcher.chmod(0o755)
    env = app_env(PLAYGROUND_SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    proc, printed, port = inspect(folder, env, "--", "./run")
    try:
        assert "Registered the server 'run'" in printed and f"{folder}/run" in printed
        browser, session_id = land(LINK.search(printed).group(1), port)
        seen = asyncio.run(_catalogue(browser, port, session_id))
        assert 'id="catalogue"' in seen and "echo" in seen  # the relative `server.py` found from the folder
    finally:
        stop(proc)
    # Again, from the same folder: the same server, a new session.
    proc, printed, port = inspect(folder, env, "--port", str(port), "--", "./run")
    try:
        assert "Reusing the server 'run'" in printed
        _, second = land(LINK.search(printed).group(1), port)
        assert second == session_id + 1
    finally:
        stop(proc)
    out = subprocess.run(
        [
            *MANAGE,
            "shell",
            "-c",
            "from playground.registry.models import Server; "
            "print([(s.name, s.command, s.args, s.cwd) for s in Server.objects.all()])",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip().splitlines()[-1] == repr([("run", str(folder / "run"), [], str(folder))])


async def _catalogue(browser: httpx.Client, port: int, session_id: int) -> str:
    ws = await tab(browser, port, session_id)
    try:
        return await until(ws, 'id="catalogue"', "echo")
    finally:
        await ws.close()


def test_a_spent_link_or_a_page_sending_the_browser_to_arrive_starts_nothing(tmp_path):
    env = app_env(PLAYGROUND_SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    proc, printed, port = inspect(
        tmp_path, env, "--url", "http://127.0.0.1:9/mcp", "--transport", "http", "--header", "X-Api-Key: k"
    )
    try:
        assert "Registered the server 'http://127.0.0.1:9/mcp' (Streamable HTTP http://127.0.0.1:9/mcp)" in printed
        link = LINK.search(printed).group(1)
        browser, session_id = land(link, port)
        # Sent to /arrive/ again (by another page, or a reload): no second session.
        again = browser.get(f"http://127.0.0.1:{port}/arrive/")
        assert str(again.url) == f"http://127.0.0.1:{port}/" and f"/sessions/{session_id + 1}/" not in again.text
        assert httpx.get(link, timeout=30).status_code == 403  # spent
    finally:
        stop(proc)


def test_usage_errors_say_what_to_give(tmp_path):
    env = app_env(PLAYGROUND_SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    for argv, words in (
        (["inspect"], "give either --url URL or -- COMMAND"),
        (["inspect", "--url", "http://x/mcp", "--", "node"], "give either --url URL or -- COMMAND"),
        (["inspect", "--header", "Bad Name: v", "--url", "http://127.0.0.1:9/mcp"], "Bad Name"),
    ):
        done = subprocess.run([*MANAGE, *argv], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode != 0 and words in done.stderr, done.stderr


def test_make_inspect_does_the_same(tmp_path):
    """`make inspect CMD=…`, as from a fresh clone (its setup step is a no-op once the venv is there)."""
    env = app_env(PLAYGROUND_SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    env.pop("MAKEFLAGS", None)
    proc = subprocess.Popen(
        ["make", "-s", "inspect", f"CMD={sys.executable} {PEERS / 'sdk_server.py'} stdio"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    printed = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            printed.append(line)
            if match := LINK.match(line.rstrip("\n")):
                wait_port(int(match.group(2)), proc, timeout=30)
                browser, session_id = land(match.group(1), int(match.group(2)))
                seen = asyncio.run(_catalogue(browser, int(match.group(2)), session_id))
                assert "echo" in seen
                break
        else:
            raise AssertionError("make inspect printed no link:\n" + "".join(printed))
        assert "Registered the server 'python" in "".join(printed)
    finally:
        stop(proc)
