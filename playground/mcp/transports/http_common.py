"""What both HTTP transports share: header facts with secrets masked, and the modern era's
header mirroring rules (`Mcp-Name` / `Mcp-Param-*` value encoding, `x-mcp-header` validation).
The SSE parser and the frame size limit are in `..framing` (stdlib only: the capture uses them).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeGuard
from urllib.parse import urlsplit, urlunsplit

from .. import jsonrpc
from ..secrets import MASK, is_secret_name, mask_headers

ACCEPT_POST = "application/json, text/event-stream"
ACCEPT_SSE = "text/event-stream"
# Default wait before reconnecting a dropped SSE stream when the server sent no `retry:`.
DEFAULT_RETRY_MS = 1000
# Consecutive reconnections without a new event before giving up on a stream.
MAX_RECONNECTS = 3

# Headers the transport itself sets: their values are protocol facts, shown as they are.
PROTOCOL_HEADERS = frozenset(
    {"accept", "content-type", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id"}
)


# --- header names and values -----------------------------------------------------------------

# RFC 9110 §5.6.2: a field name is a token, one or more tchar.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# RFC 9110 §5.5: a field value with CR, LF or NUL must be refused (they end or cut the field).
_VALUE_BREAKS = re.compile(r"[\r\n\0]")


def is_field_name(name: object) -> TypeGuard[str]:
    """Whether `name` is an HTTP field name (an RFC 9110 token). The one check for every place a
    header name enters (server form, import, admin, CLI, `x-mcp-header`): a name with a newline
    would end a line wherever it is written next, a request or a curl command's comment."""
    return isinstance(name, str) and _TOKEN.fullmatch(name) is not None


def header_problem(name: str, value: str) -> str | None:
    """Why a header cannot be sent, naming it (its name shown escaped), or None when it can."""
    if not is_field_name(name):
        return (
            f"{name!r} is not a valid HTTP header name: one or more letters, digits or "
            "!#$%&'*+-.^_`|~ (no spaces, colons or line breaks)"
        )
    if _VALUE_BREAKS.search(value):
        return f"the value of {name} holds a line break or NUL character, which an HTTP header cannot carry"
    return None


def header_problems(headers: Mapping[str, str]) -> list[str]:
    """header_problem for each header, in order (empty when all can be sent)."""
    return [p for name, value in headers.items() if (p := header_problem(name, value)) is not None]


# --- facts ----------------------------------------------------------------------------------


def content_type(headers: Mapping[str, str]) -> str:
    """The media type without parameters, lower-cased ('' when absent)."""
    return (headers.get("content-type") or "").split(";")[0].strip().lower()


def masked(headers: Mapping[str, str] | Iterable[tuple[str, str]], secret_names: Iterable[str] = ()) -> dict[str, str]:
    """Headers for an event: secrets masked, and every user-configured header too (the
    server config treats every header value as a possible credential)."""
    return mask_headers(headers, extra_secrets=[n for n in secret_names if n.lower() not in PROTOCOL_HEADERS])


def shown_url(url: str) -> str:
    """The URL for events: a password in it, or a query value with a secret-looking name, is masked."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(":" + parts.password + "@", ":" + MASK + "@", 1)
    query = parts.query
    if query:
        pairs = [p.partition("=") for p in query.split("&")]
        query = "&".join(k + s + (MASK if s and is_secret_name(k) else v) for k, s, v in pairs)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def same_origin(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    default = {"http": 80, "https": 443}
    return (pa.scheme.lower(), (pa.hostname or "").lower(), pa.port or default.get(pa.scheme.lower())) == (
        pb.scheme.lower(),
        (pb.hostname or "").lower(),
        pb.port or default.get(pb.scheme.lower()),
    )


# --- modern era header mirroring ---------------------------------------------------------------

# Used with fullmatch only: a `$` anchor matches before a final newline, which then reaches a
# request line or a copied curl command's comment (where it ends the line: issue 30).
_SENTINEL = re.compile(r"=\?base64\?.*\?=", re.S)
_HEADER_SAFE = re.compile(r"[\x20-\x7e]*")
_PRIMITIVE = frozenset({"string", "integer", "boolean"})
# Keywords whose values are schema positions off the pure `properties` chain.
_SUB_ONE = frozenset(
    {
        "items",
        "contains",
        "unevaluatedItems",
        "additionalProperties",
        "propertyNames",
        "unevaluatedProperties",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SUB_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUB_MAP = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})
MAX_SAFE_INTEGER = 2**53 - 1

NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def encode_header_value(value: str) -> str:
    """Plain printable ASCII passes as is; anything else (non-ASCII, control characters,
    edge whitespace, or text that looks like the sentinel) becomes `=?base64?…?=`."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip(" \t") and not _SENTINEL.fullmatch(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str) -> str | None:
    """Inverse of encode_header_value; None for a malformed sentinel."""
    if not _SENTINEL.fullmatch(value):
        return value
    try:
        return base64.b64decode(value[len("=?base64?") : -2], validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema position with its chain of `properties` keys (None once off that chain)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub) for name, sub in value.items())
            elif key in _SUB_ONE:
                stack.append((None, value))
            elif key in _SUB_LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif key in _SUB_MAP and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def validate_x_mcp_header(input_schema: Any) -> str | None:
    """Why a tool's `x-mcp-header` annotations are invalid (the client excludes the tool), or None."""
    seen: dict[str, str] = {}
    for path, node in _positions(input_schema):
        if "x-mcp-header" not in node:
            continue
        if not path:
            return "x-mcp-header on a schema position not reachable through `properties` alone"
        where = ".".join(path)
        token = node["x-mcp-header"]
        if not isinstance(token, str):
            return f"property {where!r}: x-mcp-header must be a string, not {type(token).__name__}"
        if not is_field_name(token):
            return f"property {where!r}: x-mcp-header {token!r} is not an HTTP field-name token"
        kind = node.get("type")
        if kind not in _PRIMITIVE:
            return f"property {where!r}: x-mcp-header is only allowed on string, integer or boolean (type is {kind!r})"
        if token.lower() in seen:
            return f"property {where!r}: x-mcp-header {token!r} duplicates the one on {seen[token.lower()]!r}"
        seen[token.lower()] = where
    return None


def _render(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_SAFE_INTEGER else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return str(int(value))
    if isinstance(value, str):
        return value
    return None


def param_headers(input_schema: Any, arguments: Any) -> dict[str, str]:
    """`Mcp-Param-{token}` headers for a `tools/call`: the value at each annotated property's
    path in the arguments, encoded; omitted when absent, null or not a primitive."""
    headers: dict[str, str] = {}
    for path, node in _positions(input_schema):
        token = node.get("x-mcp-header")
        if not path or not is_field_name(token):  # validate_x_mcp_header refused it
            continue
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        rendered = _render(value) if value is not None else None
        if rendered is not None:
            headers[f"Mcp-Param-{token}"] = encode_header_value(rendered)
    return headers


def modern_headers(frame: Any, protocol_version: str | None) -> dict[str, str]:
    """The request metadata headers of the 2026-07-28 Streamable HTTP transport for one frame."""
    headers: dict[str, str] = {}
    if not isinstance(frame, dict):
        if protocol_version:
            headers["MCP-Protocol-Version"] = protocol_version
        return headers
    params = jsonrpc.member(frame, "params")
    meta = jsonrpc.member(params, "_meta")
    version = meta.get("io.modelcontextprotocol/protocolVersion")
    version = version if isinstance(version, str) else protocol_version
    if version:
        headers["MCP-Protocol-Version"] = encode_header_value(version)
    method = frame.get("method")
    if isinstance(method, str):
        headers["Mcp-Method"] = encode_header_value(method)
        field = NAME_FIELDS.get(method)
        name = params.get(field) if field else None
        if isinstance(name, str):
            headers["Mcp-Name"] = encode_header_value(name)
    return headers
