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
# \d{19} cost three times the parse itself).
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_RUN = b"0" * 19


def _long_digit_run(text: str | bytes) -> bool:
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return _RUN in data.translate(_DIGITS)


def loads(text: str | bytes) -> Any:
    """`json.loads`. orjson refuses what the standard library reads leniently (NaN, Infinity,
    lone surrogates, numbers beyond a double): those texts, and its errors, go to `json`."""
    if not _long_digit_run(text):
        try:
            return orjson.loads(text)
        except ValueError:          # orjson.JSONDecodeError, and invalid UTF-8
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
