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


def test_static_files_are_served_with_debug_off(client, settings):
    """`make run` serves with daphne and DEBUG off: the page would be unstyled without this route."""
    settings.DEBUG = False
    response = client.get("/static/vendor/htmx/htmx.min.js")
    assert response.status_code == 200
    assert b'this.version="4.0.1"' in b"".join(response.streaming_content)
    assert client.get("/static/playground.css").status_code == 200
    assert client.get("/static/nope.css").status_code == 404
