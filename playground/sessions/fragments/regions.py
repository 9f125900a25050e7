"""The core regions of the session page as fragments: the state strip, the catalogue, the forms'
notices and errors; and `sendable`, what every fragment passes on its way to a tab. The Result
and a call in flight are result.py's, transcript lines lines.py's; features render their own.

Everything a server sent is untrusted: it only ever reaches HTML through Django's
autoescaping templates, or `html.esc` where a fragment is built in Python (no `|safe` on
server data anywhere). Every fragment is an out-of-band swap made by `html.oob`.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.template.loader import render_to_string

from playground.transcripts.storable import without_surrogates

from ..protocol import Catalogue, SessionState
from .html import oob

log = logging.getLogger(__name__)

# daphne closes the page's socket rather than send a websocket message over 1 MiB
# (`websocket_max_message_size`): no fragment may be larger, whatever a server sent.
WS_MESSAGE_LIMIT = 1024 * 1024
# Characters of a server-controlled text in the state strip (instructions, server name).
STATE_TEXT_LIMIT = 16 * 1024


def state(state: SessionState) -> str:
    """The state strip. Texts a server chose (instructions, name, version) are cut to
    STATE_TEXT_LIMIT: the strip carries the session's status and must always reach the page."""
    return oob("session-state", "outerHTML", render_to_string("sessions/_state.html", {"state": capped_state(state)}))


def capped_state(state: SessionState) -> dict[str, Any]:
    def cut(text: Any) -> Any:
        if isinstance(text, str) and len(text) > STATE_TEXT_LIMIT:
            return f"{text[:STATE_TEXT_LIMIT]}… ({len(text)} characters; the transcript has all of it)"
        return text

    info = state.get("server_info")
    return {
        **state,
        "instructions": cut(state.get("instructions")),
        "end_reason": cut(state.get("end_reason")),
        "server_info": {k: cut(v) for k, v in info.items()} if isinstance(info, dict) else info,
    }


def sendable(text: str, session_id: Any) -> str:
    """A fragment as a tab's socket can carry it. daphne closes the socket (and then the same
    one again on every reconnect) rather than send text it cannot encode (a server's JSON may
    hold unpaired surrogates: "\\ud800") or a message over its limit: the first is sent with
    U+FFFD in their place, the second becomes a notice."""
    if not text.isascii():
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            text = without_surrogates(text)
            size = len(text.encode("utf-8"))
    else:
        size = len(text)
    if size > WS_MESSAGE_LIMIT:
        log.warning("session %s: a %d-byte fragment was replaced by a notice", session_id, size)
        text = too_large(text, size)
    return text


def too_large(fragment: str, size: int) -> str:
    """What the page gets instead of a fragment over WS_MESSAGE_LIMIT: a notice naming the region."""
    target = re.search(r'\bid="([^"]{1,80})"', fragment[:300])
    where = f"#{target.group(1)}" if target else "the page"
    return notice(
        f"An update for {where} ({size} bytes) was too large to show here and was left out; "
        "the transcript export has everything the server sent."
    )


def catalogue(session_id: int, catalogue: Catalogue) -> str:
    return oob("catalogue", "outerHTML", catalogue_html(session_id, catalogue))


def catalogue_html(session_id: int, catalogue: Catalogue) -> str:
    """The catalogue column (the session page's first render, and every tab's updates). A name
    or URI holding an unpaired surrogate ("\\ud800" in a server's JSON) cannot be URL-encoded
    for its link: the catalogue is then rendered again with U+FFFD in their place, as the page
    shows them anyway (only then: the usual catalogue is not walked twice)."""
    try:
        return render_to_string("sessions/_catalogue.html", {"session_id": session_id, "catalogue": catalogue})
    except UnicodeEncodeError:
        return render_to_string(
            "sessions/_catalogue.html", {"session_id": session_id, "catalogue": without_surrogates(catalogue)}
        )


def notice(text: str) -> str:
    return oob("notices", "innerHTML", render_to_string("sessions/_notice.html", {"text": text}))


def form_errors(errors: list[dict[str, Any]]) -> str:
    return oob("form-errors", "innerHTML", render_to_string("sessions/_form_errors.html", {"errors": errors}))


def raw_errors(errors: list[str]) -> str:
    return oob("raw-errors", "innerHTML", render_to_string("sessions/_raw_errors.html", {"errors": errors}))
