"""What travels between a live session's parts, in one vocabulary.

- The page sends an **action** (`{"action": name, ...form fields}`) over its websocket.
- The consumer turns it into a **command** of the same name (`{"command": name, ...}`), checked
  and typed, and sends it to the worker's channel, wherever the worker lives.
- The worker publishes **events** to the session's group (`{"type": "session.<name>", ...}`,
  Channels' type-name routing); each tab's consumer renders them as fragments. A feature's
  events travel as one type, `session.feature`, naming the feature.

Each is a TypedDict below; the channel layer carries plain dicts (`to_layer`, `as_command`).

Nothing here imports from `playground.sessions`: every other module of it may import this one.
"""

from __future__ import annotations

import contextvars
from typing import Any, Literal, NotRequired, Required, TypedDict, cast

from playground.mcp import jsontext

# The page's call a coroutine works for (set by the worker around each call), so an input
# round or a server request can be threaded under the call that caused it.
CURRENT_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar("current_call", default=None)


def page_action(text: str | None) -> dict[str, Any] | None:
    """What a page sent over its socket (`{"action": name, ...}`), or None for anything that is
    not a JSON object (a tab is another party: its text is parsed, never trusted)."""
    try:
        content = jsontext.loads(text or "{}")
    except (ValueError, RecursionError):
        return None
    return content if isinstance(content, dict) else None


def group_name(session_id: int) -> str:
    """The channel group of a session's tabs."""
    return f"session.{session_id}"


def share_group_name(session_id: int) -> str:
    """The channel group of a session's live share viewers: only what a share may show, redacted
    for them (transcript lines, the state), and only while one is watching."""
    return f"share.{session_id}"


def share_link_group_name(link_id: int) -> str:
    """The viewers of one share link: revoking it closes their sockets."""
    return f"sharelink.{link_id}"


# Commands (consumer -> worker) ----------------------------------------------------------


class Command(TypedDict, total=False):
    """A command for the worker. `command` names it (the page's action of the same name);
    the other keys depend on it. `reply_channel` is the asking tab's own channel."""

    command: Required[str]
    reply_channel: str
    call_id: str
    name: str
    arguments: dict[str, Any]
    uri: str
    timeout: float | None
    task: dict[str, Any]
    task_id: str
    frame: str
    notification: bool
    method: str
    params: Any
    key: str
    result: dict[str, Any]
    error: str
    report: dict[str, Any]
    direction: str  # an app bridge frame's: send (host -> app), recv (app -> host), note
    perform: bool  # an app's request the worker makes of the server (tools/call, resources/read)


def as_command(message: dict[str, Any]) -> Command:
    """What the worker's channel received: a command (a tab's, a view's, a share viewer's)."""
    return cast(Command, message)


# Events (worker -> group -> each tab) ---------------------------------------------------


class SessionState(TypedDict):
    """The state strip: what the session is and how it stands (Session.state())."""

    id: int
    status: str
    era: str
    era_evidence: str
    protocol_version: str
    server_info: Any
    capabilities: Any
    instructions: str
    transport: str
    end_reason: str
    event_count: int
    started: float  # epoch seconds: the page counts the time connecting from it
    schema_problems: int
    # Known to the worker only (live/state_strip.py): while connecting, what it waits for and the
    # request timeout; once failed on the wrong transport, what to try (connect.transport_hint).
    waiting: NotRequired[str]
    request_timeout: NotRequired[float]
    hint: NotRequired[dict[str, Any]]


class Catalogue(TypedDict, total=False):
    """The server's lists as last fetched; `errors` by list when one failed."""

    tools: list[dict[str, Any]]
    resources: list[dict[str, Any]]
    templates: list[dict[str, Any]]
    prompts: list[dict[str, Any]]
    errors: dict[str, str]
    subscribe: bool


class FeatureEvent(TypedDict):
    """A feature's event for the tabs: rendered by that feature's `fragments()`."""

    type: Literal["session.feature"]
    feature: str
    event: dict[str, Any]


class CallError(TypedDict, total=False):
    """Why a call has no result: the server's JSON-RPC error (`code`, `message`, `data`), or
    whose failure it was (`kind`: transport, client, the session ended; a `timeout`, a cancel)."""

    code: Any  # the server's (an int when it is a JSON-RPC error)
    message: str
    data: Any
    http: int  # the HTTP status it came with
    kind: str
    timeout: bool
    cancelled: bool


class Outcome(TypedDict, total=False):
    """A call's end, as the Result region shows it."""

    type: Required[Literal["session.result"]]
    call_id: Required[str]
    command: Required[str]
    name: Required[str]
    result: Any
    error: CallError
    latency_ms: float
    announced: bool
    rounds: list[dict[str, Any]]
    structured_errors: list[dict[str, Any]]  # present when checked against the tool's outputSchema
    arguments: dict[str, Any]  # a tool call's (an app gets them as its tool-input)
    app: dict[str, Any]  # the tool's MCP App to render below the Result (features/apps.py)


class Snapshot(TypedDict):
    """What a (re)connecting tab needs besides the transcript (the worker's answer to `sync`)."""

    type: Literal["session.snapshot"]
    catalogue: Catalogue
    results: list[Outcome]
    progress: dict[str, dict[str, Any]]  # by call id: the call's last notifications/progress params
    inflight: list[CallStarted]
    features: list[FeatureEvent]
    state: NotRequired[SessionState]  # while connecting: the strip with what it waits for


class Lines(TypedDict):
    type: Literal["session.lines"]
    frames: list[str]


class StateEvent(TypedDict):
    type: Literal["session.state"]
    state: SessionState


class CatalogueEvent(TypedDict):
    type: Literal["session.catalogue"]
    catalogue: Catalogue


class CallStarted(TypedDict):
    type: Literal["session.call_started"]
    call_id: str
    command: str
    name: str
    started: float
    announced: NotRequired[bool]


class ProgressEvent(TypedDict):
    type: Literal["session.progress"]
    call_id: str
    progress: dict[str, Any]  # the server's notifications/progress params


class ShareFollow(TypedDict):
    """To a live share viewer: the worker renders for it from now on (`late`: it did not answer)."""

    type: Literal["share.follow"]
    late: NotRequired[bool]


# What the worker sends to the tabs (and the share viewers).
TabMessage = (
    Lines | StateEvent | CatalogueEvent | CallStarted | ProgressEvent | Outcome | FeatureEvent | Snapshot | ShareFollow
)


def to_layer(message: TabMessage | Command) -> dict[str, Any]:
    """`message` as the channel layer's send takes it (a TypedDict is a dict: not copied)."""
    return cast(dict[str, Any], message)


# The catalogue ------------------------------------------------------------------------

CatalogueKind = Literal["tools", "prompts", "templates", "resources"]
# What names an entry of each list.
_KEYS: dict[str, str] = {"tools": "name", "prompts": "name", "templates": "uriTemplate", "resources": "uri"}


def catalogue_item(
    catalogue: Catalogue | dict[str, Any] | None, kind: CatalogueKind, key: str
) -> dict[str, Any] | None:
    """The listed tool, prompt, template or resource named `key` (a server's lists are untrusted:
    entries that are not objects are skipped)."""
    field = _KEYS[kind]
    for item in (catalogue or {}).get(kind) or []:
        if isinstance(item, dict) and item.get(field) == key:
            return item
    return None
