"""The Differences region of a replay, for the live page (the worker renders it once for every
tab) and for the saved report (the session page and its share page: `saved_region`)."""

from __future__ import annotations

import difflib
import json
import re
from typing import TYPE_CHECKING, Any

from django.urls import reverse

from playground.mcp.replay import diff, summary_text
from playground.mcp.secrets import Redactor

from ..base import render

if TYPE_CHECKING:
    from playground.transcripts.models import Session

ENDED_EARLY = "the session ended before the replay did"
STATE_WORDS = {"waiting": "starting", "running": "replaying", "done": "done", "stopped": "stopped"}


def summary_line(report: dict[str, Any], *, live: bool) -> str:
    if live and "requests" not in report:
        return "replaying…"  # nothing saved yet: a live page gets the rows from the worker
    state = str(report.get("state") or "waiting")
    if not live and state in ("waiting", "running"):
        state = "stopped"
    text = f"{STATE_WORDS.get(state, state)} · {summary_text(report)}"
    if report.get("planned") and state in ("waiting", "running"):
        text += f" (of {report['planned']})"
    aborted = report.get("aborted") or (ENDED_EARLY if state == "stopped" else "")
    return f"{text} · {aborted}" if aborted else text


def _json(value: Any) -> str:
    """A changed value as JSON text (a value cut to length is already text: shown as is)."""
    return json.dumps(value, ensure_ascii=False)


WORD = re.compile(r"\w+(?:[.\-]\w+)*|\s+|[^\w\s]", re.UNICODE)  # (1.0, a-b, host.name: one word)
MAX_WORDS = 2000  # tokens of one side a word diff compares (beyond: the two values whole)


def words(old: str, new: str) -> list[tuple[str, str]] | None:
    """Two changed strings as one word-level diff: [(op, text)], op "=" (both), "-" (only the
    recorded), "+" (only the replayed); None when they are too long to compare word by word."""
    a, b = WORD.findall(old), WORD.findall(new)
    if len(a) > MAX_WORDS or len(b) > MAX_WORDS:
        return None
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out


def row_view(row: dict[str, Any], source_id: Any, *, owner: bool) -> dict[str, Any]:
    """A row as its template shows it; links to the original session's events on the owner's
    page only (a share page shows one session). Two changed strings get a word-level diff: a
    one-word change is not buried in two long strings."""
    changes = []
    for change in row.get("changes") or []:
        cut = bool(change.get("cut"))
        shown = {
            "path": change.get("path") or "(the whole response)",
            "old": ("(absent)" if "old" not in change else change["old"] if cut else _json(change["old"])),
            "new": ("(absent)" if "new" not in change else change["new"] if cut else _json(change["new"])),
        }
        if not cut and isinstance(change.get("old"), str) and isinstance(change.get("new"), str):
            shown["words"] = words(change["old"], change["new"])
        changes.append(shown)
    during = row.get("during")
    during = during if isinstance(during, dict) else {}
    source_url = reverse("sessions:detail", args=[source_id]) if owner and source_id else ""
    return {
        **row,
        "changes_shown": changes,
        "during": during,
        "source_url": source_url,
        "expandable": bool(changes or row.get("old_raw") or row.get("new_raw")),
    }


def region_html(
    report: dict[str, Any], *, session_id: int, owner: bool, live: bool, error: str = "", rules_text: str | None = None
) -> str:
    about = report.get("about")
    about = about if isinstance(about, dict) else {}
    state = str(report.get("state") or "waiting")
    done = not live or state in ("done", "stopped")
    rows = [r for r in report.get("rows") or [] if isinstance(r, dict)]
    ignore = [r for r in report.get("ignore") or [] if isinstance(r, str)]
    return render(
        "sessions/features/replay_region.html",
        {
            "about": about,
            "state": state if live else ("done" if state == "done" else "stopped"),
            "summary": summary_line(report, live=live),
            "owner": owner,
            "session_id": session_id,
            "rows": [row_view(r, about.get("source"), owner=owner) for r in rows],
            "source_url": reverse("sessions:detail", args=[about["source"]]) if owner and about.get("source") else "",
            "rules_form": owner and done,
            "rules_text": "\n".join(ignore) if rules_text is None else rules_text,
            "defaults": ", ".join(diff.DEFAULT_IGNORE),
            "error": error,
            "stale": bool(report.get("stale")),
            "skipped": [s for s in report.get("skipped") or [] if isinstance(s, str)][:20],
            "unsolicited": report.get("unsolicited") if isinstance(report.get("unsolicited"), dict) else {},
            "answered": report.get("answered_from_recording") or 0,
        },
    )


def saved_region(session: Session, redact: Redactor, *, owner: bool) -> str:
    """A replay session's Differences from its saved report, masked by `redact` (the owner's page
    or a share page: read-only); "" for other sessions. While the session is live its page
    follows the worker's region (a tab's snapshot, a share viewer's), which replaces this one:
    until then it says what it knows (a replay still running is not "stopped")."""
    if getattr(session, "kind", None) != "replay":
        return ""
    return region_html(redact.obj(session.report or {}), session_id=session.pk, owner=owner, live=session.is_live)
