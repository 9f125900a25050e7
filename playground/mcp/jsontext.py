"""JSON text in and out on the hot paths: every frame is parsed once by the tap and encoded
once for the transcript. orjson does both several times faster than the standard library;
it is used only where its answer is exactly the standard library's, which stays the
reference (and keeps its lenient reading of what servers actually send).
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

# orjson reads an integer beyond 64 bits as a float (2**70 would come back as 1.18e21, an id
# that no longer matches): a text with 19 digits in a row goes to the standard library. Found
# by mapping digits to "0" and the rest to " " (bytes.translate runs in C: a regex search for
# \d{19} cost three times the parse itself), then `find` (`in` took 5x as long on CPython 3.13:
# 309 ns against 63 for a 168-byte notification, as long as the parse).
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_RUN = b"0" * 19


def _long_digit_run(data: bytes) -> bool:
    return data.translate(_DIGITS).find(_RUN) >= 0


def loads(text: str | bytes, utf8: bytes | None = None) -> Any:
    """`json.loads`. orjson refuses what the standard library reads leniently (NaN, Infinity,
    lone surrogates, numbers beyond a double): those texts, and its errors, go to `json`.
    `utf8`: the text's own UTF-8 bytes, when the caller has them (a frame as read): not encoded again."""
    data = utf8 if utf8 is not None else text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if not _long_digit_run(data):
        try:
            return orjson.loads(data)
        except ValueError:  # orjson.JSONDecodeError, and invalid UTF-8
            pass
    return json.loads(text)


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is. NaN and Infinity are written as null: they are not
    JSON, and a database's JSON type refuses them (the frame's raw text still has them).
    What orjson cannot encode — integers beyond 64 bits, lone surrogates — goes through `json`
    with its ASCII escapes, which any UTF-8 store accepts."""
    try:
        return orjson.dumps(value).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(_finite(value), separators=(",", ":"))


def _finite(value: Any) -> Any:
    """NaN and Infinity as null, as orjson writes them (the standard library would write NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def pretty(value: Any, raw: str = "") -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, 30x faster with orjson (same layout;
    exponents may read 1e-7 for 1e-07). The standard library's encoder is kept where orjson would
    differ or fail: NaN/Infinity when `raw` (the frame the value came from) shows them (orjson
    writes null; without `raw` they read null too), integers beyond 64 bits and lone surrogates."""
    if "NaN" not in raw and "Infinity" not in raw:
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except (orjson.JSONEncodeError, TypeError):
            pass
    return json.dumps(value, indent=2, ensure_ascii=False)


# Deeper than this, a parsed message is cut: Python's own encoder, deepcopy (the in-memory
# channel layer), msgpack (Redis) and every recursive walk of the app give up somewhere between
# 300 and 1,000 levels, and a server can send 1,800 (json reads that deep). No real message
# comes near it; the raw text keeps everything.
MAX_DEPTH = 200
CUT = f"… (nested deeper than {MAX_DEPTH} levels: cut here; the raw frame has the rest)"


def too_deep(value: Any, text: str | bytes) -> bool:
    """Whether `value` (parsed from `text`) nests deeper than MAX_DEPTH. Decided from the text
    alone for almost every frame (it needs that many brackets): two scans in C."""
    if len(text) <= MAX_DEPTH:  # (most frames: shorter than the brackets it would take)
        return False
    if isinstance(text, str):
        brackets = text.count("[") + text.count("{")
    else:
        brackets = text.count(b"[") + text.count(b"{")
    if brackets <= MAX_DEPTH:
        return False
    return nests_deeper(value, MAX_DEPTH)


def nests_deeper(value: Any, limit: int) -> bool:
    """Whether `value` nests more than `limit` containers deep (iterative: no recursion limit
    applies; stops at the first too deep)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def cut_deep(value: Any) -> Any:
    """A copy of `value` whose containers below MAX_DEPTH levels are replaced by CUT (iterative:
    no recursion limit applies)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]  # (item, parent, key, depth)
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, (dict, list)) and depth >= MAX_DEPTH:
            parent[key] = CUT
        elif isinstance(item, dict):
            copy: dict[str, Any] = {}
            parent[key] = copy
            stack.extend((v, copy, k, depth + 1) for k, v in item.items())
        elif isinstance(item, list):
            items: list[Any] = [None] * len(item)
            parent[key] = items
            stack.extend((v, items, i, depth + 1) for i, v in enumerate(item))
        else:
            parent[key] = item
    return root[0]
