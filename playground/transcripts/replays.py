"""A replay's side in the database: the recording it reads, the Differences it saves
(`Session.report`), and the comparison made again when a server's ignore rules change."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from playground.mcp import diff
from playground.mcp.replayer import compare_response, counts
from playground.mcp.replay import RAW_KEPT
from playground.mcp.secrets import Redactor

from .models import Event, Session
from .storable import storable


def recorded_rows(session: Session) -> Iterator[dict[str, Any]]:
    """The session's transcript lines as its owner reads them (OAuth values masked, as the
    export masks them): what a replay of it replays. A generator over a database cursor, read
    a chunk at a time: consume it in the thread that called (the database's), as `recording()`
    does when a replay starts."""
    redact = session.owner_redactor()
    for data in session.events.order_by("seq").values_list("data", flat=True).iterator(chunk_size=2000):
        yield redact.obj(data)


def save_report(session_id: int, report: dict[str, Any]) -> None:
    Session.objects.filter(pk=session_id).update(report=storable(report))


def _responses(session: Session | None, seqs: set[int], secrets: Redactor) -> dict[int, dict[str, Any]]:
    """Response events by seq: their `{"result"}` or `{"error"}`, and raw text, masked as their
    owner reads them (as `recorded_rows` gave the replay the original's); the raw text cut by `secrets`."""
    if session is None or not seqs:
        return {}
    redact = session.owner_redactor()
    out: dict[int, dict[str, Any]] = {}
    for seq, data in Event.objects.filter(session_id=session.pk, seq__in=seqs).values_list("seq", "data"):
        data = redact.obj(data)
        message = data.get("message") if isinstance(data, dict) else None
        if isinstance(message, dict):
            out[seq] = {"message": {k: message[k] for k in ("result", "error") if k in message},
                        "raw": secrets.cut(data.get("raw") or "", RAW_KEPT)}
    return out


def compare_again(session: Session, ignore: list[str]) -> dict[str, Any]:
    """The report with every replayed request compared again under `ignore` (the server's new
    rules), from the two sessions' saved responses; saved. Without the original session (it was
    deleted), the rows stay as they were and the report says so."""
    report = dict(session.report or {})
    rows = [dict(r) for r in report.get("rows") or [] if isinstance(r, dict)]
    rules = diff.rules(ignore)
    source_id = session.source_id
    secrets = session.share_redactor()      # what the replay's share page masks (the original's among them)
    old = _responses(session.source, {r["old_response_seq"] for r in rows if isinstance(r.get("old_response_seq"), int)},
                     secrets)
    new = _responses(session, {r["new_response_seq"] for r in rows if isinstance(r.get("new_response_seq"), int)},
                     secrets)
    for row in rows:
        if row.get("kind") != "request" or row.get("old_truncated") or source_id is None:
            continue
        before, after = old.get(row.get("old_response_seq")), new.get(row.get("new_response_seq"))  # type: ignore[arg-type]
        if row.get("old_response_seq") is not None and before is None:
            continue        # that event is not readable any more: leave the row as it was
        if row.get("new_response_seq") is not None and after is None:
            continue        # not saved yet (rules sent as the replay ends): the row as the worker compared it
        status, changes, complete, detail = compare_response(
            before["message"] if before else None, after["message"] if after else None, rules=rules,
            new_failure=str(row.get("failure") or ""), secrets=secrets)
        row.update(status=status, changes=changes, detail=detail)
        row.pop("incomplete", None)
        if not complete:
            row["incomplete"] = True
        if status != "same":
            row["old_raw"] = before["raw"] if before else ""
            row["new_raw"] = after["raw"] if after else ""
        else:
            row.pop("old_raw", None)
            row.pop("new_raw", None)
    report.update(rows=rows, counts=counts(rows), ignore=list(ignore))
    report["stale"] = source_id is None     # the original is gone: the rows could not be compared again
    save_report(session.pk, report)
    return report
