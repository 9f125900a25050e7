"""Turn results and server requests into what templates show, checking what can be checked.

Images and audio are shown from data URLs only for known media types (a server chooses the
MIME type; `image/svg+xml` can carry script, so it is never rendered inline).
"""
from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import urlsplit

from playground.mcp import jsontext
from playground.schemaforms import avalidate_arguments


IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})
AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm",
                         "audio/flac", "audio/aac", "audio/mp4"})
MAX_INLINE_MEDIA = 20 * 1024 * 1024
TEXT_PREVIEW_CHARS = 100_000
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript", "application/yaml",
              "application/x-yaml", "application/toml")
TERMINAL_TASK_STATES = frozenset({"completed", "failed", "cancelled"})
URL_ELICITATION_REQUIRED = -32042
RELATED_TASK = "io.modelcontextprotocol/related-task"
MAX_TEXT = 500_000        # characters of one text block shown on the page; the transcript has the frame
ERROR_CHARS = 4000        # characters of an error message shown above the raw JSON


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
        return {"kind": "json", "json": jsontext.pretty(item)}
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
        return blob_item(str(res.get("uri", "")), res_mime, res.get("blob"))
    return {"kind": "json", "json": jsontext.pretty(item)}


def blob_item(uri: str, mime: str, blob: Any) -> dict[str, Any]:
    """A binary resource: previewed by its MIME type where that is safe, always downloadable
    (as application/octet-stream, so the browser never renders it)."""
    valid = _is_base64(blob)
    size = len(blob) * 3 // 4 if isinstance(blob, str) else 0
    item: dict[str, Any] = {"kind": "resource_blob", "uri": uri, "mime": mime, "size": size, "preview": "",
                            "src": f"data:application/octet-stream;base64,{blob}" if valid else "",
                            "filename": (uri.rstrip("/").rsplit("/", 1)[-1] or "resource")[:100] or "resource"}
    low = mime.lower().split(";", 1)[0].strip()
    if valid and low in IMAGE_TYPES:
        item.update(preview="image", media=f"data:{low};base64,{blob}")
    elif valid and low in AUDIO_TYPES:
        item.update(preview="audio", media=f"data:{low};base64,{blob}")
    elif valid and low.startswith(TEXT_TYPES):
        text = base64.b64decode(blob).decode("utf-8", errors="replace")
        item.update(preview="text", text=text[:TEXT_PREVIEW_CHARS], cut=len(text) > TEXT_PREVIEW_CHARS)
    elif not valid:
        item["why"] = "the blob is not valid base64"
    return item


def describe_task(task: Any) -> dict[str, Any] | None:
    """A task (CreateTaskResult's `task`, or a tasks/get result) with what can be done next."""
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        return None
    status = str(task.get("status") or "")
    return {"id": task["taskId"], "status": status, "message": str(task.get("statusMessage") or ""),
            "ttl": task.get("ttl"), "poll": task.get("pollInterval"), "created": str(task.get("createdAt") or ""),
            "terminal": status in TERMINAL_TASK_STATES}


def _error(error: Any) -> Any:
    """The error as shown: a server's message is cut at ERROR_CHARS (the raw JSON has more)."""
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str) and len(message) > ERROR_CHARS:
        return {**error, "message": f"{message[:ERROR_CHARS]}… ({len(message)} characters in all)"}
    return error


def output_schema(outcome: dict[str, Any], catalogue: dict[str, Any]) -> dict[str, Any] | None:
    """The outputSchema a tool call's structuredContent is checked against, if it has both."""
    result = outcome.get("result")
    if outcome.get("command") != "call_tool" or not isinstance(result, dict) or "structuredContent" not in result:
        return None
    tool = next((t for t in catalogue.get("tools", []) if t.get("name") == outcome.get("name")), None)
    schema = (tool or {}).get("outputSchema")
    return schema if isinstance(schema, dict) else None


async def check_structured(outcome: dict[str, Any], catalogue: dict[str, Any]) -> None:
    """Check the structuredContent against the tool's outputSchema, once, where the call ends
    (`structured_errors` on the outcome), so that no tab validates a server's schema again."""
    schema = output_schema(outcome, catalogue)
    if schema is not None:
        outcome["structured_errors"] = await avalidate_arguments(schema, outcome["result"]["structuredContent"])


def describe_result(outcome: dict[str, Any]) -> dict[str, Any]:
    result = outcome.get("result")
    described: dict[str, Any] = {
        "error": _error(outcome.get("error")),
        "raw": jsontext.pretty(result if "error" not in outcome else outcome["error"])[:500_000],
        "items": [], "is_error": False, "structured": None, "structured_errors": [], "has_output_schema": False,
        "messages": [], "contents": [], "task": None, "rounds": outcome.get("rounds") or [],
        "url_elicitations": url_elicitations(outcome.get("error")), "description": "",
    }
    if not isinstance(result, dict):
        return described
    command = outcome.get("command")
    if command == "call_tool" and isinstance(result.get("task"), dict):
        described["task"] = describe_task(result["task"])
    elif command in ("task_get", "task_cancel"):
        described["task"] = describe_task(result)
    if command in ("call_tool", "task_result"):
        described["is_error"] = result.get("isError") is True
        described["items"] = [content_item(c) for c in result.get("content") or [] if True]
        if "structuredContent" in result:
            described["structured"] = jsontext.pretty(result["structuredContent"])
            if "structured_errors" in outcome:
                described["has_output_schema"] = True
                described["structured_errors"] = outcome["structured_errors"]
    elif command == "read_resource":
        for entry in result.get("contents") or []:
            if isinstance(entry, dict):
                described["contents"].append(content_item({"type": "resource", "resource": entry}))
    elif command == "get_prompt":
        described["description"] = str(result.get("description") or "")
        for message in result.get("messages") or []:
            if isinstance(message, dict):
                described["messages"].append({"role": str(message.get("role", "")),
                                              "item": content_item(message.get("content"))})
    return described


def url_parts(url: str) -> dict[str, Any]:
    """A URL a server wants the person to open, cut so the page can show all of it with its host
    stressed (against look-alike subdomains). `openable`: http(s) with a host, the only URLs the
    page will open, and only when the person says so."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return {"before": "", "host": "", "after": url, "openable": False}
    start = url.find(parts.netloc) if parts.netloc else -1
    if not host or start < 0 or parts.scheme.lower() not in ("http", "https"):
        return {"before": "", "host": "", "after": url, "openable": False}
    return {"before": url[:start], "host": url[start:start + len(parts.netloc)], "after": url[start + len(parts.netloc):],
            "openable": True}


def url_elicitations(error: Any) -> list[dict[str, Any]]:
    """The URL elicitations a -32042 error (URLElicitationRequiredError) asks for, to show on the page."""
    if not isinstance(error, dict) or error.get("code") != URL_ELICITATION_REQUIRED:
        return []
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    out = []
    for item in data.get("elicitations") or []:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            out.append({"url": item["url"], "parts": url_parts(item["url"]), "message": str(item.get("message") or ""),
                        "id": str(item.get("elicitationId") or "")})
    return out[:20]
