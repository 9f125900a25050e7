"""MCP Apps: a tool's UI rendered below its Result, and the app <-> host bridge as a lane of the
transcript.

- The client declares the extension (`capabilities()`, the MIME types it renders) unless the
  server's apps are off (`Server.apps_enabled`), the session is a replay, or no sandbox origin is
  configured (`PLAYGROUND_APPS_SANDBOX`).
- A call of a tool with a UI, made from its form, gets `outcome["app"]` (`on_call_end`): the Result
  shows the app's place, and the page (static/apps-host.js) asks for it (`app_open`): the
  `ui://` resource is read through this session's client (`resources/read`, recorded like any
  request) and sent to that tab only, in pieces (daphne sends no websocket message over 1 MiB).
- The page renders it on the sandbox origin and speaks the bridge; every bridge message, both
  ways, comes here (`app_frame`) and is recorded on a tap of its own, marked `data.connection =
  "app"` (the lane): the schema lint checks it against the extension's schema. The app's
  `tools/call` and `resources/read` are made here, on the session's client (a tool the server did
  not list, or whose `visibility` leaves out "app", is refused with a note), and answered to the
  asking tab.
- Bounded: at most RATE bridge messages a second (BURST at once) are recorded, none over
  MAX_FRAME bytes, at most IN_FLIGHT requests of apps at a time; what is refused is counted and
  said in a note once the flood is over. The page bounds what it takes from the app first.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import html
import itertools
import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from django.conf import settings

from playground.mcp import apps, jsontext
from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.events import Tap
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import TransportError
from playground.token_bucket import TokenBucket

from ..fragments.html import oob
from ..protocol import Command, Outcome, catalogue_item
from .base import Feature
from .context import SessionContext, TabContext

if TYPE_CHECKING:
    from playground.registry.models import Server
    from playground.transcripts.models import Session

RATE = 100.0  # bridge messages recorded a second, per session
BURST = 200.0
MAX_FRAME = 256 * 1024  # bytes of one bridge message (the page drops larger ones first)
MAX_HTML = 2 * 1024 * 1024  # bytes of an app's document
MAX_REPLY = 8 * 1024 * 1024  # characters of one answer to the page (in pieces)
PIECE = 100_000  # characters of one piece (escaped at most 5x, and UTF-8: under daphne's 1 MiB)
IN_FLIGHT = 4  # the apps' requests to the server under way at once, per session
APPS_KEPT = 8  # app instances (frames) whose bridge is followed, per session
CALLS_KEPT = 5  # calls whose app a reloading tab may open again
QUIET = 1.0  # seconds without a refused message: the flood is over, say how it went
PERFORMED = frozenset({"tools/call", "resources/read"})


def sandbox_setting() -> str:
    """`PLAYGROUND_APPS_SANDBOX`: a host name (the sandbox is that name with the page's scheme
    and port) or an origin; empty: apps are off."""
    return str(getattr(settings, "PLAYGROUND_APPS_SANDBOX", "") or "")


class Apps(Feature):
    name = "apps"
    actions = frozenset({"app_open", "app_frame"})
    region_template = "sessions/features/apps_region.html"
    stylesheets = ("apps.css",)
    scripts = ("token-bucket.js", "apps-host.js")

    # Page side ------------------------------------------------------------------------

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        instance = str(content.get("instance") or "")[:64]
        if not instance:
            return None
        command: Command = {"command": action, "key": instance, "reply_channel": tab.channel_name}
        command["call_id"] = str(content.get("call_id") or "")[:64]
        if action == "app_frame":
            direction = content.get("direction")
            if direction not in ("send", "recv", "note"):
                return None
            command["direction"] = direction
            command["frame"] = str(content.get("frame") or "")
            command["perform"] = bool(content.get("perform"))
        return command

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        return {"apps_sandbox": sandbox_setting(), "apps_permissions": json.dumps(apps.PERMISSIONS)}

    @classmethod
    def prepare(cls, server: Server, **hints: Any) -> dict[str, Any]:
        enabled = bool(getattr(server, "apps_enabled", True)) and not hints.get("replay_of") and bool(sandbox_setting())
        return {"enabled": enabled}

    # Worker side ----------------------------------------------------------------------

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        super().__init__(ctx, options)
        self.enabled = bool(self.options.get("enabled"))
        self._calls: OrderedDict[str, dict[str, Any]] = OrderedDict()  # call id -> tool, arguments, result
        self._taps: OrderedDict[str, Tap] = OrderedDict()  # app instance -> its bridge's tap
        self._bucket = TokenBucket(RATE, BURST)
        self._busy = 0
        self._ids = itertools.count(1)
        self.recorded = 0
        self.refused: dict[str, int] = {}  # why -> how many, since the last note
        self._noting = False
        self._last_refused = 0.0

    def capabilities(self) -> dict[str, Any]:
        return apps.capability() if self.enabled else {}

    def on_call_end(self, call_id: str, outcome: Outcome) -> None:
        if not self.enabled or outcome.get("command") != "call_tool" or "result" not in outcome:
            return
        tool = catalogue_item(self.ctx.catalogue, "tools", str(outcome.get("name") or ""))
        ui = apps.tool_ui(tool)
        if ui is None or tool is None:
            return
        outcome["app"] = {"uri": ui.resource_uri}
        self._calls[call_id] = {
            "tool": tool,
            "uri": ui.resource_uri,
            "arguments": outcome.get("arguments") or {},
            "result": outcome.get("result"),
        }
        while len(self._calls) > CALLS_KEPT:
            self._calls.popitem(last=False)

    async def handle(self, command: Command) -> None:
        if not self.enabled:
            return
        if command["command"] == "app_open":
            self.ctx.spawn("app-open", self._open(command))
        else:
            self._frame(command)

    # Opening an app: its resource, read through the session ---------------------------

    async def _open(self, command: Command) -> None:
        instance, channel = command["key"], command.get("reply_channel") or ""
        call = self._calls.get(command.get("call_id") or "")
        reply: dict[str, Any] = {"kind": "open", "instance": instance}
        client = self.ctx.client
        if call is None:
            reply["error"] = "this call's app is no longer known to the session (call the tool again)"
        elif client is None or client.closed:
            reply["error"] = "not connected"
        else:
            try:
                read = call.get("read")
                if read is None:
                    read = call["read"] = await client.read_resource(call["uri"])
                reply.update(self._document(read, call))
            except (JsonRpcError, RequestTimeout, TransportError) as exc:
                reply["error"] = f"resources/read {call['uri']}: {exc}"
        await self._reply(channel, reply)

    def _document(self, read: Any, call: dict[str, Any]) -> dict[str, Any]:
        """The app's document and what the page needs to render it, or why it cannot."""
        contents = read.get("contents") if isinstance(read, dict) else None
        item = next((c for c in contents or [] if isinstance(c, dict) and c.get("uri") == call["uri"]), None)
        if item is None and contents and isinstance(contents[0], dict):
            item = contents[0]
        if item is None:
            return {"error": f"resources/read {call['uri']} returned no contents"}
        mime = str(item.get("mimeType") or "")
        if mime.replace(" ", "").lower() != apps.MIME_TYPE:
            return {"error": f"the resource's MIME type is {mime or 'not given'!r}, not {apps.MIME_TYPE}"}
        text = item.get("text")
        if not isinstance(text, str) and isinstance(item.get("blob"), str):
            try:
                text = base64.b64decode(item["blob"][: MAX_HTML * 2], validate=True).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                return {"error": "the resource's blob is not base64"}
        if not isinstance(text, str):
            return {"error": "the resource has no text"}
        if len(text) > MAX_HTML:
            return {"error": f"the app's document is {len(text):,} characters: over {MAX_HTML:,}"}
        listed = catalogue_item(self.ctx.catalogue, "resources", call["uri"])
        ui = apps.resource_ui(item, listed)
        rejected: list[str] = []
        csp = apps.app_csp(ui.get("csp"), rejected)  # (the server's own: any size, any text)
        return {
            "html": text,
            "csp": csp,
            "csp_rejected": rejected,
            "permissions": apps.requested_permissions(ui.get("permissions")),
            "prefers_border": ui.get("prefersBorder") is True,
            "tool": call["tool"],
            "arguments": call["arguments"],
            "result": call["result"],
        }

    async def _reply(self, channel: str, payload: dict[str, Any]) -> None:
        """`payload` to the tab on `channel`, as JSON in pieces the page puts together."""
        if not channel:
            return
        text = json.dumps(payload, ensure_ascii=False, default=str)
        if len(text) > MAX_REPLY:
            text = json.dumps(
                {**{k: payload[k] for k in ("kind", "instance", "id") if k in payload}, "error": "too large"}
            )
        message = f"m{next(self._ids)}"
        parts = range(0, max(len(text), 1), PIECE)
        for index, start in enumerate(parts):
            piece = html.escape(text[start : start + PIECE], quote=False)
            fragment = f'<pre data-app-message="{message}" data-part="{index}" data-parts="{len(parts)}">{piece}</pre>'
            await self.ctx.reply(channel, self.name, {"html": oob("app-inbox", "beforeend", fragment)})

    # The bridge: recorded, bounded; the app's requests to the server -------------------

    def _allow(self, size: int) -> str | None:
        """Why this bridge message is not recorded (None: it is)."""
        if size > MAX_FRAME:
            return f"over {MAX_FRAME:,} bytes"
        if not self._bucket.take():
            return f"over {RATE:g} a second"
        return None

    def _tap(self, instance: str) -> Tap:
        tap = self._taps.get(instance)
        if tap is None:
            tap = self._taps[instance] = self.ctx.tap.connection(apps.LANE)
            while len(self._taps) > APPS_KEPT:
                self._taps.popitem(last=False)
        else:
            self._taps.move_to_end(instance)
        return tap

    def _frame(self, command: Command) -> None:
        text = command.get("frame") or ""
        instance = command["key"]
        why = self._allow(len(text.encode("utf-8", "replace")))
        if why is not None:
            self._refuse(why)
            if command.get("perform"):  # an answer is owed: say why there is none
                rid = _request_id(text)
                if rid is not None:
                    error = {"code": -32000, "message": f"refused by the playground: {why}"}
                    self.ctx.spawn(
                        "app-reply",
                        self._reply(
                            command.get("reply_channel") or "",
                            {"kind": "reply", "instance": instance, "id": rid, "error": error},
                        ),
                    )
            return
        self.recorded += 1
        tap = self._tap(instance)
        facts = {"app": instance, "call_id": command.get("call_id") or ""}
        if command.get("direction") == "note":
            tap.note("app", text[:2000], **facts)
            return
        _event, message = tap.frame("send" if command.get("direction") == "send" else "recv", text, data=facts)
        if command.get("perform") and command.get("direction") == "recv":
            self._perform(command, message)

    def _perform(self, command: Command, message: Any) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return  # (the page answers a malformed one itself)
        if message.get("method") not in PERFORMED or "id" not in message:
            return
        instance, rid = command["key"], message["id"]
        channel = command.get("reply_channel") or ""
        refusal = self._refusal(message)
        if refusal is not None:
            self._tap(instance).note(
                "app", f"app's {message['method']} refused: {refusal.message}", app=instance, code=refusal.code
            )
            error = {"code": refusal.code, "message": refusal.message}
            self.ctx.spawn(
                "app-reply", self._reply(channel, {"kind": "reply", "instance": instance, "id": rid, "error": error})
            )
            return
        if self._busy >= IN_FLIGHT:
            error = {"code": -32000, "message": f"refused by the playground: over {IN_FLIGHT} requests of apps at once"}
            self._refuse(f"over {IN_FLIGHT} requests at once")
            self.ctx.spawn(
                "app-reply", self._reply(channel, {"kind": "reply", "instance": instance, "id": rid, "error": error})
            )
            return
        self._busy += 1
        self.ctx.spawn("app-request", self._request(channel, instance, rid, message))

    async def _request(self, channel: str, instance: str, rid: Any, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"kind": "reply", "instance": instance, "id": rid}
        try:
            reply["result"] = await self._ask(message)
        except JsonRpcError as exc:
            reply["error"] = {
                "code": exc.code,
                "message": exc.message,
                **({"data": exc.data} if exc.data is not None else {}),
            }
        except (RequestTimeout, TransportError) as exc:
            reply["error"] = {"code": -32000, "message": str(exc) or type(exc).__name__}
        finally:
            self._busy -= 1
        await self._reply(channel, reply)

    async def _ask(self, message: dict[str, Any]) -> Any:
        client: McpClient | None = self.ctx.client
        if client is None or client.closed:
            raise JsonRpcError(-32000, "not connected")
        raw_params = message.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if message["method"] == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise JsonRpcError(-32602, "resources/read needs a uri")
            return await client.read_resource(uri)
        arguments = params.get("arguments")
        return await client.call_tool(str(params.get("name")), arguments if isinstance(arguments, dict) else {})

    def _refusal(self, message: dict[str, Any]) -> JsonRpcError | None:
        """Why the app's request is not made (None: it is): a tools/call the server did not list,
        or whose `_meta.ui.visibility` leaves out "app" (the spec: the host MUST refuse it)."""
        if message["method"] != "tools/call":
            return None
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            return JsonRpcError(-32602, "tools/call needs a tool name")
        tool = catalogue_item(self.ctx.catalogue, "tools", name)
        if tool is None:
            return JsonRpcError(-32601, f"tool {name[:100]!r} is not one the server listed (tools/list)")
        if not apps.app_may_call(tool):
            return JsonRpcError(
                -32601, f'tool {name[:100]!r} is not visible to apps (its _meta.ui.visibility leaves out "app")'
            )
        return None

    def _refuse(self, why: str) -> None:
        self.refused[why] = self.refused.get(why, 0) + 1
        self._last_refused = asyncio.get_running_loop().time()
        if not self._noting:
            self._noting = True
            self.ctx.spawn("app-refused", self._note_when_quiet())

    async def _note_when_quiet(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while (left := self._last_refused + QUIET - loop.time()) > 0:
                await asyncio.sleep(left)
        finally:
            self._noting = False
        self._note()

    def _note(self) -> None:
        if not self.refused:
            return
        counts = ", ".join(f"{n:,} {why}" for why, n in self.refused.items())
        self.ctx.tap.note(
            "app",
            f"app bridge: {sum(self.refused.values()):,} messages not recorded ({counts})",
            refused=dict(self.refused),
            connection=apps.LANE,
        )
        self.refused = {}

    async def stop(self) -> None:
        self._note()


def _request_id(text: str) -> Any:
    try:
        message = jsontext.loads(text)
    except (ValueError, RecursionError):
        return None
    return message.get("id") if isinstance(message, dict) and "method" in message else None
