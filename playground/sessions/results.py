"""Turn results and server requests into what templates show, checking what can be checked.

Images and audio are shown from data URLs only for known media types (a server chooses the
MIME type; `image/svg+xml` can carry script, so it is never rendered inline).
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from playground.schemaforms import render_form, validate_arguments

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})
AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm",
                         "audio/flac", "audio/aac", "audio/mp4"})
MAX_INLINE_MEDIA = 20 * 1024 * 1024
MAX_TEXT = 500_000        # characters of one text block shown on the page; the transcript has the frame


def _capped(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… cut here: {len(text)} characters in all (the export has the whole frame)"


def _is_base64(data: Any) -> bool:
    if not isinstance(data, str) or len(data) > MAX_INLINE_MEDIA:
        return False
    try:
        base64.b64decode(data, validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


def content_item(item: Any) -> dict[str, Any]:
    """One content block, classified for the template; unknown shapes are shown as JSON."""
    if not isinstance(item, dict):
        return {"kind": "json", "json": json.dumps(item, indent=2, ensure_ascii=False)}
    kind = item.get("type")
    mime = str(item.get("mimeType") or "").lower()
    if kind == "text":
        return {"kind": "text", "text": _capped(str(item.get("text", "")))}
    if kind == "image":
        if mime in IMAGE_TYPES and _is_base64(item.get("data")):
            return {"kind": "image", "src": f"data:{mime};base64,{item['data']}", "mime": mime}
        return {"kind": "blocked", "mime": mime, "why": "image not shown: unsupported or unsafe type, or bad data"}
    if kind == "audio":
        if mime in AUDIO_TYPES and _is_base64(item.get("data")):
            return {"kind": "audio", "src": f"data:{mime};base64,{item['data']}", "mime": mime}
        return {"kind": "blocked", "mime": mime, "why": "audio not playable: unsupported type or bad data"}
    if kind == "resource_link":
        return {"kind": "resource_link", "uri": str(item.get("uri", "")), "name": str(item.get("name", "")),
                "mime": mime, "description": str(item.get("description") or "")}
    if kind == "resource":
        res = item.get("resource") if isinstance(item.get("resource"), dict) else {}
        res_mime = str(res.get("mimeType") or "")
        if "text" in res:
            return {"kind": "resource_text", "uri": str(res.get("uri", "")), "mime": res_mime,
                    "text": _capped(str(res.get("text", "")))}
        blob = res.get("blob")
        size = len(blob) * 3 // 4 if isinstance(blob, str) else 0
        return {"kind": "resource_blob", "uri": str(res.get("uri", "")), "mime": res_mime, "size": size,
                "src": f"data:application/octet-stream;base64,{blob}" if _is_base64(blob) else ""}
    return {"kind": "json", "json": json.dumps(item, indent=2, ensure_ascii=False)}


def describe_result(outcome: dict[str, Any], catalogue: dict[str, Any]) -> dict[str, Any]:
    result = outcome.get("result")
    described: dict[str, Any] = {
        "error": outcome.get("error"),
        "raw": json.dumps(result if "error" not in outcome else outcome["error"], indent=2, ensure_ascii=False)[:500_000],
        "items": [], "is_error": False, "structured": None, "structured_errors": [], "has_output_schema": False,
        "messages": [], "contents": [],
    }
    if not isinstance(result, dict):
        return described
    command = outcome.get("command")
    if command == "call_tool":
        described["is_error"] = result.get("isError") is True
        described["items"] = [content_item(c) for c in result.get("content") or [] if True]
        if "structuredContent" in result:
            described["structured"] = json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)
            tool = next((t for t in catalogue.get("tools", []) if t.get("name") == outcome.get("name")), None)
            schema = (tool or {}).get("outputSchema")
            if isinstance(schema, dict):
                described["has_output_schema"] = True
                described["structured_errors"] = validate_arguments(schema, result["structuredContent"])
    elif command == "read_resource":
        for entry in result.get("contents") or []:
            if isinstance(entry, dict):
                described["contents"].append(content_item({"type": "resource", "resource": entry}))
    elif command == "get_prompt":
        for message in result.get("messages") or []:
            if isinstance(message, dict):
                described["messages"].append({"role": str(message.get("role", "")),
                                              "item": content_item(message.get("content"))})
    return described


def describe_server_request(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    method = message.get("method")
    out: dict[str, Any] = {"key": message["key"], "method": method, "params": params,
                           "params_json": json.dumps(params, indent=2, ensure_ascii=False)}
    if method == "elicitation/create":
        out["mode"] = params.get("mode") or ("url" if "url" in params else "form")
        out["message"] = str(params.get("message", ""))
        if out["mode"] == "url":
            out["url"] = str(params.get("url", ""))
        else:
            schema = params.get("requestedSchema") if isinstance(params.get("requestedSchema"), dict) else {}
            out["form_html"] = render_form(schema, prefix="content")
            out["schema_json"] = json.dumps(schema)
    elif method == "sampling/createMessage":
        out["messages"] = [{"role": str(m.get("role", "")), "item": content_item(m.get("content"))}
                           for m in params.get("messages") or [] if isinstance(m, dict)]
        out["system_prompt"] = str(params.get("systemPrompt") or "")
        out["max_tokens"] = params.get("maxTokens")
        out["preferences"] = json.dumps(params.get("modelPreferences"), ensure_ascii=False) \
            if params.get("modelPreferences") else ""
    return out
