"""Schema lint, live: every frame of the session, both ways, checked against the MCP schema of
the protocol version in use (`playground/mcp/lint/`).

Frames are checked before they are saved (the recorder hands each batch here first), so what is
found is on the saved row — the export, the line on the live, reloaded and shared pages — with
no second write and no line patched later. The checking runs in a thread, never on the event
loop, within a budget (`lint.LintBudget`): under a flood only some frames are checked, and
a note in the transcript says how many once it is over (a frame too large to check says so itself). The header counts the problems.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from playground.mcp.events import TranscriptEvent
from playground.mcp.lint import PROCESS_SHARE, FrameLinter, LintBudget, apply, check_all

from ..fragments.html import oob
from .base import Feature, render
from .context import SessionContext

if TYPE_CHECKING:
    from playground.mcp.secrets import Redactor
    from playground.transcripts.models import Session

# Shared by the sessions of a process: checks are CPU work under one GIL, more threads would
# only take turns. Two, so that one session's megabyte frame does not hold up every other one.
POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="schema-lint")
UPDATE_EVERY = 0.25  # seconds: the header's count reaches the page at most this often
QUIET = 1.0  # seconds without an unchecked frame: the flood is over, say how it went


class SchemaLint(Feature):
    name = "schema_lint"
    checks_frames = True
    head_template = "sessions/features/schema_lint_head.html"
    share_template = "sessions/features/schema_lint_head.html"

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.linter = FrameLinter(budget=LintBudget(shared=PROCESS_SHARE))
        self.problems = 0
        self._order = asyncio.Lock()  # batches are observed and checked in order
        self._flood: tuple[int, int] | None = None  # (seen, checked) when frames began to go unchecked
        self._last_skip = 0.0
        self._stopping = False

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        return {"schema_problems": session.schema_problems}

    @classmethod
    def share_context(cls, session: Session, redact: Redactor, token: str) -> dict[str, Any] | None:
        return cls.page_context(session)

    async def check_frames(self, events: list[TranscriptEvent]) -> None:
        # Shielded: a save cancelled as the session ends (its events then saved again by the final
        # flush) still gets its findings onto the events; the final flush's check waits for it.
        await asyncio.shield(self._check(events))

    async def _check(self, events: list[TranscriptEvent]) -> None:
        linter = self.linter
        async with self._order:
            before = (linter.seen, linter.checked, linter.skipped)
            picks = linter.pick(events)
            if linter.skipped != before[2]:
                self._skipping(before[0], before[1])
            found = 0
            if picks:
                reports, spent = await asyncio.get_running_loop().run_in_executor(POOL, check_all, picks)
                if linter.budget is not None:
                    linter.budget.spend(spent)
                secrets = self.ctx.secrets()
                found = sum(apply(pick, report, secrets) for pick, report in zip(picks, reports))
            if self._stopping:
                self._note()  # (out of time as the session ended: saved by the same flush)
        if found:
            self.problems += found
            self.publish_state_soon(UPDATE_EVERY)

    def _skipping(self, seen: int, checked: int) -> None:
        loop = asyncio.get_running_loop()
        self._last_skip = loop.time()
        if self._flood is None:
            self._flood = (seen, checked)
            if not self._stopping:
                self.ctx.spawn("schema-lint-note", self._note_when_quiet())

    async def _note_when_quiet(self) -> None:
        loop = asyncio.get_running_loop()
        while (left := self._last_skip + QUIET - loop.time()) > 0:
            await asyncio.sleep(left)
        self._note()

    def _note(self) -> None:
        """Say how many frames of the flood were checked (a note: in the transcript and the export)."""
        if self._flood is None:
            return
        seen = self.linter.seen - self._flood[0]
        checked = self.linter.checked - self._flood[1]
        self._flood = None
        budget = self.linter.budget
        limits = (
            f"at most {budget.rate:g} frames a second from the server, within {budget.share:.0%} of a CPU"
            + (f" and the process's sessions together within {budget.shared.share:.0%}" if budget.shared else "")
            if budget is not None
            else ""
        )
        self.ctx.tap.note(
            "lint",
            f"schema lint: {checked:,} of {seen:,} frames checked ({limits}); "
            f"the other {seen - checked:,} were not checked",
            checked=checked,
            seen=seen,
        )

    async def stop(self) -> None:
        """The session ends: say now what a flood left unchecked (its note's task was cancelled
        with the session's tasks); what is left to save is checked whole, while time lasts."""
        self._stopping = True
        if self.linter.budget is not None:
            self.linter.budget.lift_rate()
        self._note()

    def state_html(self) -> str:
        return oob(
            "schema-lint", "outerHTML", render("sessions/features/schema_lint_count.html", {"count": self.problems})
        )
