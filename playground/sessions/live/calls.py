"""A page's call as one component, from the page's action to the Result every tab shows.

1. **Page side** (the tab's process, `CallForms`): each call action of the page (`ACTIONS`) is
   checked and becomes a command for the worker — a tool's form parsed and validated against
   the tool's inputSchema (in the bounded sandbox), a resource template expanded, a prompt's
   arguments, a hand-made frame — or is refused, said in the form's message box.
2. **Worker side** (`Calls`): the worker hands it every command in `CALLS`; each call runs in a
   task of its own (`start`), so nothing waits on the server in the command loop; it is shown in
   flight once it lasts (`INFLIGHT_AFTER`) or reports progress, can be cancelled (`cancel`), and
   its outcome — the result, or whose error it was — is checked against the tool's outputSchema
   and published to every tab (`_publish`), the last few kept for a reloading one (`snapshot`).
3. **The request** each command makes of the client (`request`).

Its fragments (the Result, the in-flight card, the progress bar) are fragments/result.py's.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import uritemplate
from uritemplate.variable import VariableValue

from playground.mcp import jsontext
from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import HttpStatusError, TransportError
from playground.schema import avalidate_arguments
from playground.schemaforms import form_too_large, parse_form

from ..fragments import regions
from ..protocol import CURRENT_CALL, CallError, CallStarted, Catalogue, Command, Outcome, catalogue_item

if TYPE_CHECKING:
    from .worker import SessionWorker

# The page's commands that are calls (a Result each).
CALLS = frozenset({"call_tool", "read_resource", "get_prompt", "ping", "raw", "task_get", "task_result", "task_cancel"})
_TASK_METHODS = {"task_get": "tasks/get", "task_result": "tasks/result", "task_cancel": "tasks/cancel"}
TASK_TTL_MS = 300_000  # lifetime asked for a task-augmented tool call
# A call is shown in flight (spinner, progress bar, "Cancel request") once it has lasted this
# long, or as soon as it reports progress: a card that flashes for a millisecond tells nobody
# anything, and costs a render and a websocket message on the path a person waits on.
INFLIGHT_AFTER = 0.1
RESULTS_KEPT = 5  # outcomes a reloading tab gets (it shows the last)


# 1. Page side: the page's call actions as commands ---------------------------------------


class CallTab(Protocol):
    """The tab a call's form is sent from (live/session_socket.py)."""

    @property
    def catalogue(self) -> Catalogue:
        """The server's lists as this tab last got them."""

    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None:
        """Send one fragment to this tab."""


class CallForms:
    """One tab's call actions: each checked and turned into the worker's command (None: nothing
    is sent, and the form's message box says why), and the message boxes the forms show."""

    def __init__(self, tab: CallTab) -> None:
        self.tab = tab
        self._boxes_shown: set[str] = set()  # message boxes (`_box`) showing something now

    async def simple(self, content: dict[str, Any]) -> Command | None:
        return {"command": str(content["action"])}

    async def read_resource(self, content: dict[str, Any]) -> Command | None:
        return {"command": "read_resource", "uri": str(content["uri"])} if content.get("uri") else None

    async def prompt(self, content: dict[str, Any]) -> Command | None:
        if not content.get("name"):
            return None
        if too_large := form_too_large(content, "args"):
            await self.notice(f"Not sent: {too_large}.")
            return None
        await self.notice("")
        args = {k[len("args.") :]: str(v) for k, v in content.items() if k.startswith("args.") and v != ""}
        return {"command": "get_prompt", "name": str(content["name"]), "arguments": args}

    async def cancel(self, content: dict[str, Any]) -> Command | None:
        return {"command": "cancel", "call_id": str(content["call_id"])} if content.get("call_id") else None

    async def task(self, content: dict[str, Any]) -> Command | None:
        if not content.get("task_id"):
            return None
        return {"command": str(content["action"]), "task_id": str(content["task_id"]), "name": str(content["task_id"])}

    async def tool(self, content: dict[str, Any]) -> Command | None:
        name = str(content.get("name", ""))
        tool = catalogue_item(self.tab.catalogue, "tools", name)
        schema = (tool or {}).get("inputSchema") or {"type": "object"}
        if too_large := form_too_large(content, "args"):
            await self.form_errors([{"path": "", "message": f"Not sent: {too_large}."}])  # even with "send anyway"
            return None
        if content.get("mode") == "json":
            try:
                arguments = json.loads(content.get("arguments_json") or "{}")
            except ValueError as exc:
                await self.form_errors([{"path": "", "message": f"not valid JSON: {exc}"}])
                return None
            problems: list[str] = []
        else:
            arguments, problems = parse_form(schema, content, prefix="args")
        # The schema is the server's: checked in the bounded sandbox, off the event loop.
        errors = [{"path": "", "message": p} for p in problems] + await avalidate_arguments(schema, arguments)
        if errors and not content.get("send_anyway"):
            await self.form_errors(errors)
            return None
        await self.form_errors([])
        timeout = content.get("timeout")
        command: Command = {
            "command": "call_tool",
            "name": name,
            "arguments": arguments,
            "timeout": float(timeout) if timeout not in (None, "") else None,
        }
        if content.get("as_task"):
            command["task"] = {"ttl": TASK_TTL_MS}
        return command

    async def template(self, content: dict[str, Any]) -> Command | None:
        """Expand a resource template (RFC 6570) with the form's variables, then read the URI."""
        template = str(content.get("template") or "")
        if catalogue_item(self.tab.catalogue, "templates", template) is None:
            return None
        if too_large := form_too_large(content, "vars"):
            await self.notice(f"Not read: {too_large}.")
            return None
        await self.notice("")
        variables: dict[str, VariableValue] = {
            k[len("vars.") :]: str(v) for k, v in content.items() if k.startswith("vars.") and v != ""
        }
        return {"command": "read_resource", "uri": uritemplate.expand(template, variables)}

    async def raw(self, content: dict[str, Any]) -> Command | None:
        """A hand-made message: an exact frame (sent as typed, malformed allowed), or a method with
        params (any JSON value, invalid for the method on purpose if wanted; not JSON at all is
        refused, and says so: the exact frame is the place for broken text)."""
        text = str(content.get("frame") or "")
        if text.strip():
            await self.raw_errors([])
            return {"command": "raw", "frame": text, "notification": bool(content.get("notification"))}
        method = str(content.get("method") or "").strip()
        if not method:
            await self.raw_errors(["Give a method, or an exact frame."])
            return None
        params_text = str(content.get("params") or "").strip()
        try:
            params = json.loads(params_text) if params_text else None
        except ValueError as exc:
            await self.raw_errors(
                [f"params is not valid JSON ({exc}); to send broken JSON on purpose, use the exact frame"]
            )
            return None
        await self.raw_errors([])
        return {"command": "raw", "method": method, "params": params, "notification": bool(content.get("notification"))}

    # The forms' message boxes --------------------------------------------------------------

    async def _box(self, box: str, fragment: Callable[[], str], showing: bool) -> None:
        """One of this tab's message boxes (a form's notice, the raw composer's errors, the tool
        form's errors): sent when it shows something, or to clear what it showed — a request
        that goes through from a clean form costs no websocket message."""
        if showing or box in self._boxes_shown:
            await self.tab.send(text_data=fragment())
        if showing:
            self._boxes_shown.add(box)
        else:
            self._boxes_shown.discard(box)

    async def notice(self, text: str) -> None:
        await self._box("notice", lambda: regions.notice(text), bool(text))

    async def raw_errors(self, errors: list[str]) -> None:
        await self._box("raw", lambda: regions.raw_errors(errors), bool(errors))

    async def form_errors(self, errors: list[dict[str, Any]]) -> None:
        await self._box("form", lambda: regions.form_errors(errors), bool(errors))


Action = Callable[[CallForms, dict[str, Any]], Awaitable[Command | None]]
# The page's call actions -> the command each makes (the session's own and the features' are
# the socket's: live/session_socket.py).
ACTIONS: dict[str, Action] = {
    "call_tool": CallForms.tool,
    "read_resource": CallForms.read_resource,
    "read_template": CallForms.template,
    "get_prompt": CallForms.prompt,
    "ping": CallForms.simple,
    "cancel": CallForms.cancel,
    "raw": CallForms.raw,
    "task_get": CallForms.task,
    "task_result": CallForms.task,
    "task_cancel": CallForms.task,
}


# 2. Worker side: the calls of one session -----------------------------------------------


class Calls:
    """A live session's calls (its worker hands it every command in CALLS, and `cancel`)."""

    def __init__(self, session: SessionWorker) -> None:
        self.session = session
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._ids = itertools.count(1)
        self.results: list[Outcome] = []  # recent outcomes, for a reloading tab
        self.progress: dict[str, dict[str, Any]] = {}
        self.inflight: dict[str, CallStarted] = {}  # the calls under way, for a reloading tab
        self._announcing: dict[str, asyncio.Task[None]] = {}
        self.ended: str | None = None  # why the session ended, once it has

    def start(self, command: str, message: Command, eager: bool = False) -> str:
        """Run one call in a task of its own; its call id (the page's, or a new one). `eager`:
        the task runs at once up to its first wait (its request written), not on the loop's next turn."""
        call_id = message.get("call_id") or f"c{next(self._ids)}"
        task = asyncio.Task(
            self._perform(command, message, call_id), loop=asyncio.get_running_loop(), eager_start=eager
        )
        self._tasks[call_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(call_id, None))
        return call_id

    async def cancel(self, message: Command) -> None:
        """The `cancel` command: the call's task is cancelled (the client tells the server)."""
        task = self._tasks.get(message.get("call_id", ""))
        if task:
            task.cancel()

    def end(self, reason: str) -> None:
        """The session is ending: calls still waiting get no answer now, and say why."""
        self.ended = reason
        for task in list(self._tasks.values()):
            task.cancel()

    async def _perform(self, command: str, message: Command, call_id: str) -> None:
        client = self.session.client
        outcome: Outcome = {
            "type": "session.result",
            "call_id": call_id,
            "command": command,
            "name": message.get("name") or message.get("uri") or message.get("method") or "",
        }
        if command == "call_tool" and isinstance(message.get("arguments"), dict):
            outcome["arguments"] = message["arguments"]
        if client is None or client.closed:
            outcome["error"] = {"message": "not connected"}
            await self._publish(outcome)
            return
        started: CallStarted = {
            "type": "session.call_started",
            "call_id": call_id,
            "command": command,
            "name": outcome["name"],
            "started": time.time(),
        }
        self.inflight[call_id] = started
        announce = asyncio.get_running_loop().call_later(INFLIGHT_AFTER, self._announce, call_id)
        CURRENT_CALL.set(call_id)
        try:
            outcome["result"] = await request(
                client, command, message, lambda params: self._on_progress(call_id, params)
            )
        except JsonRpcError as exc:
            outcome["error"] = {"code": exc.code, "message": exc.message, "data": exc.data}
        except RequestTimeout as exc:
            outcome["error"] = {"message": str(exc), "timeout": True}
        except asyncio.CancelledError:
            if self.ended is not None:
                outcome["error"] = ended_error(self.ended)
            else:
                outcome["error"] = {"message": "cancelled by the user", "cancelled": True}
            announce.cancel()
            await self._publish(outcome)
            raise
        except HttpStatusError as exc:
            outcome["error"] = http_error(exc)
        except TransportError as exc:
            if client.closed:  # the connection ended with the call waiting: the session ends
                outcome["error"] = ended_error(client.close_reason or str(exc))
            else:
                outcome["error"] = {"message": str(exc) or type(exc).__name__, "kind": "transport"}
        except Exception as exc:
            # The client gave up (ProtocolError: too many input rounds...) or a bug: not the server's words.
            outcome["error"] = {"message": str(exc) or type(exc).__name__, "kind": "client"}
        announce.cancel()
        outcome["latency_ms"] = round((time.time() - started["started"]) * 1000, 1)
        await self._publish(outcome)

    def _announce(self, call_id: str) -> None:
        """Show a call in flight on the pages (once)."""
        started = self.inflight.get(call_id)
        if started is not None and not started.get("announced"):
            started["announced"] = True
            self._announcing[call_id] = asyncio.get_running_loop().create_task(self.session.audience.broadcast(started))

    async def _publish(self, outcome: Outcome) -> None:
        session = self.session
        await check_structured(outcome, session.catalogue)  # (still in flight meanwhile)
        started = self.inflight.get(outcome["call_id"])
        outcome["announced"] = bool(started and started.get("announced"))  # the Result removes the card, if any
        announcing = self._announcing.pop(outcome["call_id"], None)
        if announcing is not None:
            await asyncio.shield(announcing)  # the card reaches the group before the Result does
        self.progress.pop(outcome["call_id"], None)
        self.inflight.pop(outcome["call_id"], None)
        session.features.call_ended(outcome["call_id"], outcome)
        self.results = (self.results + [outcome])[-RESULTS_KEPT:]
        await session.audience.broadcast(outcome)

    def _on_progress(self, call_id: str, params: dict[str, Any]) -> None:
        self.progress[call_id] = params
        self._announce(call_id)  # the progress bar is in the in-flight card
        self.session.spawn(
            "progress",
            self.session.audience.broadcast({"type": "session.progress", "call_id": call_id, "progress": params}),
        )

    def snapshot(self) -> tuple[list[Outcome], dict[str, dict[str, Any]], list[CallStarted]]:
        """(results, progress, calls in flight) for a reloading tab, which shows the calls in
        flight: their results must remove them."""
        for started in self.inflight.values():
            started["announced"] = True
        return self.results, self.progress, list(self.inflight.values())


# 3. The request each call makes -----------------------------------------------------------


async def request(
    client: McpClient, command: str, message: Command, on_progress: Callable[[dict[str, Any]], None]
) -> Any:
    """One call's request; its result (or the error it raises)."""
    timeout = message.get("timeout")
    if command == "call_tool" and message.get("task") is not None:
        # Task-augmented (2025-11-25 tasks): the answer is a CreateTaskResult to poll.
        return await client.request(
            "tools/call",
            {"name": message["name"], "arguments": message.get("arguments") or {}, "task": message["task"]},
            timeout=timeout,
            on_progress=on_progress,
        )
    if command == "call_tool":
        return await client.call_tool(
            message["name"], message.get("arguments"), timeout=timeout, on_progress=on_progress
        )
    if command in _TASK_METHODS:
        return await client.request(_TASK_METHODS[command], {"taskId": message["task_id"]}, timeout=timeout)
    if command == "read_resource":
        return await client.read_resource(message["uri"])
    if command == "get_prompt":
        return await client.get_prompt(message["name"], message.get("arguments"))
    if command == "ping":
        return await client.ping()
    # raw: an exact frame, or a method with params
    frame = message.get("frame")
    if frame:
        request_id = raw_request_id(frame) if not message.get("notification") else None
        if request_id is not None:
            # A hand-made request with an id: wait for the response to that id.
            return await client.request_raw(frame, request_id, timeout=timeout)
        await client.send_raw(frame)
        return {"sent": True}
    if message.get("notification"):
        await client.notify(message["method"], message.get("params"))
        return {"sent": True}
    return await client.request(message["method"], message.get("params"), timeout=timeout)


def output_schema(outcome: Outcome, catalogue: Catalogue) -> dict[str, Any] | None:
    """The outputSchema a tool call's structuredContent is checked against, if it has both."""
    result = outcome.get("result")
    if outcome.get("command") != "call_tool" or not isinstance(result, dict) or "structuredContent" not in result:
        return None
    tool = next((t for t in catalogue.get("tools", []) if t.get("name") == outcome.get("name")), None)
    schema = (tool or {}).get("outputSchema")
    return schema if isinstance(schema, dict) else None


async def check_structured(outcome: Outcome, catalogue: Catalogue) -> None:
    """Check the structuredContent against the tool's outputSchema, once, where the call ends
    (`structured_errors` on the outcome), so that no tab validates a server's schema again."""
    schema = output_schema(outcome, catalogue)
    if schema is not None:
        outcome["structured_errors"] = await avalidate_arguments(schema, outcome["result"]["structuredContent"])


def raw_request_id(frame: str) -> Any:
    """The id of a hand-typed frame that is a JSON-RPC request (a string or an integer id), else None."""
    try:
        parsed = jsontext.loads(frame)
    except (ValueError, RecursionError):
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("method"), str) and "id" in parsed:
        rid = parsed["id"]
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return rid
    return None


def ended_error(why: str) -> CallError:
    """A call that got no answer because the session ended (the server stopped, the connection
    closed, the person disconnected), whichever was heard first."""
    return {"message": f"no answer: the session ended ({why})", "kind": "ended"}


def http_error(exc: HttpStatusError) -> CallError:
    """An HTTP error status: the JSON-RPC error in its body if there is one (the server's own code)."""
    body = exc.json if isinstance(exc.json, dict) else None
    error = body.get("error") if body else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return {
            "code": error["code"],
            "message": str(error.get("message", "")),
            "data": error.get("data"),
            "http": exc.status,
        }
    return {"message": str(exc), "kind": "transport", "http": exc.status}
