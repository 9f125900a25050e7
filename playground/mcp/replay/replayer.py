"""A recording (`recordings`) played against a server, and what changed: the Differences.

The client's requests go out again in their order through an open `McpClient` (its own ids,
progress tokens and `_meta`: renumbered consistently by construction). A request that got a
response in the recording is waited for before the next is sent; one that did not (cancelled,
a `subscriptions/listen` left open) runs alongside and is cancelled as it was, or at the end.
The server's requests are answered from the recording when method and params match (ids and
the default ignore rules aside), each recorded answer used once; others go to whoever answers
otherwise (a person on the page, the CLI's flags). Comparing is CPU work on a server's values
(a response may be megabytes): it runs in a thread, never on the event loop.

Each replayed request becomes a row: `same`, `changed` (a structural diff of the response),
`error` (it failed where it had succeeded, or the other way round); the server's notifications
and requests while it was in flight are compared by method, in order: `missing` and `new`
rows. Every row is also a transcript note of kind "diff" (the CLI's `--jsonl` contract).
Shared by the CLI (`replay.cli`) and the page (sessions/features/replay.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import difflib
import itertools
import math
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from playground.budget import Budget

from .. import jsontext
from ..client import McpClient, ProtocolError, RequestTimeout, ignore_progress
from ..events import Tap, TranscriptEvent
from ..jsonrpc import JsonRpcError
from ..responder import Responder
from ..secrets import CUT, MASK, NO_SECRETS, Redactor
from ..transports.base import TransportError
from . import diff
from .recordings import RAW_KEPT, ClientAnswer, Exchange, Notify, Recording, Seen, input_requests, request_name

STATUSES = ("same", "changed", "error", "missing", "new", "unchecked")  # unchecked: the comparison's budget stopped it
VALUE_KEPT = 4000  # characters of JSON kept of one changed value in a row
ALIGN_LIMIT = 500  # notifications per request compared in order; beyond, by count per method
# Notifications whose moment depends on timing, not on the request they came during (a server
# announces a changed list when it gets to it: during start-up, the first request or the third):
# compared over the whole replay, by count per method, never as missing here and new there.
TIMED = frozenset(
    {"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed"}
)

# The step whose request is being sent from this task (the tap's send events are made in it).
_STEP: contextvars.ContextVar[_Run | None] = contextvars.ContextVar("replay_step", default=None)

RowListener = Callable[[dict[str, Any]], Awaitable[None]]
# The secret values the session's pages mask, as known now (the OAuth flow learns more): where a
# server's text is cut, the head of a secret left at the cut is masked (Redactor.cut).
Secrets = Callable[[], Redactor]


@dataclass
class _Run:
    """One exchange replayed."""

    step: Exchange
    outcome: str = "none"  # ok | failed | none
    message: dict[str, Any] | None = None  # {"result"} or {"error"}, when a response came
    failure: str = ""  # why, when it failed without a response (timeout...)
    seq: int | None = None  # the replayed request's event
    response_seq: int | None = None
    response_raw: str = ""
    planned_cancel: bool = False
    notifications: list[Seen] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)


def outcome_of(message: dict[str, Any] | None) -> str:
    """ok, failed (a JSON-RPC error, or a tool result with isError: true) or none."""
    if message is None:
        return "none"
    if "error" in message:
        return "failed"
    result = message.get("result")
    return "failed" if isinstance(result, dict) and result.get("isError") is True else "ok"


def compare_response(
    old: dict[str, Any] | None,
    new: dict[str, Any] | None,
    *,
    rules: diff.Rules,
    old_truncated: bool = False,
    new_failure: str = "",
    secrets: Redactor = NO_SECRETS,
    budget: Budget | None = None,
) -> tuple[str, list[dict[str, Any]], bool, str]:
    """(status, changes, complete, detail) of one replayed request: its recorded response
    against the replayed one (each `{"result"}` or `{"error"}`, None when none came); values
    cut to length are cut by `secrets`. A comparison its `budget` (`budget.DIFF`) stopped before
    any change was found is `unchecked`, never `same`."""
    old_outcome = "ok" if old_truncated and old is None else outcome_of(old)
    new_outcome = "failed" if new is None and new_failure else outcome_of(new)
    detail = ""
    if new_failure:
        detail = new_failure
    if old_outcome == "none" and new_outcome == "none":
        return "same", [], True, "no response, as recorded"
    if old_truncated:
        status = "same" if new_outcome == "ok" else "error"
        return status, [], True, "the recorded response was too large to be recorded whole: compared by outcome only"
    found = diff.diff(old, new, rules, budget=budget)
    changes = [_kept(c, secrets) for c in found.to_list()]
    if found.reason:
        detail = detail or found.reason
    if old_outcome != new_outcome:
        words = {"ok": "succeeded", "failed": "failed", "none": "got no response"}
        detail = detail or f"{words[old_outcome]} in the recording, {words[new_outcome]} now"
        return "error", changes, found.complete, detail
    if found.reason and not changes:
        return "unchecked", changes, False, detail
    return ("changed" if changes else "same"), changes, found.complete, detail


def _kept(change: dict[str, Any], secrets: Redactor) -> dict[str, Any]:
    """A change whose values are cut to VALUE_KEPT characters of JSON (then strings, `cut`)."""
    for side in ("old", "new"):
        if side in change:
            text = jsontext.dumps(change[side])
            if len(text) > VALUE_KEPT:
                change[side] = secrets.cut(text, VALUE_KEPT, CUT)
                change["cut"] = True
    return change


def sequence_rows(kind: str, old: list[Seen], new: list[Seen], during: dict[str, Any]) -> list[dict[str, Any]]:
    """`missing` and `new` rows for the server's notifications (or requests) during one
    request: aligned by method in order (by count per method beyond ALIGN_LIMIT)."""
    rows: list[dict[str, Any]] = []
    if len(old) > ALIGN_LIMIT or len(new) > ALIGN_LIMIT:
        before, after = Counter(s.method for s in old), Counter(s.method for s in new)
        for method in sorted(before.keys() | after.keys()):
            gap = after[method] - before[method]
            if gap:
                status = "new" if gap > 0 else "missing"
                rows.append(
                    {
                        "status": status,
                        "kind": kind,
                        "method": method,
                        "during": during,
                        "detail": f"{abs(gap)} {'more' if gap > 0 else 'fewer'} than recorded "
                        f"({before[method]} then, {after[method]} now)",
                    }
                )
        return rows
    matcher = difflib.SequenceMatcher(None, [s.method for s in old], [s.method for s in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for seen in old[i1:i2]:
            rows.append({"status": "missing", "kind": kind, "method": seen.method, "seq": seen.seq, "during": during})
        for seen in new[j1:j2]:
            rows.append({"status": "new", "kind": kind, "method": seen.method, "new_seq": seen.seq, "during": during})
    return rows


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    tally = Counter(r["status"] for r in rows)
    return {status: tally[status] for status in STATUSES if tally[status]}


def summary_text(report: dict[str, Any]) -> str:
    """ "9 requests: 8 same, 1 changed" (and the notifications' rows)."""
    tally = report.get("counts") or {}
    parts = ", ".join(f"{n} {status}" for status, n in tally.items())
    requests = report.get("requests", 0)
    return f"{requests} request{'s' if requests != 1 else ''} replayed" + (f": {parts}" if parts else "")


class RecordedAnswers:
    """The recording's answers to the server's requests, each used once, in order. A request
    matches an answer by method and params with only the default ignore rules (ids, `_meta`,
    progress tokens): a server's own rules say what may differ in its responses, and applied
    here one like `/params/*` would answer any request of a method with what another got."""

    def __init__(self, answers: list[ClientAnswer]) -> None:
        self.unused = list(answers)
        self.rules = diff.rules()
        self.used = 0

    def take(self, method: str, params: Any) -> ClientAnswer | None:
        for i, answer in enumerate(self.unused):
            if answer.method == method and not diff.diff(
                {"params": answer.params}, {"params": params}, self.rules, max_changes=1
            ):
                self.used += 1
                return self.unused.pop(i)
        return None


class Replayer:
    """Runs one recording against one client; `answer_first` answers the server's requests
    from the recording (the page's feature and the CLI's responder call it first)."""

    def __init__(
        self,
        rec: Recording,
        *,
        tap: Tap,
        ignore: list[str] | tuple[str, ...] = (),
        secrets: Secrets = lambda: NO_SECRETS,
    ) -> None:
        self.recording = rec
        self.tap = tap
        self.ignore = list(ignore)
        self.rules = diff.rules(self.ignore)
        self.secrets = secrets
        self.answers = RecordedAnswers(rec.answers)
        self.rows: list[dict[str, Any]] = []
        self.state = "waiting"  # waiting | running | done | stopped
        self.aborted = ""  # why the replay stopped before its end
        self.unsolicited = 0
        self._timed_old: Counter[str] = Counter()  # TIMED notifications during the requests, then and now
        self._timed_new: Counter[str] = Counter()
        self._current: _Run | None = None
        self._sent: dict[int, _Run] = {}  # replayed request events -> their run
        self._task_ids: dict[str, str] = {}
        self._counter = itertools.count()
        self._taking = asyncio.Lock()
        tap.subscribe(self._on_event)

    # The server's requests ----------------------------------------------------------

    async def answer_first(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded answer when the request matches one (raises JsonRpcError for a recorded
        error answer); None when it does not: whoever answers otherwise is asked."""
        async with self._taking:  # (each recorded answer used once: one lookup at a time)
            answer = await asyncio.to_thread(self.answers.take, method, params)
        if answer is None:
            return None
        self.tap.note(
            "info", f"{method} answered from the recording (as at event {answer.seq})", replay_answer=answer.seq
        )
        if answer.error is not None:
            raise JsonRpcError.from_error(answer.error)
        return answer.result if isinstance(answer.result, dict) else {}

    def responder(self, fallback: Responder) -> Responder:
        """A responder answering from the recording first, then `fallback`; it declares what the
        recorded client declared, and what `fallback` can answer."""
        return _RecordedResponder(self, fallback)

    # What the tap sees -------------------------------------------------------------

    def _on_event(self, event: TranscriptEvent) -> None:
        if self.state != "running":
            return
        message = event.message
        if event.dir == "send":
            run = _STEP.get()
            if run is not None and isinstance(message, dict) and "method" in message and "id" in message:
                self._sent[event.seq] = run
                if run.seq is None:
                    run.seq = event.seq
            return
        if event.dir != "recv":
            return
        if isinstance(event.reply_to, int) and event.reply_to in self._sent:
            run = self._sent[event.reply_to]
            run.response_seq, run.response_raw = event.seq, self.secrets().cut(event.raw or "", RAW_KEPT)
            result = message.get("result") if isinstance(message, dict) else None
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                run.requests += input_requests(event.seq, result.get("inputRequests"))
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return
        current = self._current
        if current is None:
            self.unsolicited += 1
        elif "id" in message:
            current.requests.append(Seen(event.seq, message["method"]))
        else:
            current.notifications.append(Seen(event.seq, message["method"]))

    # The replay ---------------------------------------------------------------------

    async def run(self, client: McpClient, on_row: RowListener | None = None) -> dict[str, Any]:
        """Replay every step; return the report (`rows`, `counts`, ...)."""
        self.state = "running"
        alongside: list[tuple[_Run, asyncio.Task[None]]] = []
        try:
            for step in self.recording.steps:
                if client.closed:
                    self.aborted = f"the connection closed: {client.close_reason or 'closed'}"
                    break
                if isinstance(step, Notify):
                    await self._notify(client, step)
                    continue
                run = _Run(step)
                if not step.answered:
                    alongside.append((run, asyncio.get_running_loop().create_task(self._alongside(client, run))))
                    continue
                self._current = run
                try:
                    await self._perform(client, run)
                finally:
                    self._current = None
                await self._emit(await asyncio.to_thread(self._rows, run), on_row)
            for run, task in alongside:
                if run.step.cancel_after is None and not task.done():
                    run.planned_cancel = True
                    task.cancel()
                await asyncio.wait({task})
                await self._emit(await asyncio.to_thread(self._rows, run), on_row)
            await self._emit(self._timed_rows(), on_row)
            self.state = "stopped" if self.aborted else "done"
        finally:
            for _, task in alongside:
                task.cancel()
            if self.state == "running":
                self.state = "stopped"
        return self.report()

    async def _notify(self, client: McpClient, step: Notify) -> None:
        try:
            await client.notify(step.method, step.params if isinstance(step.params, dict) else None)
        except TransportError as exc:
            self.tap.note("error", f"replay: {step.method} (event {step.seq}) not sent: {exc}")

    async def _alongside(self, client: McpClient, run: _Run) -> None:
        """A request that got no response in the recording: sent, and cancelled after as long
        as it was then (bounded by the request timeout). One never cancelled (an open
        `subscriptions/listen`, a call still hanging when the session ended) has no timeout:
        it runs until the replay ends, as it ran until the recording did."""
        cancel_after = run.step.cancel_after
        task = asyncio.current_task()
        assert task is not None
        handle = None
        if cancel_after is not None:

            def cancel() -> None:
                run.planned_cancel = True
                task.cancel()

            handle = asyncio.get_running_loop().call_later(min(cancel_after, client.timeout), cancel)
        try:
            await self._perform(client, run, timeout=None if cancel_after is not None else math.inf)
        except asyncio.CancelledError:
            if not run.planned_cancel:
                raise
            task.uncancel()
            run.outcome, run.message = "none", None
        finally:
            if handle is not None:
                handle.cancel()

    async def _perform(self, client: McpClient, run: _Run, timeout: float | None = None) -> None:
        step = run.step
        params = self._renumbered(step.params)
        token = _STEP.set(run)
        try:
            result = await client.request(
                step.method,
                params if isinstance(params, dict) else None,
                timeout=timeout,
                on_progress=ignore_progress if step.progress else None,
            )
            run.message = {"result": result}
        except JsonRpcError as exc:
            run.message = {"error": exc.to_error()}
        except RequestTimeout as exc:
            run.failure = f"timed out: {exc}"
        except TransportError as exc:
            run.failure = f"connection lost: {exc}"
            if client.closed:
                self.aborted = f"the connection closed: {client.close_reason or exc}"
        except ProtocolError as exc:
            run.failure = str(exc)
        finally:
            _STEP.reset(token)
        run.outcome = outcome_of(run.message) if run.message is not None else ("failed" if run.failure else "none")
        self._learn_task_id(step, run)

    def _renumbered(self, params: Any) -> Any:
        """Task ids the server issued in the recording, as it issued them now."""
        if not self._task_ids or not isinstance(params, dict):
            return params
        return {k: (self._task_ids.get(v, v) if k == "taskId" and isinstance(v, str) else v) for k, v in params.items()}

    def _learn_task_id(self, step: Exchange, run: _Run) -> None:
        old = (step.response or {}).get("result")
        new = (run.message or {}).get("result")
        old_task = old.get("task") if isinstance(old, dict) else None
        new_task = new.get("task") if isinstance(new, dict) else None
        if isinstance(old_task, dict) and isinstance(new_task, dict):
            before, after = old_task.get("taskId"), new_task.get("taskId")
            if isinstance(before, str) and isinstance(after, str):
                self._task_ids[before] = after

    # Rows ---------------------------------------------------------------------------

    def _rows(self, run: _Run) -> list[dict[str, Any]]:
        step = run.step
        status, changes, complete, detail = compare_response(
            step.response,
            run.message,
            rules=self.rules,
            old_truncated=step.response_truncated,
            new_failure=run.failure,
            secrets=self.secrets(),
        )
        row: dict[str, Any] = {
            "status": status,
            "kind": "request",
            "method": step.method,
            "name": step.name,
            "seq": step.seq,
            "new_seq": run.seq,
            "old_response_seq": step.response_seq,
            "new_response_seq": run.response_seq,
            "changes": changes,
        }
        if not complete:
            row["incomplete"] = True
        if sent_masked(step.params):
            detail = f"{detail}; {MASKED_SENT}" if detail else MASKED_SENT
        if detail:
            row["detail"] = detail
        if run.failure:
            row["failure"] = run.failure
        if step.response_truncated:
            row["old_truncated"] = True
        if status != "same":
            row["old_raw"], row["new_raw"] = step.response_raw, run.response_raw
        during = {"method": step.method, "name": step.name, "seq": step.seq}
        self._timed_old.update(s.method for s in step.notifications if s.method in TIMED)
        self._timed_new.update(s.method for s in run.notifications if s.method in TIMED)
        return [
            row,
            *sequence_rows(
                "notification",
                [s for s in step.notifications if s.method not in TIMED],
                [s for s in run.notifications if s.method not in TIMED],
                during,
            ),
            *sequence_rows("server request", step.requests, run.requests, during),
        ]

    def _timed_rows(self) -> list[dict[str, Any]]:
        """The TIMED notifications over the whole replay: a row for each method whose count differs."""
        rows = []
        for method in sorted(self._timed_old.keys() | self._timed_new.keys()):
            before, after = self._timed_old[method], self._timed_new[method]
            if before != after:
                rows.append(
                    {
                        "status": "new" if after > before else "missing",
                        "kind": "notification",
                        "method": method,
                        "during": {"method": "the whole replay"},
                        "detail": f"{abs(after - before)} {'more' if after > before else 'fewer'} than recorded "
                        f"({before} then, {after} now) over the whole replay: when it comes depends "
                        "on timing, so it is compared as a count, not during a request",
                    }
                )
        return rows

    async def _emit(self, rows: list[dict[str, Any]], on_row: RowListener | None) -> None:
        for row in rows:
            row["n"] = next(self._counter)
            self.rows.append(row)
            self.tap.note(
                "diff",
                row_text(row),
                status=row["status"],
                method=row["method"],
                seq=row.get("seq"),
                changes=row.get("changes", []),
                row_kind=row["kind"],
                new_seq=row.get("new_seq"),
            )
            if on_row is not None:
                await on_row(row)

    def report(self) -> dict[str, Any]:
        """The Differences as saved (JSON): every row, their counts, and what was not compared."""
        return {
            "state": self.state,
            "rows": self.rows,
            "counts": counts(self.rows),
            "requests": sum(1 for r in self.rows if r["kind"] == "request"),
            "planned": len(self.recording.exchanges),
            "ignore": self.ignore,
            "answered_from_recording": self.answers.used,
            "skipped": self.recording.skipped,
            "unsolicited": {"recorded": self.recording.unsolicited, "replayed": self.unsolicited},
            "aborted": self.aborted,
        }

    @property
    def differs(self) -> bool:
        return any(r["status"] != "same" for r in self.rows)


# A recording read from a masked export (or a captured session, whose secrets a share masks) holds
# the mask where a secret was: the request is sent as recorded, and its row says so.
MASKED_SENT = f"sent with a masked value ({MASK}) as recorded: the server did not get the original"


def sent_masked(params: Any) -> bool:
    """Whether a recorded request's params hold a masked value."""
    try:
        return MASK in jsontext.dumps(params)
    except (ValueError, TypeError, RecursionError):
        return False


def row_text(row: dict[str, Any]) -> str:
    """One line for a row: status, method, what it is about, where it was."""
    name = f" {row['name']}" if row.get("name") else ""
    where = f" (event {row['seq']})" if row.get("seq") is not None else ""
    if row["kind"] != "request":
        during = row.get("during") or {}
        what = f"{row['kind']} {row['method']}"
        where = (
            f" (event {row['seq']})"
            if row.get("seq") is not None
            else f" (replay event {row['new_seq']})"
            if row.get("new_seq") is not None
            else ""
        )
        return (
            f"{row['status']}: {what}{where} during {during.get('method', '')}"
            f"{' ' + during['name'] if during.get('name') else ''}"
            + (f": {row['detail']}" if row.get("detail") else "")
        )
    text = f"{row['status']}: {row['method']}{name}{where}"
    if row.get("detail") and (row["status"] != "same" or MASKED_SENT in row["detail"]):
        text += f": {row['detail']}"
    return text


class _RecordedResponder:
    def __init__(self, replayer: Replayer, fallback: Responder) -> None:
        self.replayer = replayer
        self.fallback = fallback

    def capabilities(self) -> dict[str, Any]:
        return {**self.replayer.recording.capabilities, **self.fallback.capabilities()}

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        recorded = await self.replayer.answer_first(method, params)
        if recorded is not None:
            return recorded
        return await self.fallback.answer(method, params)


__all__ = ["Replayer", "RecordedAnswers", "compare_response", "request_name", "row_text", "summary_text"]
