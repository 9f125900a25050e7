"""The Model view's panel: made from the saved catalogue and transcript (playground/modelview
holds the renderings and the rules), for the owner or, redacted, for a share page, once per
catalogue (modelview/cache.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async

from playground.mcp.secrets import Redactor
from playground.modelview import results, rules, tokens
from playground.modelview.cache import Memo, digest, model_view_of
from playground.modelview.view import download, tools_of

from ..base import render

if TYPE_CHECKING:
    from playground.transcripts.models import Session

JSON_SHOWN = 150_000  # characters of one rendering's JSON on the page (the download has it all)
RESULT_SHOWN = 64 * 1024  # characters of one tool-result shape
REPLY_WINDOW = 5000  # events after a tools/call searched for its response (page loads)
RESULT_LOOKBACK = 20  # newest tools/call requests searched for one that has a result
SEVERITY_WORDS = {
    "error": "refused",
    "strict": "strict only",
    "warning": "changed",
    "info": "advice",
    "unchecked": "not checked",
}


def _counts(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"severity": s, "n": n, "word": SEVERITY_WORDS[s]}
        for s in rules.SEVERITIES
        if (n := sum(1 for f in findings if f["severity"] == s))
    ]


PANELS: Memo[str] = Memo()


def _errors(catalogue: Any) -> Any:
    return (catalogue or {}).get("errors", {}).get("tools") if isinstance(catalogue, dict) else None


def panel_context(catalogue: Any, download_url: str, key: tuple[str, int] | None = None) -> dict[str, Any]:
    """What model_view_body.html shows for a catalogue (`key`: the digest of its tools)."""
    tools = tools_of(catalogue)
    view = model_view_of(tools, key)
    targets = view["targets"]
    providers = []
    for found in view["findings"]:
        mine = [t for t in targets if t["provider"] == found["provider"]]
        first = mine[0]
        rows = []
        for i, name in enumerate(view["tools"]):
            findings = [{**f, "hits": list(zip(f["where"], f["details"]))} for f in found["tools"][i]]
            rows.append(
                {
                    "name": name,
                    "tokens": first["tokens"]["per_tool"][i],
                    "findings": findings,
                    "counts": _counts(findings),
                }
            )
        shown = []
        for target in mine:
            text = json.dumps(target["json"], indent=2, ensure_ascii=False)
            shown.append({**target, "text": text if len(text) <= JSON_SHOWN else "", "chars": len(text)})
        all_findings = [f for fs in found["tools"] for f in fs] + found["server"]
        providers.append(
            {
                **found,
                "targets": shown,
                "rows": rows,
                "summary": _counts(all_findings),
                "tokens": first["tokens"]["total"],
            }
        )
    chatbot = {
        **view["chatbot"],
        "chars": len(view["chatbot"]["text"]),
        "shown": len(view["chatbot"]["text"]) <= JSON_SHOWN,
    }
    return {
        "mv_tools": len(tools),
        "mv_providers": providers,
        "mv_chatbot": chatbot,
        "mv_token_rule": tokens.RULE,
        "mv_download": download_url,
        "mv_errors": _errors(catalogue),
    }


def body_html(catalogue: Any, download_url: str) -> str:
    """The panel, made once per catalogue and URL (playground/modelview/cache.py). Seconds for a
    catalogue of thousands of tools: callers run it off the event loop and off the database
    thread (views.py)."""
    tools = tools_of(catalogue)
    key = digest(tools)
    return PANELS.get(
        (key[0], str(_errors(catalogue)), download_url),
        key[1],
        lambda: render("sessions/features/model_view_body.html", panel_context(catalogue, download_url, key)),
    )


def download_json(catalogue: Any) -> str:
    """The Model view's download (the same computation as the panel's, kept)."""
    tools = tools_of(catalogue)
    return download(model_view_of(tools))


def result_context(result: dict[str, Any] | None, tool: str) -> dict[str, Any]:
    if result is None:
        return {"mv_result": None}
    shown = results.view(result, tool)
    for shape in shown["shapes"]:
        value = shape["value"]
        text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
        shape["text"] = text[:RESULT_SHOWN]
        shape["cut"] = len(text) > RESULT_SHOWN
    return {"mv_result": shown}


def result_html(result: dict[str, Any] | None, tool: str, refresh_url: str = "") -> str:
    return render(
        "sessions/features/model_view_result.html", {**result_context(result, tool), "refresh_url": refresh_url}
    )


async def last_tool_result(session: Session, redact: Redactor) -> tuple[dict[str, Any] | None, str]:
    """The session's last `tools/call` that has a result, from its saved events (page loads):
    one still running, timed out or answered with an error is passed over, among the newest
    RESULT_LOOKBACK calls. A share link may ask for this again and again, and a server may
    flood between a call and its answer: each lookup is a query of its own on the database
    thread (the recorder's saves go in between), responses only (notifications are passed over
    before their JSON is read), and the masking is done off it."""
    latest = ""
    requests = await sync_to_async(
        lambda: list(
            session.events.filter(method="tools/call", dir="send")
            .order_by("-seq")
            .values_list("seq", "data")[:RESULT_LOOKBACK]
        )
    )()
    for seq, data in requests:
        params = (data.get("message") or {}).get("params") if isinstance(data.get("message"), dict) else None
        name = str(params.get("name", "")) if isinstance(params, dict) else ""
        latest = latest or name
        reply = await sync_to_async(
            lambda: (
                session.events.filter(
                    seq__gt=seq,
                    seq__lte=seq + REPLY_WINDOW,
                    dir="recv",
                    method="",
                    data__reply_to=seq,
                )
                .values_list("data", flat=True)
                .first()
            )
        )()
        message = reply.get("message") if isinstance(reply, dict) else None
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict):
            return await sync_to_async(redact.obj, thread_sensitive=False)(result), redact.text(name)
    return None, redact.text(latest)
