"""Shared fixtures: paths to the peers the suite tests against; the `services` mark (tests/services.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests import services

ROOT = Path(__file__).resolve().parent.parent
NPM_BIN = ROOT / "tools" / "npm" / "node_modules" / ".bin"
PEERS = Path(__file__).resolve().parent / "peers"


@pytest.fixture(autouse=True)
def fast_password_hasher(request: pytest.FixtureRequest) -> None:
    """Passwords hashed with MD5 in tests: PBKDF2 costs ~0.5 s a user on these machines, and
    hundreds of tests make one. (Not in tests/browser: its daphne process reads the real
    settings, and its one user's hash is made once.)"""
    if "browser" not in request.node.path.parts:
        request.getfixturevalue("settings").PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "services(*names): needs PostgreSQL/Redis: skips without them, "
                                       "or fails with PLAYGROUND_REQUIRE_SERVICES=1 (tests/services.py)")


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
