"""A side feature of a live session: one module that plugs in, the way a django-debug-toolbar
panel does. The worker owns the connection and the calls; the consumer owns the tab; neither
names a feature. A feature declares what it takes and gives:

- **page side** (the consumer's process; class attributes and classmethods, no instance):
  the page `actions` it takes and how each becomes a worker command (`command()`), how its
  events become fragments for one tab (`fragments()`), the static markup it adds to the session
  page (`head_template`, `panel_template`, `region_template`, with `page_context()`) and to share
  pages (`share_template`, with `share_context()`), its `stylesheets` and `scripts`, and its
  own pages (`get_urls()`: routes to its views, next to it, as a debug-toolbar panel's);
- **worker side** (an instance per session, given a `SessionContext`): the commands it handles
  (its actions, plus `commands` sent by other pages such as the OAuth callback), the server
  notifications it listens to, the server requests it answers (`server_requests`, with the
  client capabilities that declares), the events it publishes, and what a reloading tab needs
  (`snapshot()`; a live share viewer: `share_snapshot()`, then what it sends with
  `ctx.publish_shared`; a tab connecting once the session has ended: `ended_fragments()`); with
  `checks_frames`, what it adds to each event before it is saved. A feature with a state line
  (`state_html()`) has it shown at start, in every snapshot and after each of its actions, with
  the panels' error line (`attempt()`).

Register a feature by adding its class to `FEATURES` in `features/__init__.py`. It imports
`sessions.protocol`, `sessions.fragments`, `sessions.http` (its views) and `playground.mcp` —
never `sessions.live` (the worker, the sockets) nor `sessions.views` (tests/project checks it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from django.template.loader import render_to_string
from django.urls import URLPattern

from playground.mcp.auth import OAuth
from playground.mcp.client import McpClient, RequestTimeout
from playground.mcp.events import TranscriptEvent
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.secrets import Redactor
from playground.mcp.transports.base import TransportError

from ..fragments.html import oob
from ..protocol import Command, FeatureEvent, Outcome
from .context import SessionContext, TabContext

if TYPE_CHECKING:
    from playground.registry.models import Server
    from playground.transcripts.models import Session

ALL = "*"  # `notifications = ALL`: every notification but progress (the calls have those)


class Feature:
    name: ClassVar[str]
    actions: ClassVar[frozenset[str]] = frozenset()
    commands: ClassVar[frozenset[str]] = frozenset()
    notifications: ClassVar[frozenset[str] | str] = frozenset()
    ignored_notifications: ClassVar[frozenset[str]] = frozenset()  # with ALL: but these
    server_requests: ClassVar[frozenset[str]] = frozenset()
    answers_first: ClassVar[bool] = False  # sees every server request first (`answer_first`)
    checks_frames: ClassVar[bool] = False  # `check_frames` sees every batch of events before it is saved
    head_template: ClassVar[str | None] = None
    panel_template: ClassVar[str | None] = None
    # A region of the work column, above the workspace (a replay's Differences, a check's report).
    region_template: ClassVar[str | None] = None
    # What a share page shows of this feature (read-only, redacted): rendered with `share_context`.
    share_template: ClassVar[str | None] = None
    stylesheets: ClassVar[tuple[str, ...]] = ()  # static files the session and share pages link
    scripts: ClassVar[tuple[str, ...]] = ()  # static scripts they load (plain JS, after the page's own)

    # Page side ------------------------------------------------------------------------

    @classmethod
    async def command(cls, action: str, content: dict[str, Any], tab: TabContext) -> Command | None:
        """The worker command for one of `actions` (None: nothing to send). The page's values are
        untrusted: check and convert them here."""
        return None

    @classmethod
    def fragments(cls, event: dict[str, Any], tab: TabContext) -> list[str]:
        """One event of this feature as fragments for one tab. By default the event carries its
        HTML, rendered once by the worker for every tab."""
        html = event.get("html")
        return [html] if isinstance(html, str) else []

    @classmethod
    def page_context(cls, session: Session) -> dict[str, Any]:
        """What `head_template` and `panel_template` need on the session page (keys are shared
        with the page's context: prefix them with the feature's name when in doubt)."""
        return {}

    @classmethod
    def share_context(cls, session: Session, redact: Redactor, token: str) -> dict[str, Any] | None:
        """What `share_template` needs on the share page `token` of `session`, every server value
        masked by `redact` (the share's redactor); None: this feature shows nothing there."""
        return None

    @classmethod
    def ended_fragments(cls, session: Session) -> list[str]:
        """This feature's part of the session page as saved, for a tab that connects once the
        session has ended: its page may have been rendered while the session ran, and no worker
        is left to answer the tab's sync (a check that finished as the page loaded stayed
        "Running…")."""
        return []

    @classmethod
    def get_urls(cls) -> list[URLPattern]:
        """The routes of this feature's own pages, in the `sessions` namespace (sessions/urls.py
        adds every feature's): its views live next to it, a feature with pages being a package."""
        return []

    @classmethod
    def prepare(cls, server: Server, **hints: Any) -> dict[str, Any]:
        """Per-session options, read when a session starts (sync: may use the database); the
        instance gets them as `self.options`. `secrets`: values its pages must mask from the
        start. `hints`: what the starting page knows (`callback_url`)."""
        return {}

    # Worker side ----------------------------------------------------------------------

    def __init__(self, ctx: SessionContext, options: dict[str, Any] | None = None) -> None:
        self.ctx = ctx
        self.options = options or {}
        self.error = ""  # why this feature's last action failed (the panels' error line)
        self._state_due = False

    async def publish(self, event: dict[str, Any]) -> None:
        await self.ctx.publish(self.name, event)

    # The state line ------------------------------------------------------------------

    def state_html(self) -> str | None:
        """This feature's state as a fragment (its panel's line), or None when it shows none."""
        return None

    def state(self, *, outcome: bool = False) -> dict[str, Any] | None:
        """The event showing the state; with `outcome` (an action just ran), the panels' error
        line too, cleared when the action succeeded."""
        html = self.state_html()
        if html is None:
            return None
        return {"html": html + error_fragment(self.error) if outcome or self.error else html}

    async def publish_state(self, *, outcome: bool = False) -> None:
        state = self.state(outcome=outcome)
        if state is not None:
            await self.publish(state)

    def publish_state_soon(self, delay: float) -> None:
        """Publish the state once within `delay` seconds, however many changes come meanwhile
        (a flood updates a panel a few times a second, not once a message)."""
        if not self._state_due:
            self._state_due = True
            self.ctx.spawn(f"{self.name}-state", self._publish_state_after(delay))

    async def _publish_state_after(self, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
        finally:
            self._state_due = False
        await self.publish_state()

    async def attempt(self, label: str, action: Callable[[McpClient], Awaitable[Any]]) -> bool:
        """Run one of this feature's requests; False when not connected (nothing was sent).
        A failure becomes `error` (shown as "<label>: <why>"); success clears it."""
        client = self.ctx.client
        if client is None or client.closed:
            return False
        self.error = ""
        try:
            await action(client)
        except JsonRpcError as exc:
            self.error = f"{label}: JSON-RPC error {exc.code}: {exc.message}"
        except (RequestTimeout, TransportError) as exc:
            self.error = f"{label}: {exc}"
        return True

    def event(self, event: dict[str, Any]) -> FeatureEvent:
        """`event` as the group carries it (for snapshots)."""
        return {"type": "session.feature", "feature": self.name, "event": event}

    def client_auth(self) -> OAuth | None:
        """Authorization for the connection (HTTP servers), if this feature provides it."""
        return None

    def capabilities(self) -> dict[str, Any]:
        """Client capabilities this feature answers for (declared in `initialize` or `_meta`)."""
        return {}

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result for one of `server_requests`; raise JsonRpcError to answer with an error."""
        raise NotImplementedError(method)

    async def answer_first(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """For a feature with `answers_first`: the result for any server request before the
        feature that declared it is asked (a replay answers from its recording); None: it is asked."""
        return None

    async def start(self) -> None:
        """The session is connected and its lists are shown: show the state as it now is."""
        await self.publish_state()

    async def stop(self) -> None:
        """The session is ending."""

    def busy(self) -> bool:
        """Whether the session is at work on its own, nobody watching (a replay, a server check
        running): then it is not idle, and no idle rule ends it (live/workers.end_idle)."""
        return False

    async def handle(self, command: Command) -> None:
        """One of this feature's commands (its actions, or `commands`). It runs in this
        feature's lane, beside the worker's command loop (live/lanes.py): it may wait on the
        server, but this feature's later commands wait for it — spawn what may wait long."""

    async def check_frames(self, events: list[TranscriptEvent]) -> None:
        """A batch of the transcript's events, before their rows are made and saved (with
        `checks_frames`): what it sets on them is saved and shown with them. Batches come in
        order, one at a time or two overlapping; heavy work goes off the event loop."""

    def on_notification(self, message: dict[str, Any]) -> None:
        """A server notification this feature listens to (runs in the reader: keep it cheap)."""

    def on_input_required(self, method: str, round_no: int, result: dict[str, Any]) -> None:
        """An `input_required` round of a call (runs in the call's own task)."""

    def on_call_end(self, call_id: str, outcome: Outcome) -> None:
        """A call has its outcome, about to be shown: add to it."""

    def on_catalogue(self) -> None:
        """The server's lists were fetched again (`ctx.catalogue`) and shown (runs in the
        worker's loop: spawn anything slow)."""

    def snapshot(self) -> list[FeatureEvent]:
        """The events a (re)connecting tab needs to show this feature's state."""
        state = self.state()
        return [self.event(state)] if state is not None else []

    def share_snapshot(self, redact: Redactor) -> list[dict[str, Any]]:
        """The events a live share viewer needs when it joins, masked by `redact`: only a feature
        that shows share viewers its progress (`ctx.publish_shared`) has any."""
        return []


def render(template: str, context: dict[str, Any]) -> str:
    return render_to_string(template, context)


def error_fragment(text: str) -> str:
    """The panels' error line: the last panel action that failed (empty clears it)."""
    return oob("panel-error", "innerHTML", render("sessions/features/_error.html", {"error": text}))
