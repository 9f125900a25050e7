"""JSON-RPC 2.0 framing for MCP: building, classifying and encoding messages.

Nothing here validates strictly: a debugger must be able to build and carry
messages that are wrong on purpose, and to describe ones that are wrong by accident.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Literal

from . import jsontext

JSONRPC = "2.0"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP-reserved range (2026-07-28 renumbering).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# Error codes a modern server uses; seeing one identifies a modern server.
MODERN_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})

Kind = Literal["request", "notification", "response", "error", "invalid"]


class JsonRpcError(Exception):
    """An error response from the peer, or one we answer the peer with."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    @classmethod
    def from_error(cls, error: Any) -> JsonRpcError:
        if not isinstance(error, dict):
            return cls(INTERNAL_ERROR, f"malformed error object: {error!r}")
        code = error.get("code")
        return cls(code if isinstance(code, int) else INTERNAL_ERROR, str(error.get("message", "")), error.get("data"))


class IdAllocator:
    """Monotonic integer ids; never reused within a session, so late replies stay unambiguous."""

    def __init__(self, start: int = 1) -> None:
        self._counter = itertools.count(start)

    def next(self) -> int:
        return next(self._counter)


def member(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """The object under `key`, or {} when it is absent or not an object (a peer's JSON is untrusted)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def request(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": JSONRPC, "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result_response(id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": id, "result": result}


def error_response(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC, "id": id, "error": JsonRpcError(code, message, data).to_error()}


def classify(msg: Any) -> Kind:
    """What a parsed frame is, judged leniently (a wrong `jsonrpc` field is reported elsewhere)."""
    if not isinstance(msg, dict):
        return "invalid"
    if "method" in msg and isinstance(msg["method"], str):
        return "request" if "id" in msg and msg["id"] is not None else "notification"
    if "id" in msg:
        if "error" in msg:
            return "error"
        if "result" in msg:
            return "response"
    return "invalid"


def problems(msg: Any) -> list[str]:
    """Ways a parsed frame departs from JSON-RPC 2.0, for the transcript to show."""
    if type(msg) is dict and msg.get("jsonrpc") == JSONRPC and type(msg.get("method")) is str:
        if "id" not in msg or isinstance(msg["id"], (str, int)):
            return []  # a well-formed notification or request: most frames
    if isinstance(msg, list):
        return ["batch arrays are not part of MCP since 2025-06-18"]
    if not isinstance(msg, dict):
        return [f"frame is a JSON {type(msg).__name__}, not an object"]
    found = []
    if msg.get("jsonrpc") != JSONRPC:
        found.append(f"jsonrpc field is {msg.get('jsonrpc')!r}, expected '2.0'")
    kind = classify(msg)
    if kind == "invalid":
        found.append("neither a request, a notification nor a response")
    if kind in ("response", "error") and "result" in msg and "error" in msg:
        found.append("has both result and error")
    if "id" in msg and not isinstance(msg["id"], (str, int)) and kind != "error":
        found.append(f"id must be a string or an integer, got {msg['id']!r}")
    return found


def encode(msg: Any) -> str:
    """Compact JSON on one line: stdio frames are newline-delimited, so no raw newlines.
    (orjson on every request's path: the standard library's encoder was ~3% of a relayed call.)"""
    return jsontext.dumps(msg)


def id_key(id: Any) -> str:
    """A hashable, type-preserving key for a JSON-RPC id (1 and "1" are different ids).

    Integers and strings (the ids MCP allows; several lookups a call) get a tagged form; anything
    else — true, 1.0, null, objects a broken peer sends — its canonical JSON, which never starts
    with a tag."""
    kind = type(id)
    if kind is int:
        return f"i:{id}"
    if kind is str:
        return f"s:{id}"
    return json.dumps(id, sort_keys=True)
