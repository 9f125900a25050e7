"""The session templates' tags and filters."""

from __future__ import annotations

import pytest

from playground.sessions.templatetags.sessions_tags import safe_icon


@pytest.mark.django_db
def test_only_inline_raster_icons_are_shown():
    png = "data:image/png;base64,iVBORw0KGgo="
    assert safe_icon([{"src": png}]) == png
    assert safe_icon([{"src": "https://tracker.example/pixel.png"}]) == ""
    assert safe_icon([{"src": "data:image/svg+xml;base64,PHN2Zz4="}]) == ""
    assert safe_icon([{"src": "javascript:alert(1)"}, {"src": png}]) == png
