"""Replay: a saved session's requests sent again, in order, in a new session of their own
(kind "replay", `source` the original), and the Differences region that says what changed.

Started by the session page's "Replay" (replay_views.py), which starts a session on the chosen
server with `replay_of`: `prepare` reads the original's transcript into a recording; once the
session is connected and listed, `start` runs it (playground.mcp.replayer) through the
session's client. The server's requests are answered from the recording first
(`answers_first`); those it does not match go to the person's cards as in any session. Rows
reach every tab as they complete, and every live share viewer too (rendered again for them:
masked as the share page is, without links to the original); the report is saved in
`Session.report` at the end (or when the session ends first), and the page, its share link and
a reload show it from there.
"""
from __future__ import annotations

import json
from typing import Any

from channels.db import database_sync_to_async
from django.urls import reverse

from playground.mcp import diff
from playground.mcp.replay import recording
from playground.mcp.replayer import Replayer, summary_text
from playground.mcp.secrets import Redactor
from playground.transcripts import replays

from ..fragments.html import oob
from ..protocol import Command, FeatureEvent
from .base import Feature, render
from .context import TabContext

ENDED_EARLY = "the session ended before the replay did"


class Replay(Feature):
    name = "replay"
    answers_first = True
    commands = frozenset({"replay_compared"})     # from the ignore rules' view: the rows compared again
    head_template = "sessions/features/replay_head.html"
    region_template = share_template = "sessions/features/replay_saved.html"
    stylesheets = ("replay.css",)

    @classmethod
    def page_context(cls, session: Any) -> dict[str, Any]:
        """The Differences from the saved report, until the websocket brings the live region."""
        return {"differences_html": saved_region(session, session.owner_redactor(), owner=True)}

    @classmethod
    def share_context(cls, session: Any, redact: Any, token: str) -> dict[str, Any] | None:
        html = saved_region(session, redact, owner=False)
        return {"differences_html": html} if html else None

    @classmethod
    def prepare(cls, server: Any, *, replay_of: Any = None, **hints: Any) -> dict[str, Any]:
        if replay_of is None:
            return {}
        return {"recording": recording(replays.recorded_rows(replay_of), replay_of.share_redactor()),
                "ignore": [r for r in server.replay_ignore or [] if isinstance(r, str)],
                "about": {"source": replay_of.pk, "source_server": replay_of.server_name,
                          "source_started": replay_of.started_at.strftime("%Y-%m-%d %H:%M"), "target": server.name}}

    @classmethod
    def fragments(cls, event: dict[str, Any], tab: TabContext) -> list[str]:
        if "region" in event:
            for n in range(int(event.get("rows") or 0)):
                tab.first_time(f"diff-row:{n}")
            return [oob("differences", "outerHTML", event["region"])]
        out = [oob("differences-summary", "innerHTML", event["summary"])]
        if tab.first_time(f"diff-row:{event['n']}"):
            out.insert(0, oob("differences-rows", "beforeend", event["row"]))
        return out

    def __init__(self, ctx: Any, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        rec = self.options.get("recording")
        self.replayer = (Replayer(rec, tap=ctx.tap, ignore=self.options.get("ignore") or [], secrets=ctx.secrets)
                         if rec else None)
        self.about = self.options.get("about") or {}
        self._saved = False
        self._compared: dict[str, Any] | None = None     # the saved report, compared again since

    async def answer_first(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        return await self.replayer.answer_first(method, params) if self.replayer is not None else None

    async def start(self) -> None:
        if self.replayer is None or self.replayer.state != "waiting" or self.ctx.client is None:
            return
        self.ctx.spawn("replay", self._run(self.replayer))

    async def _run(self, replayer: Replayer) -> None:
        client = self.ctx.client
        assert client is not None
        await self._publish_region()
        await replayer.run(client, on_row=self._row)
        await self._finish()

    async def stop(self) -> None:
        if self.replayer is not None and self.replayer.state in ("waiting", "running"):
            self.replayer.state = "stopped"
            self.replayer.aborted = self.replayer.aborted or ENDED_EARLY
            await self._finish()

    async def _finish(self) -> None:
        if self._saved or self.replayer is None:
            return
        self._saved = True
        await database_sync_to_async(replays.save_report)(self.ctx.session_id, self.report())
        await self._publish_region()

    def report(self) -> dict[str, Any]:
        assert self.replayer is not None
        if self._compared is not None:
            return self._compared
        return {**self.replayer.report(), "about": self.about}

    async def handle(self, command: Command) -> None:
        """The ignore rules changed and the saved rows were compared again: every tab shows that
        (and a reconnecting one gets it, not the first comparison)."""
        report = command.get("report")
        if self._saved and isinstance(report, dict):
            self._compared = report
            await self._publish_region()

    async def _row(self, row: dict[str, Any]) -> None:
        summary = summary_line(self.report(), live=True)
        await self.publish(self._row_event(row, summary))
        await self.ctx.publish_shared(self.name, lambda redact: self._row_event(redact.obj(row), redact.text(summary),
                                                                                share=True))

    def _row_event(self, row: dict[str, Any], summary: str, *, share: bool = False) -> dict[str, Any]:
        view = row_view(row, self.about.get("source"), owner=not share)
        return {"n": row["n"], "summary": summary, "row": render("sessions/features/replay_row.html", {"row": view})}

    def _region(self, share: Redactor | None = None) -> dict[str, Any]:
        """The whole region: the owner's, or (`share`: masked by it) a share viewer's."""
        report = self.report() if share is None else share.obj(self.report())
        return {"rows": len(report["rows"]), "region": region_html(
            report, session_id=self.ctx.session_id, owner=share is None, live=not self._saved)}

    async def _publish_region(self) -> None:
        await self.publish(self._region())
        await self.ctx.publish_shared(self.name, self._region)

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(self._region())] if self.replayer is not None else []

    def share_snapshot(self, redact: Redactor) -> list[dict[str, Any]]:
        return [self._region(redact)] if self.replayer is not None else []


# The Differences region, for the live page (the worker renders it once for every tab) and for
# the saved report (the session page and its share page: `saved_region`). -------

STATE_WORDS = {"waiting": "starting", "running": "replaying", "done": "done", "stopped": "stopped"}


def summary_line(report: dict[str, Any], *, live: bool) -> str:
    if live and "requests" not in report:
        return "replaying…"         # nothing saved yet: a live page gets the rows from the worker
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


def row_view(row: dict[str, Any], source_id: Any, *, owner: bool) -> dict[str, Any]:
    """A row as its template shows it; links to the original session's events on the owner's
    page only (a share page shows one session)."""
    changes = []
    for change in row.get("changes") or []:
        cut = bool(change.get("cut"))
        changes.append({"path": change.get("path") or "(the whole response)",
                        "old": ("(absent)" if "old" not in change else change["old"] if cut else _json(change["old"])),
                        "new": ("(absent)" if "new" not in change else change["new"] if cut else _json(change["new"]))})
    during = row.get("during") if isinstance(row.get("during"), dict) else {}
    source_url = reverse("sessions:detail", args=[source_id]) if owner and source_id else ""
    return {**row, "changes_shown": changes, "during": during, "source_url": source_url,
            "expandable": bool(changes or row.get("old_raw") or row.get("new_raw"))}


def region_html(report: dict[str, Any], *, session_id: int, owner: bool, live: bool, error: str = "",
                rules_text: str | None = None) -> str:
    about = report.get("about") if isinstance(report.get("about"), dict) else {}
    state = str(report.get("state") or "waiting")
    done = not live or state in ("done", "stopped")
    rows = [r for r in report.get("rows") or [] if isinstance(r, dict)]
    ignore = [r for r in report.get("ignore") or [] if isinstance(r, str)]
    return render("sessions/features/replay_region.html", {
        "about": about, "state": state if live else ("done" if state == "done" else "stopped"),
        "summary": summary_line(report, live=live), "owner": owner, "session_id": session_id,
        "rows": [row_view(r, about.get("source"), owner=owner) for r in rows],
        "source_url": reverse("sessions:detail", args=[about["source"]]) if owner and about.get("source") else "",
        "rules_form": owner and done, "rules_text": "\n".join(ignore) if rules_text is None else rules_text,
        "defaults": ", ".join(diff.DEFAULT_IGNORE), "error": error, "stale": bool(report.get("stale")),
        "skipped": [s for s in report.get("skipped") or [] if isinstance(s, str)][:20],
        "unsolicited": report.get("unsolicited") if isinstance(report.get("unsolicited"), dict) else {},
        "answered": report.get("answered_from_recording") or 0,
    })


def saved_region(session: Any, redact: Any, *, owner: bool) -> str:
    """A replay session's Differences from its saved report, masked by `redact` (the owner's page
    or a share page: read-only); "" for other sessions. While the session is live its page
    follows the worker's region (a tab's snapshot, a share viewer's), which replaces this one:
    until then it says what it knows (a replay still running is not "stopped")."""
    if getattr(session, "kind", None) != "replay":
        return ""
    return region_html(redact.obj(session.report or {}), session_id=session.pk, owner=owner, live=session.is_live)
