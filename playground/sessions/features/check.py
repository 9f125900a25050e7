"""The server check on a session page: a session of kind "check" runs the battery of
`playground.mcp.check` once it is connected, shows each row in the "Server check" region as it
is judged (each citing its transcript lines), saves the report on the session (its share page
shows it) and ends the session when the battery is done.

The person chose on the check form which tools may be called (`prepare`'s `check` hint):
calling a tool runs its side effects."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async

from playground import security
from playground.mcp.check import CheckResult, Report, Runner
from playground.mcp.check.runner import options_from
from playground.mcp.client import McpClient
from playground.mcp.config import ServerConfig
from playground.mcp.connect import open_client
from playground.mcp.events import Tap, TranscriptEvent
from playground.mcp.secrets import Redactor
from playground.transcripts.models import Session
from playground.transcripts.storable import storable

from ..fragments.html import oob
from ..protocol import FeatureEvent
from .base import Feature, render
from .context import SessionContext

if TYPE_CHECKING:
    from playground.registry.models import Server

log = logging.getLogger(__name__)

TEMPLATE = "sessions/features/check_report.html"
FINISHED = "the server check finished"


def report_html(report: Report, *, running: bool) -> str:
    return render(TEMPLATE, report_context(report, running=running))


def report_region(report: Report, *, running: bool) -> str:
    """The page's report region, replaced whole."""
    return oob("check-report", "outerHTML", report_html(report, running=running))


def report_context(report: Report, *, running: bool = False) -> dict[str, Any]:
    return {
        "check_rows": report.rows,
        "check_summary": report.summary(),
        "check_running": running,
        "check_failed": report.failed,
        "check_tools": report.tools_line(),
    }


def saved_report(session: Session) -> Report | None:
    """A check session's report as saved, masked for its owner; None for other sessions."""
    if getattr(session, "kind", None) != Session.Kind.CHECK:
        return None
    return Report.from_dict(session.owner_redactor().obj(session.report or {}))


class Check(Feature):
    name = "check"
    region_template = share_template = "sessions/features/check_region.html"
    stylesheets = ("check.css",)

    @classmethod
    def prepare(cls, server: Server, *, check: dict[str, Any] | None = None, **hints: Any) -> dict[str, Any]:
        return {"run": True, **check} if isinstance(check, dict) else {}

    @classmethod
    def share_context(cls, session: Session, redact: Redactor, token: str) -> dict[str, Any] | None:
        """A check session's saved report, redacted like the transcript."""
        if getattr(session, "kind", None) != Session.Kind.CHECK:
            return None
        return {"check_report": True, **report_context(Report.from_dict(redact.obj(session.report or {})))}

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        report = saved_report(session)
        if report is None:
            return {}
        return {"check_report": True, **report_context(report, running=session.is_live and not report.finished)}

    @classmethod
    def ended_fragments(cls, session: Session) -> list[str]:
        report = saved_report(session)
        return [report_region(report, running=False)] if report is not None else []

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        # Made now, before the session connects: the report cites the handshake's lines too.
        self.runner = None
        if self.options.get("run"):
            self.runner = Runner(ctx.tap, options_from(self.options, ctx.config.timeout), secrets=ctx.secrets)
        self.started = False
        self.saved = False
        self.connect_error = ""
        if self.runner is not None:
            ctx.tap.subscribe(self._on_event)

    def busy(self) -> bool:
        return self.runner is not None and not self.runner.report.finished

    def _on_event(self, event: TranscriptEvent) -> None:
        if event.kind == "error" and not self.started and event.text:
            self.connect_error = event.text  # why the session could not connect, if it cannot

    async def start(self) -> None:
        if self.runner is None or self.ctx.client is None:
            return
        self.started = True
        await self._show()
        self.ctx.spawn("check", self._run(self.ctx.client))

    async def _run(self, client: McpClient) -> None:
        assert self.runner is not None
        oauth = self.ctx.feature("oauth")
        auth = oauth.client_auth() if oauth is not None else None

        async def connect(changed: ServerConfig, tap: Tap) -> McpClient:  # on the session's tap, marked
            return await open_client(changed, tap=tap, guard=security.net_guard(), auth=auth)

        async def on_row(row: CheckResult) -> None:
            await self._show()

        await self.runner.run(client, self.ctx.config, connect, on_row)
        await self._save()
        await self._show()
        self.ctx.end(FINISHED)

    async def stop(self) -> None:
        """The session ends: a check it cut short says so in its last rows; the report is saved."""
        if self.runner is None or self.saved:
            return
        if not self.started:
            reason = self.connect_error or "the session could not connect"
            self.runner.report.add(CheckResult("connection", "fail", f"{reason}; no check ran"))
            self.runner.report.finished = True
        else:
            client = self.ctx.client
            why = client.close_reason if client is not None and client.closed else "the session ended"
            await self.runner.finish(cut_short=f"the session ended before the check finished ({why})")
        await self._save()
        try:
            await self._show()
        except Exception:  # the channel layer may be going away with the process
            log.exception("check %s: could not show the final report", self.ctx.session_id)

    async def _save(self) -> None:
        assert self.runner is not None
        self.saved = True
        report = storable(self.runner.report.to_dict())
        await database_sync_to_async(Session.objects.filter(pk=self.ctx.session_id).update)(report=report)

    async def _show(self) -> None:
        state = self._state()
        if state is not None:
            await self.publish(state)

    def _state(self) -> dict[str, Any] | None:
        if self.runner is None:
            return None
        report = self.runner.report
        return {"html": report_region(report, running=not report.finished)}

    def snapshot(self) -> list[FeatureEvent]:
        state = self._state()
        return [self.event(state)] if state is not None and self.started else []
