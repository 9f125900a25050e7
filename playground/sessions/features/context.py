"""What a feature may use of the session it lives in, and of the tab it renders for.

The worker implements `SessionContext`; tests implement it with a fake. A feature never
receives the worker itself (as the SDK's client extensions never receive the client): what it
may do is listed here, and nothing else is reachable.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from playground.mcp.client import McpClient
from playground.mcp.config import ServerConfig
from playground.mcp.events import Tap
from playground.mcp.secrets import Redactor

from ..protocol import Catalogue, Command

if TYPE_CHECKING:
    from .base import Feature


class SessionContext(Protocol):
    """A live session, as its features see it."""

    session_id: int
    config: ServerConfig
    tap: Tap

    @property
    def client(self) -> McpClient | None:
        """The connection, once open (None while connecting)."""

    @property
    def catalogue(self) -> Catalogue:
        """The server's lists as last fetched."""

    async def publish(self, feature: str, event: dict[str, Any]) -> None:
        """Send a feature's event to every tab of the session (OAuth values masked)."""

    async def reply(self, channel: str, feature: str, event: dict[str, Any]) -> None:
        """Send a feature's event to one tab (the one that asked)."""

    async def publish_shared(self, feature: str, event: Callable[[Redactor], dict[str, Any]]) -> None:
        """Send a feature's event to the session's live share viewers, if any: `event` makes it
        with the share's redactor (every secret masked), only when someone is watching."""

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any]) -> None:
        """Run `coro` as a task of the session (`name` names it in logs): cancelled when the session ends."""

    async def refresh_catalogue(self, announced: bool = False) -> None:
        """Fetch every list again and show it (`announced`, the server said a list changed: only
        if it did)."""

    def call(self, command: Command) -> str:
        """Start one of the page's calls (`calls.CALLS`: its in-flight card, its Result), as if
        the page had asked; its call id (its end reaches `on_call_end`)."""

    def set_request_timeout(self, seconds: float) -> None:
        """The session's per-request timeout from now on."""

    def end(self, reason: str) -> None:
        """End the session (the server stopped, the transcript saved) with `reason`: a feature whose
        work is done (a server check) closes it."""

    def feature(self, name: str) -> Feature | None:
        """Another feature of this session, by name (None when not registered): a feature
        that works with another one names it (input rounds, for the server requests' cards)."""

    def secrets(self) -> Redactor:
        """Every secret value the session's share page masks, the OAuth flow's learnt so far
        among them: a feature that cuts a server's text to length cuts it with this
        (`Redactor.cut`), so that no secret's head is left at the cut."""


class TabContext(Protocol):
    """One tab's websocket, as a feature's page side sees it (in the consumer's process)."""

    session_id: int
    channel_name: str

    @property
    def catalogue(self) -> Catalogue:
        """The server's lists as this tab last got them."""

    def first_time(self, card: str) -> bool:
        """Whether `card` is new to this tab (a snapshot and a broadcast may both announce one);
        remembers it."""

    def forget(self, card: str) -> None:
        """`card` is gone: announcing it again shows it again."""
