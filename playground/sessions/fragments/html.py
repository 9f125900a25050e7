"""HTML for the live page, in one place: escaping and the out-of-band fragment.

Everything a server sent is untrusted. It reaches HTML through Django's autoescaping
templates, or through `esc` where a fragment is built in Python for speed (a transcript line,
the Result); nothing a server sent is ever marked safe unescaped.

Every fragment the websocket carries is an htmx out-of-band swap (the connect element has
`hx-swap="none"`: bare HTML would replace its content), made by `oob`.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from html import escape as _html_escape
from typing import Any, Literal

from django.utils.safestring import SafeString

Swap = Literal["outerHTML", "innerHTML", "beforeend", "afterbegin", "delete"]


def esc(value: Any) -> str:
    """Escape a value for HTML text and attributes (quotes too), as Django's autoescaping does."""
    return _html_escape(value if isinstance(value, str) else str(value), quote=True)


def oob(target: str, swap: Swap, html: str = "") -> SafeString:
    """`html` swapped into the element whose id is `target` (innerHTML, beforeend, afterbegin),
    in its place (outerHTML: `html` is the whole new element, usually rendered by the same
    template as the page's first render), or the element removed (delete)."""
    if swap == "outerHTML":
        # strip: the wrapper's content replaces the target, not the wrapper itself.
        return SafeString(f'<div id="{esc(target)}" hx-swap-oob="outerHTML strip:true">{html}</div>')
    return SafeString(f'<div id="{esc(target)}" hx-swap-oob="{swap}">{html}</div>')


def latency_ms(value: Any) -> str:
    """A latency as `floatformat:1` shows it (half up: 1.25 -> 1.3)."""
    try:
        return str(Decimal(repr(float(value))).quantize(Decimal("0.1"), ROUND_HALF_UP))
    except (TypeError, ValueError, ArithmeticError):
        return ""
