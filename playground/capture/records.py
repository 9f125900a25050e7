"""The upload's records (one JSON object a line, the contract with `manage.py mcp --capture`),
read and checked before anything is stored: a malformed upload records nothing."""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass
from typing import Any

from playground.mcp import jsontext
from playground.mcp.framing import MAX_FRAME

KINDS = frozenset({"start", "frame", "part", "stderr", "heartbeat", "dropped", "end"})
_UUID_HEX = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Limits:
    """What one upload and one capture may make the playground store and hold."""

    request_bytes: int = 4 * 1024 * 1024  # a larger body is refused (413)
    records: int = 20_000  # records in one upload
    held: int = 20_000  # records held after a gap, per capture: more is refused (400)
    ahead: int = 1_000_000  # how far past the next expected record an index may be
    argv: int = 200  # arguments of the started server kept
    field_chars: int = 10_000  # a start's argv item, cwd, an end's reason
    requests: int = 10_000_000  # uploads per capture
    line_bytes: int = MAX_FRAME  # of one frame line sent in parts: beyond, it is kept cut (as the capture does)


LIMITS = Limits()


class Malformed(ValueError):
    """The upload is not what the contract says (400): the message says where."""


@dataclass(frozen=True)
class Upload:
    capture: str
    server: int
    records: list[dict[str, Any]]  # in the order the body had them


def _text(value: Any, where: str, limit: int | None = None) -> str:
    if not isinstance(value, str):
        raise Malformed(f"{where} must be a string")
    return value if limit is None else value[:limit]


def _record(line: str, number: int) -> dict[str, Any]:
    try:
        record = jsontext.loads(line)
    except (ValueError, RecursionError) as exc:
        raise Malformed(f"line {number}: not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise Malformed(f"line {number}: not a JSON object")
    where = f"line {number}"
    capture, server, i, t, kind = (record.get(k) for k in ("capture", "server", "i", "t", "kind"))
    if not isinstance(capture, str) or not _UUID_HEX.fullmatch(capture):
        raise Malformed(f"{where}: `capture` must be a uuid4 hex")
    if type(server) is not int:
        raise Malformed(f"{where}: `server` must be an integer")
    if type(i) is not int or i < 0:
        raise Malformed(f"{where}: `i` must be an integer from 0")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
        raise Malformed(f"{where}: `t` must be a number (unix seconds)")
    if kind not in KINDS:
        raise Malformed(f"{where}: `kind` must be one of {', '.join(sorted(KINDS))}")
    out: dict[str, Any] = {"capture": capture, "server": server, "i": i, "t": float(t), "kind": kind}
    if kind in ("frame", "part"):
        if record.get("dir") not in ("send", "recv"):
            raise Malformed(f"{where}: a {kind}'s `dir` must be send or recv")
        out["dir"] = record["dir"]
        if "text" in record and kind == "frame":
            out["text"] = _text(record["text"], f"{where}: `text`")
        elif "b64" in record:
            try:
                base64.b64decode(_text(record["b64"], f"{where}: `b64`"), validate=True)
            except (binascii.Error, ValueError):
                raise Malformed(f"{where}: `b64` is not base64") from None
            out["b64"] = record["b64"]
        else:
            raise Malformed(f"{where}: a {kind} needs " + ("`text` or `b64`" if kind == "frame" else "`b64`"))
        parts, cut = record.get("parts", 0), record.get("cut", False)
        if kind == "frame" and (type(parts) is not int or parts < 0 or not isinstance(cut, bool)):
            raise Malformed(f"{where}: a frame's `parts` must be an integer from 0 and `cut` a boolean")
        if kind == "frame" and (parts or cut):
            out["parts"], out["cut"] = parts, cut
    elif kind == "stderr":
        out["text"] = _text(record.get("text"), f"{where}: `text`")
    elif kind == "start":
        argv = record.get("argv", [])
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise Malformed(f"{where}: `argv` must be a list of strings")
        out["argv"] = [a[: LIMITS.field_chars] for a in argv[: LIMITS.argv]]
        pid = record.get("pid")
        out["pid"] = pid if type(pid) is int else None
        cwd = record.get("cwd")
        out["cwd"] = cwd[: LIMITS.field_chars] if isinstance(cwd, str) else ""
    elif kind == "dropped":
        count = record.get("count")
        if type(count) is not int or count < 0:
            raise Malformed(f"{where}: `count` must be an integer from 0")
        out["count"] = count
    elif kind == "end":
        code = record.get("code")
        if code is not None and type(code) is not int:
            raise Malformed(f"{where}: `code` must be an integer or null")
        out["code"] = code
        reason = record.get("reason")
        out["reason"] = reason[: LIMITS.field_chars] if isinstance(reason, str) else ""
    return out


def parse(body: bytes) -> Upload:
    """The upload's records, all of one capture of one server; Malformed otherwise."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed("the body is not UTF-8") from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if len(records) >= LIMITS.records:
            raise Malformed(f"more than {LIMITS.records} records in one upload")
        records.append(_record(line, number))
    if not records:
        raise Malformed("no records")
    first = records[0]
    for record in records:
        if record["capture"] != first["capture"] or record["server"] != first["server"]:
            raise Malformed("an upload carries the records of one capture of one server")
    return Upload(capture=first["capture"], server=first["server"], records=records)


def frame_bytes(record: dict[str, Any]) -> str | bytes:
    """A frame record's line: its text, or its raw bytes (not UTF-8)."""
    if "text" in record:
        return str(record["text"])
    return base64.b64decode(record["b64"])
