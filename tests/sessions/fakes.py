"""A `SessionContext` and a `TabContext` for testing one feature alone (features/context.py):
what it publishes (to tabs, to share viewers), replies and spawns is recorded; its client is
whatever the test gives."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from playground.mcp.config import ServerConfig
from playground.mcp.events import Tap
from playground.mcp.secrets import Redactor
from playground.sessions.features import BY_NAME
from playground.sessions.protocol import Catalogue


class FakeSession:
    def __init__(self, client: Any = None, catalogue: Catalogue | None = None) -> None:
        self.session_id = 1
        self.config = ServerConfig(transport="stdio", command="unused")
        self.tap = Tap()
        self.client = client
        self.catalogue = catalogue or {}
        self.published: list[tuple[str, dict[str, Any]]] = []
        self.shared: list[tuple[str, dict[str, Any]]] = []  # what live share viewers got
        self.share_redactor = Redactor()
        self.replies: list[tuple[str, str, dict[str, Any]]] = []
        self.tasks: list[asyncio.Task[Any]] = []
        self.refreshes = 0
        self.announced_refreshes = 0  # of them, asked because the server said a list changed
        self.features: dict[str, Any] = {}
        self.ended: str | None = None
        self.calls: list[dict[str, Any]] = []
        self.secret_values: list[str] = []

    async def publish(self, feature: str, event: dict[str, Any]) -> None:
        self.published.append((feature, event))

    async def reply(self, channel: str, feature: str, event: dict[str, Any]) -> None:
        self.replies.append((channel, feature, event))

    async def publish_shared(self, feature: str, event: Callable[[Redactor], dict[str, Any]]) -> None:
        self.shared.append((feature, event(self.share_redactor)))

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any]) -> None:
        self.tasks.append(asyncio.get_running_loop().create_task(coro, name=name))

    async def settle(self) -> None:
        """Wait for every spawned task (and those they spawn)."""
        while pending := [t for t in self.tasks if not t.done()]:
            await asyncio.wait(pending)

    async def refresh_catalogue(self, announced: bool = False) -> None:
        self.refreshes += 1
        self.announced_refreshes += announced

    def call(self, command: Any) -> str:
        self.calls.append(dict(command))
        return f"call-{len(self.calls)}"

    def set_request_timeout(self, seconds: float) -> None:
        self.config.timeout = seconds

    def feature(self, name: str) -> Any:
        return self.features.get(name)

    def end(self, reason: str) -> None:
        self.ended = reason

    def secrets(self) -> Redactor:
        return Redactor(self.secret_values)

    def add(self, name: str, options: dict[str, Any] | None = None) -> Any:
        """Install the registered feature `name` in this session."""
        self.features[name] = BY_NAME[name](self, options)
        return self.features[name]


class FakeTab:
    def __init__(self, catalogue: Catalogue | None = None) -> None:
        self.session_id = 1
        self.channel_name = "tab-1"
        self.catalogue = catalogue or {}
        self.cards: set[str] = set()

    def first_time(self, card: str) -> bool:
        new = card not in self.cards
        self.cards.add(card)
        return new

    def forget(self, card: str) -> None:
        self.cards.discard(card)


class FakeClient:
    """Records requests; answers from `answers` (an exception instance is raised)."""

    def __init__(self, era: str = "legacy", **answers: Any) -> None:
        self.era = era
        self.closed = False
        self.timeout = 60.0
        self.max_input_rounds = 10
        self.server_capabilities: dict[str, Any] = {"resources": {"subscribe": True}}
        self.sent: list[tuple[str, Any]] = []
        self.answers = answers

    def capabilities(self) -> dict[str, Any]:
        return {"roots": {"listChanged": True}}

    async def _answer(self, method: str, params: Any) -> Any:
        self.sent.append((method, params))
        answer = self.answers.get(method)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, asyncio.Future):
            return await answer
        return answer if answer is not None else {}

    async def set_logging_level(self, level: str) -> Any:
        return await self._answer("logging/setLevel", {"level": level})

    async def subscribe(self, uri: str) -> Any:
        return await self._answer("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> Any:
        return await self._answer("resources/unsubscribe", {"uri": uri})

    async def complete(self, ref: Any, argument: Any, context: Any = None) -> Any:
        return await self._answer("completion/complete", {"ref": ref, "argument": argument})

    async def notify(self, method: str, params: Any = None) -> None:
        self.sent.append((method, params))


def html_of(session: FakeSession) -> str:
    return "\n".join(event.get("html", "") for _, event in session.published)
