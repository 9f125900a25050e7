"""Fragments for the session page (the "Authorize" card) and the Authorization view's rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from django.template.loader import render_to_string

from playground.mcp.auth.jwt import decode_unverified
from playground.mcp.auth.metadata import resource_matches

from .page import session_of_state


def card_id(state: str) -> str:
    """The "Authorize" card's element id for one authorization request."""
    return "oauth-" + "".join(c if c.isalnum() else "-" for c in state)


def authorize_card(pending: dict[str, Any]) -> str:
    """The card that sends the person to the authorization server (a `<section>`)."""
    url = str(pending.get("url") or "")
    safe = urlsplit(url).scheme in ("http", "https")  # the endpoint came from the server's metadata
    return render_to_string(
        "oauth/_authorize_card.html",
        {
            "p": pending,
            "card_id": card_id(str(pending.get("state", ""))),
            "url": url if safe else "",
            "session_id": session_of_state(str(pending.get("state", ""))) or 0,
            "as_host": urlsplit(url).netloc,
            "redirect_host": urlsplit(str(pending.get("redirect_uri") or "")).netloc,
        },
    )


def step_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Transcript notes of the flow as the Authorization view lists them."""
    out = []
    for row in rows:
        data = row.get("data") or {}
        if row.get("kind") == "auth":
            params = data.get("params")
            out.append(
                {
                    "seq": row["seq"],
                    "t_ms": f"{row['t'] * 1000:.0f}",
                    "type": "step",
                    "step": data.get("step", ""),
                    "status": data.get("status", ""),
                    "text": row.get("text", ""),
                    "expected": data.get("expected", ""),
                    "url": data.get("url", ""),
                    # The authorization request's parameters, shown as a table (the issue asks for them).
                    "params": [(str(k), str(v)) for k, v in params.items()] if isinstance(params, dict) else [],
                    "details": json.dumps(
                        {k: v for k, v in data.items() if k not in ("step", "status", "expected", "url", "params")},
                        indent=1,
                        ensure_ascii=False,
                    ),
                }
            )
        elif data.get("auth_step"):
            http = row.get("http") or {}
            out.append(
                {
                    "seq": row["seq"],
                    "t_ms": f"{row['t'] * 1000:.0f}",
                    "type": "http",
                    "step": data["auth_step"],
                    "text": row.get("text", ""),
                    "http": http,
                    "status_code": http.get("status"),
                    "request_body": data.get("request_body", ""),
                    "response_body": data.get("response_body", ""),
                    "error": data.get("error", ""),
                }
            )
    return out


SUCCESS = {("token", "ok"), ("refresh", "ok"), ("retry", "ok"), ("stored-token", "info")}


def failure(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The step the flow stopped at, unless a token was obtained (or a request got through) after it."""
    stopped = None
    for s in steps:
        if s["type"] != "step":
            continue
        if s["status"] in ("failed", "refused"):
            stopped = s
        elif (s["step"], s["status"]) in SUCCESS:
            stopped = None
    return stopped


def token_view(record: dict[str, Any], server_url: str = "") -> dict[str, Any]:
    """What the page shows about a stored record: never a token itself; whether its token would
    be sent to the server as it is now (`server_url`)."""
    tokens = record.get("tokens") or {}
    client = record.get("client") or {}
    expires_at = tokens.get("expires_at")
    view: dict[str, Any] = {
        "issuer": record.get("issuer", ""),
        "resource": record.get("resource", ""),
        "client_id": client.get("client_id", ""),
        "client_source": client.get("source", ""),
        "auth_method": client.get("auth_method", ""),
        "has_token": bool(tokens.get("access_token")),
        "token_type": tokens.get("token_type", ""),
        "scope": tokens.get("scope", ""),
        "has_refresh": bool(tokens.get("refresh_token")),
        "expires": datetime.fromtimestamp(expires_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if isinstance(expires_at, (int, float))
        else "",
        "expired": isinstance(expires_at, (int, float)) and expires_at <= datetime.now(UTC).timestamp(),
        "not_sent_to": server_url
        if server_url
        and tokens.get("access_token")
        and not (record.get("resource") and resource_matches(str(record["resource"]), server_url))
        else "",
    }
    jwt = decode_unverified(tokens.get("access_token") or "")
    if jwt is not None:
        view["jwt_header"] = json.dumps(jwt["header"], indent=1, ensure_ascii=False)
        view["jwt_claims"] = json.dumps(jwt["claims"], indent=1, ensure_ascii=False)
    return view
