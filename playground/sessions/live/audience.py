"""Who watches a live session, and what each gets, over the channel layer: every tab (the group
`session.<id>`), one tab (a reply), and the live share viewers (the group `share.<id>`, only
while one watches: what a share may show, masked as the share page is).

Every message is masked on its way out (`to_layer`): a server may echo an OAuth token in a
result, a log entry, a request. The transcript's lines, saved first (transcripts.recorder), are
throttled (throttle.py) and rendered here once for every tab, and once more for the shares.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from channels.layers import BaseChannelLayer
from django.conf import settings

from playground.mcp.auth import OAuth
from playground.mcp.events import EventRow
from playground.mcp.secrets import NO_SECRETS, Redactor
from playground.transcripts.storable import without_surrogates

from ..fragments import lines
from ..protocol import Command, FeatureEvent, TabMessage, group_name, share_group_name, to_layer
from .feature_hub import FeatureHub
from .throttle import LineThrottle


class Audience:
    def __init__(self, session_id: int, layer: BaseChannelLayer) -> None:
        self.session_id = session_id
        self.layer = layer
        self.features: FeatureHub | None = None
        self.client_auth: OAuth | None = None
        # Transcript lines for the pages, throttled and rendered here once for every tab.
        self.throttle = LineThrottle(self.send_lines, rate=settings.PLAYGROUND_PAGE_MAX_LINES)
        # Live share viewers (their channels): while there is one, each piece of transcript is
        # rendered a second time for them (without the owner's controls), masked as the share
        # page and its exports are: Session.share_redactor(), set as the session starts (the
        # server's header and env secrets, a replay's source's too; the OAuth ones are the masker's).
        self.share_viewers: set[str] = set()
        self.share_redactor = NO_SECRETS
        self._secrets = (NO_SECRETS, NO_SECRETS, NO_SECRETS)  # (share's, masker, both together): secrets()

    def attach(self, features: FeatureHub) -> None:
        """The session's features, once made: their OAuth flow's values are masked in everything
        sent, and their share snapshots greet a share viewer."""
        self.features = features
        self.client_auth = features.client_auth

    # Sending ------------------------------------------------------------------------------

    async def broadcast(self, message: TabMessage) -> None:
        """To every tab (and a state to every share viewer too, each redacting it)."""
        await self.to_layer(self.layer.group_send, group_name(self.session_id), message)
        if self.share_viewers and message.get("type") == "session.state":
            await self.to_layer(self.layer.group_send, share_group_name(self.session_id), message)

    async def to_layer(
        self, send: Callable[[str, dict[str, Any]], Awaitable[None]], to: str, message: TabMessage
    ) -> None:
        """Send on the channel layer, OAuth values masked (a server may echo a token in a
        result, a log entry, a request; transcript lines are masked before they are rendered,
        where a preview could cut a token in two). A server's unpaired surrogates ("\\ud800"
        in its JSON) make Redis's msgpack refuse the message, which then goes with U+FFFD in their place."""
        sent = to_layer(message) if message["type"] == "session.lines" else self.masker().obj(message)
        try:
            await send(to, sent)
        except UnicodeEncodeError:
            await send(to, without_surrogates(sent))

    async def publish(self, feature: str, event: dict[str, Any]) -> None:
        """A feature's event, to every tab."""
        await self.broadcast({"type": "session.feature", "feature": feature, "event": event})

    async def reply(self, channel: str, feature: str, event: dict[str, Any]) -> None:
        """A feature's event, to one tab."""
        message: FeatureEvent = {"type": "session.feature", "feature": feature, "event": event}
        await self.to_layer(self.layer.send, channel, message)

    async def publish_shared(self, feature: str, event: Callable[[Redactor], dict[str, Any]]) -> None:
        """A feature's event for the share viewers, made with the share's redactor, if one watches."""
        if self.share_viewers:
            await self.to_layer(
                self.layer.group_send,
                share_group_name(self.session_id),
                {"type": "session.feature", "feature": feature, "event": event(self.share_redactor)},
            )

    async def send_lines(self, rows: list[EventRow], skipped: int) -> None:
        """One throttled piece of transcript for every tab, rendered once: a marker for the lines
        left out, then the lines (in appends under daphne's 1 MiB message). Rendering per tab
        made 30 tabs of a flood cost 30 times the rendering."""
        rows = self.masker().obj(rows)
        frames = [lines.skipped(self.session_id, skipped)] if skipped else []
        await self.broadcast(
            {"type": "session.lines", "frames": frames + lines.transcript_append_frames(rows, owner=True)}
        )
        if self.share_viewers:
            # Rendered again for the shares: without the owner's controls, every secret masked.
            shared = self.share_redactor.obj(rows) if self.share_redactor else rows
            frames = [lines.skipped(self.session_id, skipped, export_url="#share-downloads")] if skipped else []
            await self.to_layer(
                self.layer.group_send,
                share_group_name(self.session_id),
                {"type": "session.lines", "frames": frames + lines.transcript_append_frames(shared)},
            )

    # Share viewers ------------------------------------------------------------------------

    async def join(self, message: Command) -> None:
        """The `share_join` command: a live share viewer. Lines go to the share group from now
        on; it replays once told, then gets what the features show shares (a replay's
        Differences so far)."""
        channel = message.get("reply_channel")
        if channel:
            self.share_viewers.add(channel)
            await self.to_layer(self.layer.send, channel, {"type": "share.follow"})
            for feature, event in self.features.share_snapshot(self.share_redactor) if self.features else ():
                await self.reply(channel, feature, event)

    async def leave(self, message: Command) -> None:
        """The `share_leave` command."""
        self.share_viewers.discard(message.get("reply_channel", ""))

    # Masking ------------------------------------------------------------------------------

    def masker(self) -> Redactor:
        """Masks what the OAuth flow obtained in what the pages get, as the session's
        `oauth_secret_values` do for what is read from the database; from the flow's own list,
        which knows a token before the request that uses it is sent."""
        return self.client_auth.redactor() if self.client_auth is not None else NO_SECRETS

    def secrets(self) -> Redactor:
        """The share's redactor and the masker's values together (made anew when the flow learns one)."""
        share, masker = self.share_redactor, self.masker()
        if not masker:
            return share
        if self._secrets[0] is not share or self._secrets[1] is not masker:
            self._secrets = (share, masker, Redactor([*share.originals, *masker.originals]))
        return self._secrets[2]
