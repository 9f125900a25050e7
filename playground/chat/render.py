"""The chat's fragments: what the page first shows (`item_html`, `exchange_html`) and what the
socket sends as it happens (htmx out-of-band swaps). A model's and a server's words are
untrusted: every one goes through an autoescaping template or `esc`."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from playground.mcp import jsontext
from playground.sessions.features.server_requests import describe_server_request
from playground.sessions.fragments.html import esc, oob

CHUNKS_SHOWN = 400


def card_html(card: dict[str, Any], shared: bool = False) -> str:
    shown = dict(card, shared=shared)
    if "result" in card:
        shown["result_json"] = jsontext.pretty(card["result"])
    return render_to_string("chat/_card.html", {"card": shown})


def item_html(item: dict[str, Any], shared: bool = False) -> str:
    """One saved item of the conversation (a message, a tool card, a notice)."""
    kind = item.get("kind")
    if kind == "card":
        return card_html(item, shared)
    if kind == "sampling":
        return render_to_string("chat/_sampling.html", {"r": item, "shared": shared})
    if kind == "elicitation":
        return elicitation_html(item, shared)
    if kind == "notice":
        level, text = esc(item.get("level", "info")), esc(item.get("text", ""))
        return mark_safe(f'<p class="chat-notice {level}" role="alert">{text}</p>')  # (escaped: esc)
    role = "user" if kind == "user" else "model"
    who = "You" if role == "user" else "Model"
    dom = f' id="reply-{esc(item["id"])}"' if item.get("id") else ""
    return mark_safe(  # (escaped: esc; a plain str would be escaped again by the page's template)
        f'<div class="chat-msg {role}"><span class="who">{who}</span>'
        f'<div class="text"{dom}>{esc(item.get("text", ""))}</div></div>'
    )


def elicitation_key(item: dict[str, Any]) -> str:
    """The key the card's answer form sends: the session's and the request's (two sessions of a
    chat may both wait on their "q1"; ids and form fields on the page stay distinct)."""
    return f"{item['session_id']}-{item['key']}"


def elicitation_html(item: dict[str, Any], shared: bool = False) -> str:
    """A server's elicitation request as the session page's card draws it (the same template and
    form from its requestedSchema), in a card of the chat that says whether it was answered."""
    params = item.get("params")
    if not isinstance(params, dict):  # (saved before the chat answered them: the message only)
        params = {"message": str(item.get("text", ""))}
    request: dict[str, Any] = {"key": elicitation_key(item), "method": "elicitation/create", "params": params}
    request["context"] = item.get("context")
    state = str(item.get("state") or "gone")
    answer = str(item.get("answer") or "")
    state_text = {
        "waiting": "waiting for your answer",
        "answered": f"answered ({answer})" if answer else "answered",
        "gone": "no longer waiting (answered elsewhere, or the call ended)",
    }.get(state, state)
    shown = {**item, "state": state, "state_text": state_text, "answerable": state == "waiting" and not shared}
    described = describe_server_request(request, form=shown["answerable"])
    return render_to_string("chat/_elicitation.html", {**described, "e": shown, "shared": shared})


def replace_elicitation(item: dict[str, Any]) -> str:
    return oob(f"elicitation-{elicitation_key(item)}", "outerHTML", elicitation_html(item))


def exchange_html(exchange: dict[str, Any], n: int) -> str:
    chunks = exchange.get("chunks") or []
    shown = {
        **exchange,
        "headers_json": jsontext.pretty(exchange.get("request_headers") or {}),
        "request_json": jsontext.pretty(exchange.get("request")),
        "response_json": jsontext.pretty(exchange.get("response")),
        "chunks_text": "\n".join(chunks[:CHUNKS_SHOWN]),
    }
    return render_to_string("chat/_exchange.html", {"x": shown, "n": n})


def append_item(item: dict[str, Any]) -> str:
    return oob("chat-log", "beforeend", item_html(item))


def replace_card(card: dict[str, Any]) -> str:
    return oob(f"card-{card['id']}", "outerHTML", card_html(card))


def text_piece(reply_id: str, piece: str) -> str:
    return oob(f"reply-{reply_id}", "beforeend", esc(piece))


def progress(card_id: str, params: dict[str, Any]) -> str:
    total = f" / {esc(params['total'])}" if params.get("total") is not None else ""
    message = f" {esc(params['message'])}" if params.get("message") else ""
    return oob(f"card-{card_id}-progress", "innerHTML", f"progress {esc(params.get('progress', ''))}{total}{message}")


def append_exchange(exchange: dict[str, Any], n: int) -> str:
    return oob("model-lane", "beforeend", exchange_html(exchange, n))


def status(text: str, running: bool) -> str:
    stop = '<button type="submit" form="stop-form" class="small">Stop</button>' if running else ""
    return oob("chat-status", "innerHTML", f"{esc(text)} {stop}")


def sessions_list(sessions: list[tuple[int, str]]) -> str:
    links = "".join(
        f'<li><a href="{reverse("sessions:detail", args=[s])}" target="_blank" rel="noopener">{esc(n)} (session {s})</a></li>'
        for s, n in sessions
    )
    return oob("chat-sessions", "innerHTML", links)


def replace_sampling(item: dict[str, Any]) -> str:
    return oob(f"sampling-{item['session_id']}-{item['key']}", "outerHTML", item_html(item))
