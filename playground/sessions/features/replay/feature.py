"""Replay: a saved session's requests sent again, in order, in a new session of their own
(kind "replay", `source` the original), and the Differences region that says what changed.

Started by the session page's "Replay" (views/replay_form.py), which starts a session on the chosen
server with `replay_of`: `prepare` reads the original's transcript into a recording; once the
session is connected and listed, `start` runs it (playground.mcp.replay) through the
session's client. The server's requests are answered from the recording first
(`answers_first`); those it does not match go to the person's cards as in any session. Rows
reach every tab as they complete, and every live share viewer too (rendered again for them:
masked as the share page is, without links to the original); the report is saved in
`Session.report` at the end (or when the session ends first), and the page, its share link and
a reload show it from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async
from django.urls import URLPattern, path

from playground.mcp.replay import Replayer, recording
from playground.mcp.secrets import Redactor
from playground.transcripts import replays

from ...fragments.html import oob
from ...protocol import Command, FeatureEvent
from ..base import Feature, render
from ..context import SessionContext, TabContext
from . import views
from .region import ENDED_EARLY, region_html, row_view, saved_region, summary_line

if TYPE_CHECKING:
    from playground.registry.models import Server
    from playground.transcripts.models import Session


class Replay(Feature):
    name = "replay"
    answers_first = True
    commands = frozenset({"replay_compared"})  # from the ignore rules' view: the rows compared again
    head_template = "sessions/features/replay_head.html"
    region_template = share_template = "sessions/features/replay_saved.html"
    stylesheets = ("replay.css",)

    @classmethod
    def get_urls(cls) -> list[URLPattern]:
        """The Differences' ignore rules, saved and the rows compared again (views.py)."""
        return [path("sessions/<int:pk>/differences/ignore/", views.differences_ignore, name="differences_ignore")]

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        """The Differences from the saved report, until the websocket brings the live region."""
        return {"differences_html": saved_region(session, session.owner_redactor(), owner=True)}

    @classmethod
    def ended_fragments(cls, session: Session) -> list[str]:
        if getattr(session, "kind", None) != "replay":
            return []
        return [oob("differences", "outerHTML", saved_region(session, session.owner_redactor(), owner=True))]

    @classmethod
    def share_context(cls, session: Session, redact: Redactor, token: str) -> dict[str, Any] | None:
        html = saved_region(session, redact, owner=False)
        return {"differences_html": html} if html else None

    @classmethod
    def prepare(cls, server: Server, *, replay_of: Session | None = None, **hints: Any) -> dict[str, Any]:
        if replay_of is None:
            return {}
        return {
            "recording": recording(replays.recorded_rows(replay_of), replay_of.share_redactor()),
            "ignore": [r for r in server.replay_ignore or [] if isinstance(r, str)],
            "about": {
                "source": replay_of.pk,
                "source_server": replay_of.server_name,
                "source_started": replay_of.started_at.strftime("%Y-%m-%d %H:%M"),
                "target": server.name,
            },
        }

    @classmethod
    def fragments(cls, event: dict[str, Any], tab: TabContext) -> list[str]:
        if "region" in event:
            for n in range(int(event.get("rows") or 0)):
                tab.first_time(f"diff-row:{n}")
            return [oob("differences", "outerHTML", event["region"])]
        out: list[str] = [oob("differences-summary", "innerHTML", event["summary"])]
        if tab.first_time(f"diff-row:{event['n']}"):
            out.insert(0, oob("differences-rows", "beforeend", event["row"]))
        return out

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        rec = self.options.get("recording")
        self.replayer = (
            Replayer(rec, tap=ctx.tap, ignore=self.options.get("ignore") or [], secrets=ctx.secrets) if rec else None
        )
        self.about = self.options.get("about") or {}
        self._saved = False
        self._compared: dict[str, Any] | None = None  # the saved report, compared again since

    async def answer_first(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        return await self.replayer.answer_first(method, params) if self.replayer is not None else None

    def busy(self) -> bool:
        return self.replayer is not None and self.replayer.state in ("waiting", "running")

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
        await self.ctx.publish_shared(
            self.name, lambda redact: self._row_event(redact.obj(row), redact.text(summary), share=True)
        )

    def _row_event(self, row: dict[str, Any], summary: str, *, share: bool = False) -> dict[str, Any]:
        view = row_view(row, self.about.get("source"), owner=not share)
        return {"n": row["n"], "summary": summary, "row": render("sessions/features/replay_row.html", {"row": view})}

    def _region(self, share: Redactor | None = None) -> dict[str, Any]:
        """The whole region: the owner's, or (`share`: masked by it) a share viewer's."""
        report = self.report() if share is None else share.obj(self.report())
        return {
            "rows": len(report["rows"]),
            "region": region_html(report, session_id=self.ctx.session_id, owner=share is None, live=not self._saved),
        }

    async def _publish_region(self) -> None:
        await self.publish(self._region())
        await self.ctx.publish_shared(self.name, self._region)

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(self._region())] if self.replayer is not None else []

    def share_snapshot(self, redact: Redactor) -> list[dict[str, Any]]:
        return [self._region(redact)] if self.replayer is not None else []
