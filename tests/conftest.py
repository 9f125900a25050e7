"""Shared fixtures: paths to the peers the suite tests against; the `services` mark (tests/services.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests import services

ROOT = Path(__file__).resolve().parent.parent
NPM_BIN = ROOT / "tools" / "npm" / "node_modules" / ".bin"
PEERS = Path(__file__).resolve().parent / "peers"


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
