"""The embedded channel layer: Channels' in-memory layer with a direct `group_send`.

The stock one starts a task per member and gathers them with `as_completed`, for sends that
never wait (`put_nowait` on a local queue): on the path of every call's Result that cost more
than the copy of the message itself. Messages are still copied per member, as the stock layer
and Redis (by serializing) do, so a receiver never shares a dict with the sender.
Scale-out uses `channels_redis` unchanged (settings: REDIS_URL).
"""

from __future__ import annotations

from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer


class DirectInMemoryChannelLayer(InMemoryChannelLayer):
    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()  # type: ignore[attr-defined]  # (types-channels lists only its public methods)
        for channel in list(self.groups.get(group, {})):
            try:
                await self.send(channel, message)
            except ChannelFull:
                pass  # as the stock layer: a full channel drops (the database is the truth)
