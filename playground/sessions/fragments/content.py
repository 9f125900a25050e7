"""Content blocks (a result's text, images, audio, resources; a sampling request's messages),
classified then built in Python, every server value escaped (`_e`); only the markup written here
is unescaped. The Result (result.py) and the server-request cards show them the same way.

Images and audio are shown from data URLs only for known media types (a server chooses the
MIME type; `image/svg+xml` can carry script, so it is never rendered inline).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import quote, urlsplit

from django.utils.safestring import SafeString

from playground.mcp import jsontext
from playground.schema import json_type
from playground.transcripts.storable import without_surrogates

from .html import esc as _e

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})
AUDIO_TYPES = frozenset(
    {
        "audio/wav",
        "audio/x-wav",
        "audio/mpeg",
        "audio/mp3",
        "audio/ogg",
        "audio/webm",
        "audio/flac",
        "audio/aac",
        "audio/mp4",
    }
)
MAX_INLINE_MEDIA = 20 * 1024 * 1024
TEXT_PREVIEW_CHARS = 100_000
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/javascript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
)
MAX_TEXT = 500_000  # characters of one text block shown on the page; the transcript has the frame


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


# What each content block type must hold, as the protocol's schema has it (ContentBlock:
# TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource): a block missing one
# used to be drawn empty, hiding the server's mistake where the person looks for the result.
REQUIRED = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
    "resource": ("resource",),
}


def problems(item: Any) -> list[str]:
    """Why a content block breaks the protocol's schema ([] when it does not), in words."""
    if not isinstance(item, dict):
        return [f"a content block must be an object, not {json_type(item)}"]
    kind = item.get("type")
    if not isinstance(kind, str):
        return ["a content block has no `type`"]
    if kind not in REQUIRED:
        return [f"`{kind}` is not a content type of the protocol (text, image, audio, resource_link, resource)"]
    article = "an" if kind[0] in "aeiou" else "a"
    found = [
        f"{article} {kind} block needs `{field}` (a string)"
        if field != "resource"
        else "a resource block needs `resource`"
        for field in REQUIRED[kind]
        if not isinstance(item.get(field), dict if field == "resource" else str)
    ]
    resource = item.get("resource")
    if kind == "resource" and isinstance(resource, dict):
        if not isinstance(resource.get("uri"), str):
            found.append("its `resource` needs `uri` (a string)")
        if not isinstance(resource.get("text"), str) and not isinstance(resource.get("blob"), str):
            found.append("its `resource` needs `text` or `blob` (a string)")
    return found


def content_item(item: Any) -> dict[str, Any]:
    """One content block, classified for the template; unknown shapes are shown as JSON, and a
    block that breaks the schema as what is wrong with it and the block as it came."""
    wrong = problems(item)
    if wrong:
        return {"kind": "invalid", "problems": wrong, "json": jsontext.pretty(item)}
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
        return {
            "kind": "resource_link",
            "uri": str(item.get("uri", "")),
            "name": str(item.get("name", "")),
            "mime": mime,
            "description": str(item.get("description") or ""),
        }
    if kind == "resource":
        res = item.get("resource")
        res = res if isinstance(res, dict) else {}
        res_mime = str(res.get("mimeType") or "")
        if "text" in res:
            return {
                "kind": "resource_text",
                "uri": str(res.get("uri", "")),
                "mime": res_mime,
                "text": _capped(str(res.get("text", ""))),
            }
        return blob_item(str(res.get("uri", "")), res_mime, res.get("blob"))
    return {"kind": "json", "json": jsontext.pretty(item)}


def blob_item(uri: str, mime: str, blob: Any) -> dict[str, Any]:
    """A binary resource: previewed by its MIME type where that is safe, always downloadable
    (as application/octet-stream, so the browser never renders it)."""
    valid = _is_base64(blob)
    size = len(blob) * 3 // 4 if isinstance(blob, str) else 0
    item: dict[str, Any] = {
        "kind": "resource_blob",
        "uri": uri,
        "mime": mime,
        "size": size,
        "preview": "",
        "src": f"data:application/octet-stream;base64,{blob}" if valid else "",
        "filename": (uri.rstrip("/").rsplit("/", 1)[-1] or "resource")[:100] or "resource",
    }
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
    return {
        "before": url[:start],
        "host": url[start : start + len(parts.netloc)],
        "after": url[start + len(parts.netloc) :],
        "openable": True,
    }


COPY = '<button type="button" class="copy" data-copy="closest:.copyable pre">Copy</button>'


def _more(more: dict[str, Any] | None) -> str:
    """Where the rest of a long text is appended, piece by piece, in a closed <details>."""
    if not more:
        return ""
    return (
        f'<details class="more"><summary>{_e(more["chars"])} more characters</summary>'
        f'<pre class="text" id="{_e(more["id"])}"></pre></details>'
    )


def copyable(css: str, text: str, more: dict[str, Any] | None = None, dom_id: str = "") -> str:
    """A block of text or JSON with its Copy button (static/copy.js), which copies all of it,
    the rest appended in pieces (`_more`) included."""
    attrs = f' id="{dom_id}"' if dom_id else ""
    if more:
        attrs += f' data-copy-more="{_e(more["id"])}"'
    return f'<div class="copyable">{COPY}<pre class="{css}"{attrs}>{_e(text)}</pre>{_more(more)}</div>'


def _resource_link(uri: str) -> str:
    """A resource a result links to, opened in the workspace (read there) by a click (`data-open`,
    static/workspace.js). The URL is relative to the session page, the only page that shows a Result.
    An unpaired surrogate ("\\ud800" in a server's JSON) cannot be URL-encoded: the link reads the
    URI as the page shows it, U+FFFD in its place (rendering raised, on every reconnect too)."""
    try:
        query = quote(uri, safe="")
    except UnicodeEncodeError:
        query = quote(without_surrogates(uri), safe="")
    url = _e("resource/?uri=" + query)
    return f'<a class="mono" href="{url}" data-open="{url}">{_e(uri)}</a>'


def content_html(item: dict[str, Any]) -> str:
    """One content block (`content_item`): text, media only from checked data URLs."""
    kind = item.get("kind")
    out = [f'<div class="content content-{_e(kind)}">\n']
    if kind == "text":
        out.append(copyable("text", item["text"], item.get("text_more")))
    elif kind == "image":
        out.append(f'<img src="{_e(item["src"])}" alt="image ({_e(item["mime"])})">')
    elif kind == "audio":
        out.append(f'<audio controls src="{_e(item["src"])}"></audio>')
    elif kind == "resource_link":
        out.append(
            f'<div class="resource-link">🔗 {_resource_link(item["uri"])} {_e(item["name"])} '
            f'{_e(item["mime"])} <span class="dim">{_e(item["description"])}</span></div>'
        )
    elif kind == "resource_text":
        out.append(
            f'<div class="mono dim">{_e(item["uri"])} {_e(item["mime"])}</div>'
            + copyable("text", item["text"], item.get("text_more"))
        )
    elif kind == "resource_blob":
        out.append(
            f'<div class="mono dim">{_e(item["uri"])} {_e(item["mime"])} (blob, {_e(item["size"])} bytes)</div>\n  '
        )
        preview = item.get("preview")
        if preview == "image":
            out.append(f'<img src="{_e(item["media"])}" alt="blob preview ({_e(item["mime"])})">')
        elif preview == "audio":
            out.append(f'<audio controls src="{_e(item["media"])}"></audio>')
        elif preview == "text":
            out.append(copyable("text blob-text", item["text"]))
            if item.get("cut"):
                out.append('<p class="dim">preview cut; download for the whole blob</p>')
        elif item.get("why"):
            out.append(f'<p class="dim">{_e(item["why"])}</p>')
        if item.get("src"):
            out.append(f'\n  <a href="{_e(item["src"])}" download="{_e(item["filename"])}">Download</a>')
    elif kind == "blocked":
        out.append(f'<p class="dim">{_e(item["why"])} ({_e(item["mime"])})</p>')
    elif kind == "invalid":
        out.append(
            '<p class="content-problems" role="note"><span class="badge bad">schema problem</span> '
            + "; ".join(_e(p) for p in item["problems"])
            + ". As the server sent it:</p>"
            + copyable("json", item.get("json", ""))
        )
    else:
        out.append(copyable("json", item.get("json", "")))
    out.append("\n</div>\n")
    return "".join(out)


def content_block(item: dict[str, Any]) -> SafeString:
    """For templates (the sampling card shows messages the same way): every value was escaped."""
    return SafeString(content_html(item))
