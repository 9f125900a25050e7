"""A replay's side in the database: the recording it reads, the Differences it saves
(`Session.report`), and the comparison made again when a server's ignore rules change (read in
short database calls, compared elsewhere: `compared_again` touches no database)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from playground.budget import COMPARISON, DIFF
from playground.mcp.replay import RAW_KEPT, compare_response, counts, diff
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


def _compared(row: dict[str, Any]) -> bool:
    """Whether a row is compared again: a replayed request whose recorded response was kept whole."""
    return row.get("kind") == "request" and not row.get("old_truncated")


def source_of(session: Session) -> Session | None:
    """The original session, with what masking its responses needs (None: it was deleted)."""
    if session.source_id is None:
        return None
    return Session.objects.only("pk", "oauth_secret_values").filter(pk=session.source_id).first()


def responses_to_read(session: Session) -> tuple[list[int], list[int]]:
    """The response events comparing again reads: (the original's seqs, this session's)."""
    rows = [r for r in (session.report or {}).get("rows") or [] if isinstance(r, dict) and _compared(r)]
    return (
        sorted({r["old_response_seq"] for r in rows if type(r.get("old_response_seq")) is int}),
        sorted({r["new_response_seq"] for r in rows if type(r.get("new_response_seq")) is int}),
    )


def response_data(session_id: int, seqs: list[int]) -> dict[int, Any]:
    """Saved events' data by seq: one database call (the caller keeps `seqs` few: a response
    may be a megabyte)."""
    return dict(Event.objects.filter(session_id=session_id, seq__in=seqs).values_list("seq", "data"))


def _responses(data: dict[int, Any], redact: Redactor, secrets: Redactor) -> dict[int, dict[str, Any]]:
    """Response events' `{"result"}` or `{"error"}`, and raw text, masked as their owner reads
    them (as `recorded_rows` gave the replay the original's); the raw text cut by `secrets`."""
    out: dict[int, dict[str, Any]] = {}
    for seq, row in data.items():
        row = redact.obj(row)
        message = row.get("message") if isinstance(row, dict) else None
        if isinstance(message, dict):
            out[seq] = {
                "message": {k: message[k] for k in ("result", "error") if k in message},
                "raw": secrets.cut(row.get("raw") or "", RAW_KEPT),
            }
    return out


def compared_again(
    session: Session, source: Session | None, ignore: list[str], old_data: dict[int, Any], new_data: dict[int, Any]
) -> dict[str, Any]:
    """The report with every replayed request compared again under `ignore` (the server's new
    rules), from the two sessions' saved responses (`response_data` of `responses_to_read`).
    CPU work on a server's values and no database: for a worker thread. Without the original
    session (`source`: it was deleted), the rows stay as they were and the report says so."""
    report = dict(session.report or {})
    rows = [dict(r) for r in report.get("rows") or [] if isinstance(r, dict)]
    rules = diff.rules(ignore)
    whole = COMPARISON.budget()  # every row's comparison takes its part of one budget
    secrets = session.share_redactor()  # what the replay's share page masks (the original's among them)
    old = _responses(old_data, source.owner_redactor(), secrets) if source is not None else {}
    new = _responses(new_data, session.owner_redactor(), secrets)
    for row in rows:
        if source is None or not _compared(row):
            continue
        before, after = old.get(row.get("old_response_seq")), new.get(row.get("new_response_seq"))  # type: ignore[arg-type]
        if row.get("old_response_seq") is not None and before is None:
            continue  # that event is not readable any more: leave the row as it was
        if row.get("new_response_seq") is not None and after is None:
            continue  # not saved yet (rules sent as the replay ends): the row as the worker compared it
        status, changes, complete, detail = compare_response(
            before["message"] if before else None,
            after["message"] if after else None,
            rules=rules,
            new_failure=str(row.get("failure") or ""),
            secrets=secrets,
            budget=whole.part(DIFF),
        )
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
    report["stale"] = source is None  # the original is gone: the rows could not be compared again
    return report
