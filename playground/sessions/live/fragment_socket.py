"""The base of a tab's socket, the owner's (session_socket.py) and a share viewer's
(share_socket.py): every fragment made sendable on its way out, a feature's events turned into
its fragments, and the cards already shown remembered."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer

from ..features import BY_NAME
from ..fragments.regions import sendable
from ..protocol import Catalogue, FeatureEvent
from .layers import InboxLayer, serve


class FragmentSocket(AsyncWebsocketConsumer):
    """A tab's socket (a session's, a share's): every fragment made sendable on its way out.
    It remembers the cards it has shown (calls in flight, server requests, a replay's rows):
    the worker's snapshot and a live broadcast can both announce one; a tab shows it once
    (the features' `TabContext.first_time`)."""

    session_id: int
    catalogue: Catalogue = {}  # the server's lists as this tab last got them (a share's: none)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cards: set[str] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Channels' own `__call__` unless the layer is one of ours: then the in-process path
        (layers.serve: the page's frames and the layer's messages from one inbox, no copy through
        a queue of the layer's, no task per message)."""
        layer = get_channel_layer(self.channel_layer_alias)
        if not isinstance(layer, InboxLayer):
            await super().__call__(scope, receive, send)
            return
        self.scope = scope
        self.channel_layer = layer
        self.channel_name = await layer.new_channel()
        self.base_send = send
        await serve(layer, self.channel_name, receive, self.dispatch)

    def first_time(self, card: str) -> bool:
        if card in self._cards:
            return False
        self._cards.add(card)
        return True

    def forget(self, card: str) -> None:
        self._cards.discard(card)

    async def session_feature(self, message: FeatureEvent) -> None:
        """A feature's event (a share's: made for shares, masked): its fragments for this tab."""
        feature = BY_NAME.get(message.get("feature", ""))
        if feature is None:  # (a worker of a newer deployment)
            return
        for html in feature.fragments(message["event"], self):
            await self.send(text_data=html)

    # (AsyncWebsocketConsumer.send's own signature, which replaces AsyncConsumer.send(message): its
    # stub in types-channels ignores the override too)
    async def send(  # type: ignore[override]
        self,
        text_data: str | None = None,
        bytes_data: bytes | None = None,
        close: bool = False,
    ) -> None:
        if text_data is not None:
            text_data = sendable(text_data, getattr(self, "session_id", None))
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
