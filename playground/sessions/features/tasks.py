"""Task cards (2025-11-25 `tasks`): a task-augmented tool call returns a task, and its card
follows it on its own, as the spec asks a requestor to: `tasks/get` at the server's
`pollInterval` (within POLL_FLOOR..POLL_CEILING), updated at once by `notifications/tasks/status`.
When the task needs input (`input_required`) its `tasks/result` is called at once, which is
where the server's questions arrive (the Server request card shows them); when it ends, its
result is fetched too. Polling runs here, in the worker, and stops at a terminal status, when
the session ends, and when the person dismisses the card."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from dataclasses import dataclass, field
from typing import Any

from playground.mcp.client import RequestTimeout
from playground.mcp.jsonrpc import INVALID_PARAMS, JsonRpcError
from playground.mcp.transports.base import TransportError

from ..fragments.html import oob
from ..fragments.result import TERMINAL_TASK_STATES, describe_task
from ..protocol import CURRENT_CALL, Command, FeatureEvent, Outcome
from .base import Feature, render
from .context import SessionContext, TabContext

POLL_DEFAULT = 1.0  # seconds between polls when the server suggests none
POLL_FLOOR = 0.5  # a server's pollInterval below this is not honoured (nor above the ceiling)
POLL_CEILING = 60.0
MAX_FAILURES = 3  # polls in a row that failed before the card stops polling
MAX_AUTO_RESULTS = 3  # tasks/result calls the card makes by itself for one task
MAX_CARDS = 20  # cards followed at once; the oldest goes when another comes
FETCH_AT = frozenset({"input_required", "completed", "failed"})


def poll_seconds(poll_interval: Any) -> float:
    """The server's `pollInterval` (milliseconds) as the card's pace, within the floor and ceiling."""
    if isinstance(poll_interval, bool) or not isinstance(poll_interval, (int, float)) or poll_interval != poll_interval:
        return POLL_DEFAULT
    # Clamped before dividing: a server's integer may have hundreds of digits (no float holds it).
    return min(POLL_CEILING * 1000, max(POLL_FLOOR * 1000, poll_interval)) / 1000


@dataclass
class Followed:
    key: str  # the card's own id (a task id is the server's: any text)
    task_id: str
    call_id: str  # the tools/call that created it
    tool: str
    task: dict[str, Any]  # the Task as last heard of
    error: str = ""
    stopped: str = ""  # why polling stopped, once it has
    result_call: str | None = None  # a tasks/result in flight (ours or the page's)
    result_fetched: bool = False
    auto_results: int = 0
    polls: int = 0
    polling: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def status(self) -> str:
        return str(self.task.get("status") or "")

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_TASK_STATES


class Tasks(Feature):
    name = "tasks"
    actions = frozenset({"task_dismiss", "task_poll"})
    notifications = frozenset({"notifications/tasks/status"})

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        key = str(content.get("key") or "")
        return {"command": action, "key": key} if key else None

    @classmethod
    def fragments(cls, event: dict[str, Any], tab: TabContext) -> list[str]:
        card = "task:" + event["key"]
        if event.get("gone"):
            tab.forget(card)
            return [oob(f"task-{event['key']}", "delete")]
        if tab.first_time(card):
            return [oob("task-cards", "beforeend", event["html"])]
        return [oob(f"task-{event['key']}", "outerHTML", event["html"])]

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.followed: dict[str, Followed] = {}  # by card key, oldest first
        self._keys = itertools.count(1)

    def _by_task(self, task_id: Any) -> Followed | None:
        return next((f for f in self.followed.values() if f.task_id == task_id), None)

    # What starts and feeds a card ------------------------------------------------------

    def on_call_end(self, call_id: str, outcome: Outcome) -> None:
        result = outcome.get("result")
        command = outcome.get("command")
        if command == "call_tool" and isinstance(result, dict) and describe_task(result.get("task")):
            self._follow(call_id, str(outcome.get("name") or ""), result["task"])
        elif command in ("task_get", "task_cancel") and isinstance(result, dict):
            followed = self._by_task(result.get("taskId"))
            if followed is not None:
                self._heard(followed, result)
        elif command == "task_result":
            followed = self._by_task(outcome.get("name"))
            if followed is not None and followed.result_call in (call_id, None):
                followed.result_call = None
                error = outcome.get("error") or {}
                # A JSON-RPC error is the task's own outcome; a timeout or a cancel fetched nothing.
                followed.result_fetched = not error or "code" in error
                followed.wake.set()
                self._show(followed)

    def on_notification(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        followed = self._by_task(params.get("taskId")) if isinstance(params, dict) else None
        if followed is not None:
            self._heard(followed, params)  # type: ignore[arg-type]

    def _follow(self, call_id: str, tool: str, task: dict[str, Any]) -> None:
        while len(self.followed) >= MAX_CARDS:
            self._forget(next(iter(self.followed)))
        followed = Followed(
            key=f"t{next(self._keys)}", task_id=task["taskId"], call_id=call_id, tool=tool, task=dict(task)
        )
        self.followed[followed.key] = followed
        self._heard(followed, task)
        self._start_polling(followed)

    def _heard(self, followed: Followed, task: dict[str, Any]) -> None:
        """The task as the server now tells it (a poll, a notification, a cancel's answer)."""
        status = task.get("status")
        # A terminal status is final (the spec): a poll answered from before it (after the
        # server's notification of it) must not bring the task back to working.
        if isinstance(status, str) and status and (status in TERMINAL_TASK_STATES or not followed.terminal):
            followed.task = {**followed.task, **{k: v for k, v in task.items() if k != "_meta"}}
        if followed.terminal:
            followed.stopped = followed.stopped or f"the task is {followed.status}"
            followed.wake.set()
        self._fetch_if_due(followed)
        self._show(followed)

    def _fetch_if_due(self, followed: Followed) -> None:
        """`input_required`: call tasks/result now (its stream brings the server's questions);
        completed or failed: fetch the result, once."""
        if (
            followed.status in FETCH_AT
            and followed.result_call is None
            and not followed.result_fetched
            and followed.auto_results < MAX_AUTO_RESULTS
            and followed.key in self.followed
        ):
            followed.auto_results += 1
            command: Command = {"command": "task_result", "task_id": followed.task_id, "name": followed.task_id}
            if followed.status == "input_required":
                # tasks/result answers once the task has ended, however long that takes; the card
                # keeps polling meanwhile, and the call can be cancelled.
                command["timeout"] = float("inf")
            followed.result_call = self.ctx.call(command)

    # Polling -------------------------------------------------------------------------------

    def _start_polling(self, followed: Followed) -> None:
        if not followed.polling and not followed.terminal:
            followed.polling, followed.stopped = True, ""
            self.ctx.spawn(f"task-{followed.key}", self._poll(followed))

    async def _poll(self, followed: Followed) -> None:
        # Started as the call that created the task ended, in its context: a server request
        # during a poll is not that call's (its card would say its timeout waits for the answer).
        CURRENT_CALL.set(None)
        failures = 0
        try:
            while not followed.terminal and followed.key in self.followed:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(poll_seconds(followed.task.get("pollInterval"))):
                        await followed.wake.wait()
                followed.wake.clear()
                if followed.terminal or followed.key not in self.followed:
                    break
                outcome = await self._poll_once(followed)
                if outcome == "ok":
                    failures = 0
                    continue
                failures += 1
                if failures >= MAX_FAILURES or outcome == "gone":
                    followed.stopped = f"polling stopped after {failures} failed poll{'s' * (failures > 1)}"
                    self._show(followed)
                    break
                self._show(followed)
        finally:
            followed.polling = False

    async def _poll_once(self, followed: Followed) -> str:
        """One `tasks/get`: "ok", "failed" (the card says why) or "gone" (no such task, any more)."""
        client = self.ctx.client
        if client is None or client.closed:
            followed.error = "tasks/get: not connected"
            return "gone"
        try:
            task = await client.request("tasks/get", {"taskId": followed.task_id})
        except JsonRpcError as exc:
            followed.error = f"tasks/get: JSON-RPC error {exc.code}: {exc.message}"
            return "gone" if exc.code == INVALID_PARAMS else "failed"
        except (RequestTimeout, TransportError) as exc:
            followed.error = f"tasks/get: {exc}"
            return "failed"
        followed.error = ""
        followed.polls += 1
        if isinstance(task, dict):
            self._heard(followed, task)
        return "ok"

    # The card -------------------------------------------------------------------------------

    def _card(self, followed: Followed) -> dict[str, Any]:
        task = describe_task(followed.task) or {
            "id": followed.task_id,
            "status": followed.status,
            "message": "",
            "ttl": None,
            "poll": None,
            "created": "",
            "terminal": False,
        }
        html = render(
            "sessions/features/task_card.html",
            {
                "f": followed,
                "task": task,
                "updated": str(followed.task.get("lastUpdatedAt") or ""),
                "every": f"{poll_seconds(followed.task.get('pollInterval')):g}",
                "fetching": followed.result_call is not None,
            },
        )
        return {"key": followed.key, "html": html}

    def _show(self, followed: Followed) -> None:
        if followed.key in self.followed:
            self.ctx.spawn(f"task-{followed.key}-card", self.publish(self._card(followed)))

    def _forget(self, key: str) -> None:
        followed = self.followed.pop(key, None)
        if followed is not None:
            followed.wake.set()  # its poller sees it gone and ends
            self.ctx.spawn(f"task-{key}-gone", self.publish({"key": key, "gone": True}))

    async def handle(self, command: Command) -> None:
        key = str(command.get("key") or "")
        followed = self.followed.get(key)
        if followed is None:
            return
        if command.get("command") == "task_dismiss":
            self._forget(key)
        elif followed.polling:  # task_poll: now, not at the next beat
            followed.wake.set()
        elif followed.terminal:  # a last look (its ttl may have run out), in a task of
            self.ctx.spawn(f"task-{key}-look", self._look(followed))  # its own: it waits on the server
        else:  # polling had stopped after failures: start again
            self._start_polling(followed)
            followed.wake.set()

    async def _look(self, followed: Followed) -> None:
        await self._poll_once(followed)
        self._show(followed)

    def snapshot(self) -> list[FeatureEvent]:
        return [self.event(self._card(f)) for f in self.followed.values()]
