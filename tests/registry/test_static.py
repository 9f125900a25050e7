"""The vendored htmx is the version STACK-NOTES pins, with its websocket extension and licence."""
from __future__ import annotations

import re

from tests.conftest import ROOT

VENDOR = ROOT / "static" / "vendor" / "htmx"


def test_vendored_htmx_version():
    source = (VENDOR / "htmx.min.js").read_text()
    assert re.search(r'this\.version="([^"]+)"', source).group(1) == "4.0.1"


def test_ws_extension_and_licence_are_vendored():
    assert "hx-ws" in (VENDOR / "hx-ws.min.js").read_text()
    assert "BSD" in (VENDOR / "LICENSE").read_text() or "Zero-Clause" in (VENDOR / "LICENSE").read_text()
