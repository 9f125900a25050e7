"""Runs the battery on an open session, one group after another, handing each row out as soon
as it is judged; a lost connection or a server that stopped answering ends it with the rows so
far, a `fail` saying why, and the timing. A group that crashes (server data no check foresaw)
becomes a `fail` row of its own, logged, and the next group runs: the report is always saved.

The whole battery has a deadline (CheckOptions.deadline, 120 s unless set): per-request timeouts
do not bound it, since progress resets a tool call's. At the deadline the battery is cancelled —
the request in flight with it (the client tells the server: notifications/cancelled) — and the
report gets a `fail` row "deadline" saying so, then the wire and timing rows as always."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..client import McpClient
from ..config import ServerConfig
from ..events import Tap
from ..secrets import NO_SECRETS, Redactor
from . import (
    calls,
    capabilities,
    conformance,
    errors,
    handshake,
    lists,
    prompts,
    resources,
    timing,
    tools,
    utilities,
    wire,
)
from .context import CheckContext, CheckOptions, Connector, Stop
from .probe import Trace
from .result import FAIL, CheckResult, Report, clip

log = logging.getLogger(__name__)

CLEANUP_SECONDS = 5.0  # after the deadline: how long the cancelled battery may take to let go

OnRow = Callable[[CheckResult], Awaitable[None]]

# In the order the report shows them.
GROUPS: tuple[Callable[[CheckContext], Awaitable[None]], ...] = (
    handshake.this_session,
    handshake.run,
    lists.run,
    tools.run,
    capabilities.run,
    calls.run,
    resources.run,
    prompts.run,
    errors.run,
    utilities.run,
    conformance.run,
)


class Runner:
    """Made before the session connects (its trace must see the handshake), run once it is open."""

    def __init__(
        self, tap: Tap, options: CheckOptions | None = None, *, secrets: Callable[[], Redactor] = lambda: NO_SECRETS
    ) -> None:
        self.tap = tap
        self.secrets = secrets  # the values the report's pages mask, as known now
        self.trace = Trace(tap)
        self.options = options or CheckOptions()
        self.report = Report()
        self.ctx: CheckContext | None = None
        self._on_row: OnRow | None = None
        self._own: list[McpClient] = []  # connections the check opened for itself (closed at its end)

    async def _emit(self, row: CheckResult) -> None:
        # A reason quotes the server cut to length (`clip`, MAX_REASON): a secret's head at a cut is masked.
        row.reason = self.secrets().at_cuts(row.reason)
        self.report.add(row)
        if self._on_row is not None:
            await self._on_row(row)

    async def run(
        self, client: McpClient, config: ServerConfig, connect: Connector, on_row: OnRow | None = None
    ) -> Report:
        self._on_row = on_row
        self.ctx = CheckContext(
            client=client,
            trace=self.trace,
            config=config,
            options=self.options,
            connector=connect,
            emit=self._emit,
            report=self.report,
            start=self.trace.mark(),
        )
        battery = asyncio.create_task(self._battery(self.ctx), name="server-check")
        try:
            done, _ = await asyncio.wait({battery}, timeout=self.options.deadline)
        except asyncio.CancelledError:
            battery.cancel()
            raise
        if done:
            battery.result()
        else:
            await self._out_of_time(battery, self.ctx)
        await self.finish()
        return self.report

    async def _battery(self, ctx: CheckContext) -> None:
        reconnected = False
        for group in GROUPS:
            since = self.trace.mark()
            try:
                await self._group(group, ctx)
            except Stop as stop:
                # What the server printed as it went (a crash's traceback) is cited with the request.
                seqs = [*stop.seqs, *self.trace.stderr_since(since)]
                if not ctx.client.closed or reconnected:
                    await self._emit(
                        CheckResult(
                            "connection: again" if reconnected else "connection",
                            FAIL,
                            stop.reason + "; the remaining checks did not run",
                            seqs,
                        )
                    )
                    return
                # A server that crashed on one probe still gets the rest of the battery, on a new connection
                # (once: one that crashes again ends it). The group that crashed it is not run again.
                await self._emit(
                    CheckResult(
                        "connection", FAIL, stop.reason + "; the remaining checks run on a new connection", seqs
                    )
                )
                reconnected = True
                try:
                    ctx.client = await ctx.connect(ctx.config, "check reconnection")
                    self._own.append(ctx.client)
                except Exception as exc:
                    await self._emit(
                        CheckResult(
                            "connection: again",
                            FAIL,
                            f"could not connect again: {clip(str(exc), 300)}; the remaining checks did not run",
                            self.trace.seqs(since),
                        )
                    )
                    return

    async def _out_of_time(self, battery: asyncio.Task[None], ctx: CheckContext) -> None:
        """Cancel the battery at the deadline (the request in flight with it: the reason reaches
        the server in notifications/cancelled) and say so in a row citing that request."""
        deadline = f"the check ran out of its deadline of {self.options.deadline:g} s"
        asking = ctx.asking
        battery.cancel(deadline)
        await asyncio.wait({battery}, timeout=CLEANUP_SECONDS)  # (its cancellation is not raised here)
        if not battery.done():
            log.warning(
                "server check: the battery still ran %g s after it was cancelled at its deadline", CLEANUP_SECONDS
            )
        elif not battery.cancelled() and battery.exception() is not None:
            log.error("server check: the battery failed at its deadline", exc_info=battery.exception())
        during, seqs = "", []
        if asking is not None:
            method, params, since = asking
            name = params.get("name") if isinstance(params, dict) else None
            during = f" during {method}" + (f" of {clip(name, 60)}" if isinstance(name, str) else "")
            seqs = self.trace.seqs(since, (method, "notifications/cancelled"))
            during += ", which was cancelled"
        await self._emit(CheckResult("deadline", FAIL, f"{deadline}{during}; the remaining checks did not run", seqs))

    async def _group(self, group: Callable[[CheckContext], Awaitable[None]], ctx: CheckContext) -> None:
        since = self.trace.mark()
        try:
            await group(ctx)
        except Stop:
            raise
        except Exception as exc:
            name = group_name(group)
            log.exception("server check: the %s checks crashed", name)
            await self._emit(
                CheckResult(
                    f"{name}: crashed",
                    FAIL,
                    f"the check crashed: {type(exc).__name__}: {clip(str(exc), 300)} (logged); the other checks ran on",
                    self.trace.seqs(since),
                )
            )

    async def finish(self, cut_short: str | None = None) -> None:
        """Close the report: a `fail` if it was cut short (the session ended under it), then the
        server's frames as frames and the timing."""
        if self.report.finished:
            return
        self.report.finished = True
        judged = set(self.report.tools_called) | {name for name, _ in self.report.tools_not_called}
        for name in self.options.call_tools:
            if name not in judged:
                self.report.not_called(name, "the check ended before it got to the calls")
        if cut_short is not None:
            stderr = self.trace.stderr_since(self.ctx.start if self.ctx is not None else 0)
            await self._emit(CheckResult("connection", FAIL, cut_short + "; the remaining checks did not run", stderr))
        if self.ctx is not None:  # (judged from the trace: also when the battery was cut short)
            await self._emit(wire.row(self.ctx))
            await self._emit(timing.row(self.ctx))
        for client in self._own:
            with contextlib.suppress(Exception):
                await client.close()


def group_name(group: Callable[..., Any]) -> str:
    """`capabilities` for capabilities.run, `handshake this_session` for handshake.this_session."""
    module = group.__module__.rsplit(".", 1)[-1]
    return module if group.__name__ == "run" else f"{module} {group.__name__.replace('_', ' ')}"


def options_from(data: dict[str, Any], session_timeout: float | None = None) -> CheckOptions:
    """Options from plain data (the page's form, the CLI, a test). With the session's request
    timeout, each check request waits at most CHECK_TIMEOUT (or that, if shorter) and a tool
    call that long (reset by progress); `data` may still set either, and the whole check's
    `deadline` (CHECK_DEADLINE by default: the page never sets it)."""
    names = list(dict.fromkeys(n for n in data.get("call_tools") or [] if isinstance(n, str)))
    options = CheckOptions(call_tools=names)
    if session_timeout is not None:
        options.timeout = min(options.timeout, session_timeout)
        options.call_timeout = session_timeout
    for key in ("timeout", "call_timeout", "deadline"):
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            setattr(options, key, float(value))
    return options
