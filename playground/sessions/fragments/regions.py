"""The core fragments of the session page: state strip, catalogue, calls in flight, the Result,
notices and form errors. Features render their own (features/); transcript lines are lines.py's.

Everything a server sent is untrusted: it only ever reaches HTML through Django's
autoescaping templates, or `html.esc` where a fragment is built in Python (no `|safe` on
server data anywhere). Every fragment is an out-of-band swap made by `html.oob`.
"""
from __future__ import annotations

import logging
import re
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from playground.transcripts.storable import without_surrogates

from ..features import BY_NAME
from .html import oob
from ..protocol import Catalogue
from .result_html import piece_html, result_html
from .result import describe_result

log = logging.getLogger(__name__)

# daphne closes the page's socket rather than send a websocket message over 1 MiB
# (`websocket_max_message_size`): no fragment may be larger, whatever a server sent.
WS_MESSAGE_LIMIT = 1024 * 1024
# Characters of a server-controlled text in the state strip (instructions, server name).
STATE_TEXT_LIMIT = 16 * 1024


def state(state: dict[str, Any]) -> str:
    """The state strip. Texts a server chose (instructions, name, version) are cut to
    STATE_TEXT_LIMIT: the strip carries the session's status and must always reach the page."""
    return oob("session-state", "outerHTML", render_to_string("sessions/_state.html", {"state": capped_state(state)}))


def capped_state(state: dict[str, Any]) -> dict[str, Any]:
    def cut(text: Any) -> Any:
        if isinstance(text, str) and len(text) > STATE_TEXT_LIMIT:
            return f"{text[:STATE_TEXT_LIMIT]}… ({len(text)} characters; the transcript has all of it)"
        return text
    info = state.get("server_info")
    return {**state, "instructions": cut(state.get("instructions")), "end_reason": cut(state.get("end_reason")),
            "server_info": {k: cut(v) for k, v in info.items()} if isinstance(info, dict) else info}


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


def page(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    """A page showing what a server sent (the session page, a share page), as Django's `render`
    makes it, but an unpaired surrogate in it ("\\ud800" in the server's JSON: a transcript
    line, a name) becomes U+FFFD rather than a 500 (the text is walked again only then)."""
    text = render_to_string(template, context, request)
    try:
        content = text.encode("utf-8")
    except UnicodeEncodeError:
        content = without_surrogates(text).encode("utf-8")
    return HttpResponse(content)


class FragmentSocket(AsyncWebsocketConsumer):
    """A tab's socket (a session's, a share's): every fragment made sendable on its way out.
    It remembers the cards it has shown (calls in flight, server requests, a replay's rows):
    the worker's snapshot and a live broadcast can both announce one; a tab shows it once
    (the features' `TabContext.first_time`)."""

    session_id: int
    catalogue: Catalogue = {}          # the server's lists as this tab last got them (a share's: none)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cards: set[str] = set()

    def first_time(self, card: str) -> bool:
        if card in self._cards:
            return False
        self._cards.add(card)
        return True

    def forget(self, card: str) -> None:
        self._cards.discard(card)

    async def session_feature(self, message: dict[str, Any]) -> None:
        """A feature's event (a share's: made for shares, masked): its fragments for this tab."""
        feature = BY_NAME.get(message.get("feature", ""))
        if feature is None:          # (a worker of a newer deployment)
            return
        for html in feature.fragments(message["event"], self):
            await self.send(text_data=html)

    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None:
        if text_data is not None:
            text_data = sendable(text_data, getattr(self, "session_id", None))
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)


def too_large(fragment: str, size: int) -> str:
    """What the page gets instead of a fragment over WS_MESSAGE_LIMIT: a notice naming the region."""
    target = re.search(r'\bid="([^"]{1,80})"', fragment[:300])
    where = f"#{target.group(1)}" if target else "the page"
    return notice(f"An update for {where} ({size} bytes) was too large to show here and was left out; "
                  "the transcript export has everything the server sent.")


def catalogue(session_id: int, catalogue: dict[str, Any]) -> str:
    return oob("catalogue", "outerHTML", catalogue_html(session_id, catalogue))


def catalogue_html(session_id: int, catalogue: dict[str, Any]) -> str:
    """The catalogue column (the session page's first render, and every tab's updates). A name
    or URI holding an unpaired surrogate ("\\ud800" in a server's JSON) cannot be URL-encoded
    for its link: the catalogue is then rendered again with U+FFFD in their place, as the page
    shows them anyway (only then: the usual catalogue is not walked twice)."""
    try:
        return render_to_string("sessions/_catalogue.html", {"session_id": session_id, "catalogue": catalogue})
    except UnicodeEncodeError:
        return render_to_string("sessions/_catalogue.html", {"session_id": session_id,
                                                             "catalogue": without_surrogates(catalogue)})


def call_started(message: dict[str, Any]) -> str:
    started = message.get("started")
    call = {**message, "started": int(started * 1000) if isinstance(started, (int, float)) else ""}
    return oob("inflight", "beforeend", render_to_string("sessions/_call_started.html", {"call": call}))


def progress(call_id: str, params: dict[str, Any]) -> str:
    total = params.get("total")
    value = params.get("progress")
    percent = None
    if isinstance(total, (int, float)) and total > 0 and isinstance(value, (int, float)):
        percent = max(0, min(100, round(100 * value / total)))
    return oob(f"progress-{call_id}", "outerHTML", render_to_string("sessions/_progress.html", {
        "call_id": call_id, "params": params, "percent": percent, "value": value, "total": total}))


# daphne refuses to send a websocket message over 1 MiB (and closes the socket). A character
# takes at most 6 bytes once escaped (" -> &quot;), so the Result region carries at most
# RESULT_FIRST characters of its long texts; the rest of each follows in pieces of RESULT_PIECE,
# appended by fragments of their own into a closed <details> after the first part: the page
# lays a 10 MB text out only if the person opens it (appending to a shown <pre> piece by piece
# took Chromium most of a minute).
RESULT_FIRST = 96 * 1024
RESULT_PIECE = 128 * 1024
# Inline media (data: URLs of images, audio, blob downloads) one Result fragment may carry.
MEDIA_BUDGET = 512 * 1024


def _fit_media(items: list[dict[str, Any]]) -> None:
    """Keep inline media within MEDIA_BUDGET; what does not fit says so (the export has it)."""
    room = MEDIA_BUDGET
    for item in items:
        for key in ("media", "src"):
            value = item.get(key)
            if not isinstance(value, str) or not value.startswith("data:"):
                continue
            if len(value) <= room:
                room -= len(value)
                continue
            item[key] = ""
            if key == "media":
                item["preview"] = ""
            item["why"] = (f"{len(value) * 3 // 4} bytes: too large to show in the page; "
                           "the session's export has the whole frame")
            if item.get("kind") in ("image", "audio"):
                item["kind"] = "blocked"


def result_frames(outcome: dict[str, Any]) -> list[str]:
    """The Result region, then the appends that complete its long texts."""
    described = describe_result(outcome)
    described["has_structured"] = bool(described.get("structured"))   # even if all of it comes in pieces
    fields: list[tuple[dict[str, Any], str, str]] = []       # (holder, key, dom id of the rest)
    items = described["items"] + described["contents"] + [m["item"] for m in described["messages"]]
    _fit_media(items)
    for index, item in enumerate(items):
        if item.get("kind") in ("text", "resource_text"):
            fields.append((item, "text", f"result-text-{index}-more"))
    fields += [(described, "structured", "result-structured-more"), (described, "raw", "result-raw-more")]
    room = RESULT_FIRST
    rest: list[tuple[str, str]] = []
    for holder, key, dom_id in fields:
        text = holder.get(key) or ""
        if len(text) > room:
            holder[key], tail = text[:room], text[room:]
            holder[f"{key}_more"] = {"id": dom_id, "chars": len(tail)}
            rest += [(dom_id, tail[i:i + RESULT_PIECE]) for i in range(0, len(tail), RESULT_PIECE)]
        room -= len(holder[key] or "")
    first = result_html(outcome, described)
    size = len(first.encode("utf-8", "surrogatepass"))
    if size > WS_MESSAGE_LIMIT:
        # Many big fields at once (a server's descriptions, names, URIs): show that there was a
        # result, and end the call's in-flight card, rather than lose the whole fragment.
        first = result_html(outcome, {"error": described["error"], "too_large": size})
        rest = []
    return [first] + [piece_html(dom_id, piece) for dom_id, piece in rest]


def result(outcome: dict[str, Any]) -> str:
    """The whole Result region in one fragment (for small results and tests)."""
    return "".join(result_frames(outcome))


def notice(text: str) -> str:
    return oob("notices", "innerHTML", render_to_string("sessions/_notice.html", {"text": text}))


def form_errors(errors: list[dict[str, Any]]) -> str:
    return oob("form-errors", "innerHTML", render_to_string("sessions/_form_errors.html", {"errors": errors}))


def raw_errors(errors: list[str]) -> str:
    return oob("raw-errors", "innerHTML", render_to_string("sessions/_raw_errors.html", {"errors": errors}))
