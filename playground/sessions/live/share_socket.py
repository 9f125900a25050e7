"""A share link's live viewer: the session's transcript and state as they happen, read-only and
redacted, for anyone with the link (no login).

The same replay-then-follow path as the owner's tab (session_socket.py), with three differences
(and only what a feature chooses to show shares: a replay's Differences, as they come):

- **Redacted for a share.** The owner's lines mask only OAuth values; a share masks every
  secret (header and env values too, a replay's source's: `Session.share_redactor()`). The
  worker renders the lines a second time for the share audience (with that redactor, and
  without the owner's controls), into the group `share.<id>`, only while a viewer is
  registered with it (`share_join`). The replay and the state are redacted here, from the database.
- **Read-only.** Nothing a viewer sends is read: `receive` ignores it, and no command but the
  viewer's own registration ever reaches the worker. The socket is Host- and Origin-checked
  like the owner's (playground.security.WebsocketOriginValidator wraps every socket route).
- **Revocable.** Each viewer joins its link's group `sharelink.<id>`; revoking the link sends
  it `share.revoked`, and each viewer's socket is closed (with a code the page does not
  reconnect on) as soon as the message arrives.

A page's first connect tells what its lines hold (`?shown=`, as the owner's page does): while no
event has come since the page was rendered, the replay sends the state and leaves the lines.

Replay-then-follow without a gap: the viewer joins the share group, asks the worker to render
for it, and replays from the database only when the worker answers (`share.follow`): every
line the worker sent before that answer was saved before it, so the replay has it; every line
after comes through the group.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.template.loader import render_to_string
from django.urls import reverse

from playground.transcripts.models import Session, ShareLink

from ..fragments import lines, regions
from ..fragments.html import oob
from ..protocol import Lines, SessionState, ShareFollow, StateEvent, share_group_name, share_link_group_name
from ..transcript_window import shown_param, transcript_window
from .durability import reap_dead_sessions
from .fragment_socket import FragmentSocket
from .watchdog import watch_worker

# How long a viewer waits for the worker's answer before replaying anyway (a worker whose
# process died: the session is then a snapshot).
FOLLOW_WAIT = 3.0
# Close codes the page's htmx does not reconnect on (it reconnects on 1001, 1005, 1006, 1011-1014).
CLOSE_ENDED = 4000
CLOSE_GONE = 4410


def mode(name: str) -> str:
    """The share page's status text: Live, Snapshot or Revoked (its status region stays: the
    change is announced). A page no longer live has nothing to follow: its "Following" goes."""
    text = oob("share-mode", "innerHTML", render_to_string("sessions/_share_mode.html", {"mode": name}))
    return text if name == "live" else text + oob("transcript-follow", "delete")


def shared_state(session: Session, state: SessionState | None = None) -> SessionState:
    """The state a share shows (`state`, or the session's as saved): redacted, and nothing that
    acts (no switch of transport)."""
    shown = session.share_redactor().obj(session.state() if state is None else state)
    shown.pop("hint", None)
    return shown


class ShareConsumer(FragmentSocket):
    """The `TabContext` of the features whose events reach shares (`publish_shared`)."""

    token: str = ""
    link_id: int | None = None
    session_id: int = 0
    worker_channel: str = ""
    following_capture: bool = False  # a live captured session (no worker)

    async def connect(self) -> None:
        self.token = str(self.scope["url_route"]["kwargs"]["token"])
        self.shown = shown_param(parse_qs(self.scope.get("query_string", b"").decode("latin-1")))
        self._replayed = False
        self._fallback: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        await self.accept()
        link = await self._link()
        if link is None:
            await self._gone("This share link does not exist or was revoked.")
            return
        self.link_id, self.session_id = link.pk, link.session_id
        await self.channel_layer.group_add(share_link_group_name(link.pk), self.channel_name)
        await database_sync_to_async(reap_dead_sessions)(session_id=link.session_id)
        session = await self._session()
        if session is None or not session.is_live:
            await self._replay()
            return
        self.worker_channel = session.worker_channel
        await self.channel_layer.group_add(share_group_name(link.session_id), self.channel_name)
        if not self.worker_channel:
            # A captured session: no worker renders for shares, its uploads' publisher does
            # (playground/capture/publish.py) once in the group; the replay comes now.
            self.following_capture = True
            await self._replay()
            self._watchdog = asyncio.create_task(
                watch_worker(self.channel_layer, link.session_id, lambda: self.following_capture)
            )
            return
        await self.channel_layer.send(
            self.worker_channel, {"command": "share_join", "reply_channel": self.channel_name}
        )
        self._fallback = asyncio.create_task(self._follow_anyway())
        # No owner's tab may be open to see the worker's process die: the viewer watches too.
        self._watchdog = asyncio.create_task(
            watch_worker(self.channel_layer, link.session_id, lambda: bool(self.worker_channel))
        )

    async def _follow_anyway(self) -> None:
        await asyncio.sleep(FOLLOW_WAIT)
        await self.channel_layer.send(self.channel_name, {"type": "share.follow", "late": True})

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """A share page sends nothing that acts; whatever arrives is ignored."""

    async def disconnect(self, code: int) -> None:
        await self._leave()

    async def _leave(self) -> None:
        """Out of the groups, and the worker told to stop rendering for this viewer (once: when
        the socket is closed from here, and again when the page goes)."""
        for task in (self._fallback, self._watchdog):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._fallback = self._watchdog = None
        if self.link_id is not None:
            await self.channel_layer.group_discard(share_link_group_name(self.link_id), self.channel_name)
            self.link_id = None
        if self.session_id and self.following_capture:
            await self.channel_layer.group_discard(share_group_name(self.session_id), self.channel_name)
            self.following_capture = False
        if self.session_id and self.worker_channel:
            await self.channel_layer.group_discard(share_group_name(self.session_id), self.channel_name)
            await self.channel_layer.send(
                self.worker_channel, {"command": "share_leave", "reply_channel": self.channel_name}
            )
            self.worker_channel = ""

    # The database ----------------------------------------------------------------------

    @database_sync_to_async
    def _link(self) -> ShareLink | None:
        return ShareLink.objects.filter(token=self.token, revoked_at__isnull=True).first()

    @database_sync_to_async
    def _session(self) -> Session | None:
        return Session.objects.filter(pk=self.session_id).first()

    @database_sync_to_async
    def _replay_frames(self) -> tuple[list[str], Session | None]:
        """The replay as the share page shows it, or None when the link was revoked meanwhile."""
        if self.link_id is None:
            return [], None
        link = ShareLink.objects.select_related("session").filter(pk=self.link_id, revoked_at__isnull=True).first()
        if link is None:
            return [], None
        session = link.session
        window = transcript_window(session.pk)
        state = regions.state(shared_state(session))
        if window.mark == self.shown:  # the page was rendered with these very lines: not again
            return [state], session
        export = reverse("sessions:share_jsonl", args=[self.token])
        frames = lines.transcript_replace_frames(
            session.share_redactor().obj(window.rows), window.total, session.pk, export_url=export
        )
        return [*frames, state], session

    async def _replay(self) -> None:
        frames, session = await self._replay_frames()
        if session is None:
            await self._gone("This share link was revoked.")
            return
        self._replayed = True
        for frame in frames:
            await self.send(text_data=frame)
        if not session.is_live:
            await self._ended()

    async def _ended(self) -> None:
        """The session is over: the page is a snapshot now, and this socket has nothing to carry."""
        await self.send(text_data=mode("snapshot"))
        await self._leave()
        await self.close(code=CLOSE_ENDED)

    async def _gone(self, why: str) -> None:
        await self.send(text_data=mode("revoked"))
        await self.send(
            text_data=oob(
                "share-notice",
                "innerHTML",
                render_to_string("sessions/_notice.html", {"text": f"{why} The page keeps what it had received."}),
            )
        )
        await self._leave()
        await self.close(code=CLOSE_GONE)

    # From the worker and the revoke view --------------------------------------------------

    async def share_follow(self, message: ShareFollow) -> None:
        """The worker renders for this viewer from now on (or did not answer): replay, then follow."""
        if self._fallback is not None and not message.get("late"):
            self._fallback.cancel()
        if not self._replayed:
            await self._replay()

    async def session_lines(self, message: Lines) -> None:
        """Lines the worker rendered for shares (redacted for them)."""
        if not self._replayed:
            return  # the replay, still to come, has them
        for frame in message["frames"]:
            await self.send(text_data=frame)

    async def session_state(self, message: StateEvent) -> None:
        session = await self._session()  # (its OAuth values may have grown since)
        if session is None or not self._replayed:
            return
        state = shared_state(session, message["state"])
        await self.send(text_data=regions.state(state))
        if state.get("status") in (Session.Status.ENDED, Session.Status.FAILED):
            await self._ended()

    async def share_revoked(self, message: dict[str, Any]) -> None:
        await self._gone("This share link was revoked.")


def close_share_viewers(link: ShareLink) -> None:
    """Revoking a link: its live viewers' sockets close (from a sync view)."""
    from asgiref.sync import async_to_sync

    from playground.channel_layer import channel_layer

    async_to_sync(channel_layer().group_send)(share_link_group_name(link.pk), {"type": "share.revoked"})
