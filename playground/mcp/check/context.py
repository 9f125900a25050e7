"""What every group of checks works with: the open session, the trace, the options, what
earlier checks found (the lists, the answers), and the way to open another connection."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from playground.budget import CHECK

from ..client import McpClient
from ..config import ServerConfig
from ..events import Tap
from .conformance import Conformance
from .probe import Answer, Trace, ask
from .result import CheckResult, Report, Status

# Opens another connection to the same server (a modified copy of its config) on the tap given:
# the session's, for that connection (`Tap.connection`), so its events are in the transcript
# the rows cite, marked as not the session's own.
Connector = Callable[[ServerConfig, Tap], Awaitable[McpClient]]
Emit = Callable[[CheckResult], Awaitable[None]]

NO_SUCH_PROMPT = "mcp-playground-check-no-such-prompt"  # a name no server has (errors, completion probes)
CHECK_TIMEOUT = 10.0  # seconds a check's request may wait (tool calls: CALL_TIMEOUT, reset by progress)
CALL_TIMEOUT = 60.0
# Seconds the whole battery may take. Per-request timeouts alone do not bound it: progress resets
# a tool call's, so a tool that keeps sending progress kept the check (and `mcp --check`) waiting
# for ever. Generous: a check of a healthy server takes seconds; ticked slow tools get a minute each.
CHECK_DEADLINE = CHECK.seconds  # the whole battery's (budget.LIMITS)


@dataclass
class CheckOptions:
    call_tools: list[str] = field(default_factory=list)  # tools the person ticked: the only ones called
    timeout: float = CHECK_TIMEOUT
    call_timeout: float = CALL_TIMEOUT
    deadline: float = CHECK_DEADLINE  # the whole battery (runner.py cuts it there, saying so)
    max_pages: int = 100  # pages of one list before it counts as a loop
    max_reads: int = 10  # resources read, templates tried, prompts got
    max_invalid_calls: int = 5  # ticked tools also called with broken arguments
    stop_after_timeouts: int = 3  # requests in a row without an answer: the server stopped answering


class Stop(Exception):
    """The battery cannot go on: the connection is gone, or the server stopped answering."""

    def __init__(self, reason: str, seqs: list[int] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.seqs = seqs or []


@dataclass
class CheckContext:
    client: McpClient
    trace: Trace
    config: ServerConfig
    options: CheckOptions
    connector: Connector
    emit: Emit
    report: Report = field(default_factory=Report)  # the rows go through `emit`; the tools called are noted here
    start: int = 0  # the trace mark the check's own requests come after
    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # tools, resources, templates, prompts
    list_seqs: dict[str, list[int]] = field(default_factory=dict)
    answers: dict[str, Answer] = field(default_factory=dict)  # by method, first answer kept
    examples: dict[str, Any] = field(default_factory=dict)  # tool name -> arguments sent
    timeouts_in_a_row: int = 0
    timeouts: int = 0
    conformance: Conformance = field(default_factory=Conformance)  # every answer against the schema
    connections: int = 0
    asking: tuple[str, Any, int] | None = None  # the request in flight: (method, params, trace mark before it)

    @property
    def caps(self) -> dict[str, Any]:
        caps = self.client.server_capabilities
        return caps if isinstance(caps, dict) else {}

    @property
    def era(self) -> str:
        return self.client.era

    @property
    def version(self) -> str:
        return str(self.client.protocol_version or "")

    @property
    def modern_http(self) -> bool:
        """Modern era over Streamable HTTP, where an unknown method MUST get 404 with -32601."""
        return self.era == "modern" and self.client.transport.name == "streamable-http"

    def advertised(self, capability: str) -> bool:
        return capability in self.caps

    def unlisted(self, kind: str, base: str, key: str = "name") -> str:
        """A name (or URI: `key`) the server does not list among its `kind` ("tools", "prompts",
        "resources"), for a probe of something that does not exist: `base`, or `base` with a random
        suffix when the server lists `base` itself. A probe named like a listed tool would run that
        tool's side effects, which the check does only for the tools a person ticked."""
        listed = {
            item[key]
            for item in self.lists.get(kind) or []  # (a server's name may be anything: [])
            if isinstance(item, dict) and isinstance(item.get(key), str)
        }
        name = base
        while name in listed:
            name = f"{base}-{secrets.token_hex(4)}"
        return name

    async def connect(self, config: ServerConfig, label: str = "check probe") -> McpClient:
        """Another connection (a version probe, or the check's own after the server closed its
        first), its events marked "LABEL N" in the transcript."""
        self.connections += 1
        return await self.connector(config, self.trace.tap.connection(f"{label} {self.connections}"))

    async def row(self, name: str, status: Status, reason: str, seqs: list[int] | None = None) -> None:
        await self.emit(CheckResult(name, status, reason, list(seqs or [])))

    async def ask(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: bool = False,
        on_purpose: str | None = None,
    ) -> Answer:
        """One request on the session; raises Stop when the connection is gone or the server stopped answering."""
        if self.client.closed:
            raise Stop(f"the connection closed ({self.client.close_reason})")
        self.asking = (method, params, self.trace.mark())
        try:
            answer = await ask(
                self.client,
                self.trace,
                method,
                params,
                timeout=self.options.timeout if timeout is None else timeout,
                progress=progress,
                on_purpose=on_purpose,
            )
        finally:
            self.asking = None
        self.answers.setdefault(method, answer)
        await self.conformance.add(self.version, answer)
        if answer.timed_out:
            self.timeouts += 1
            self.timeouts_in_a_row += 1
            if self.timeouts_in_a_row >= self.options.stop_after_timeouts:
                raise Stop(
                    f"the server stopped answering: {self.timeouts_in_a_row} requests in a row got no "
                    f"answer within {answer.timeout:g} s",
                    answer.seqs,
                )
        else:
            self.timeouts_in_a_row = 0
        if answer.lost is not None and self.client.closed:
            raise Stop(f"the connection closed during {method} ({self.client.close_reason})", answer.seqs)
        return answer

    async def ask_once(self, method: str, params: dict[str, Any] | None = None) -> Answer:
        """The first answer to `method` this check got, asking now if none yet."""
        return self.answers[method] if method in self.answers else await self.ask(method, params)
