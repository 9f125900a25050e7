"""Where the specification describes each message, per protocol version: the link a schema
problem carries to the section its message type is defined in.

Data, in one place. The anchors are the spec pages' own headings (`### Calling Tools` becomes
`#calling-tools`), read from the specification repository at the commit the schemas come from
(`schemas/README.md`); pages moved between versions are listed under the version they moved in.
"""

from __future__ import annotations

BASE = "https://modelcontextprotocol.io/specification"

Section = tuple[str, str]  # (page under the version, heading anchor)

# Where each method is described, from 2024-11-05 on (a version that lacks the method never
# asks: its frames are matched to no definition, and link to the messages section).
SECTIONS: dict[str, Section] = {
    "initialize": ("basic/lifecycle", "initialization"),
    "notifications/initialized": ("basic/lifecycle", "initialization"),
    "ping": ("basic/utilities/ping", "message-format"),
    "notifications/cancelled": ("basic/utilities/cancellation", "cancellation-flow"),
    "notifications/progress": ("basic/utilities/progress", "progress-flow"),
    "tools/list": ("server/tools", "listing-tools"),
    "tools/call": ("server/tools", "calling-tools"),
    "notifications/tools/list_changed": ("server/tools", "list-changed-notification"),
    "resources/list": ("server/resources", "listing-resources"),
    "resources/read": ("server/resources", "reading-resources"),
    "resources/templates/list": ("server/resources", "resource-templates"),
    "notifications/resources/list_changed": ("server/resources", "list-changed-notification"),
    "resources/subscribe": ("server/resources", "subscriptions"),
    "resources/unsubscribe": ("server/resources", "subscriptions"),
    "notifications/resources/updated": ("server/resources", "subscriptions"),
    "prompts/list": ("server/prompts", "listing-prompts"),
    "prompts/get": ("server/prompts", "getting-a-prompt"),
    "notifications/prompts/list_changed": ("server/prompts", "list-changed-notification"),
    "logging/setLevel": ("server/utilities/logging", "setting-log-level"),
    "notifications/message": ("server/utilities/logging", "log-message-notifications"),
    "completion/complete": ("server/utilities/completion", "requesting-completions"),
    "roots/list": ("client/roots", "listing-roots"),
    "notifications/roots/list_changed": ("client/roots", "root-list-changes"),
    "sampling/createMessage": ("client/sampling", "creating-messages"),
    "elicitation/create": ("client/elicitation", "creating-elicitation-requests"),  # 2025-06-18
    # 2025-11-25
    "notifications/elicitation/complete": ("client/elicitation", "completion-notifications-for-url-mode-elicitation"),
    "tasks/get": ("basic/utilities/tasks", "getting-tasks"),
    "tasks/result": ("basic/utilities/tasks", "retrieving-task-results"),
    "tasks/list": ("basic/utilities/tasks", "listing-tasks"),
    "tasks/cancel": ("basic/utilities/tasks", "cancelling-tasks"),
    "notifications/tasks/status": ("basic/utilities/tasks", "task-status-notification"),
    # 2026-07-28
    "server/discover": ("server/discover", "request"),
    "subscriptions/listen": ("basic/patterns/subscriptions", "opening-a-stream"),
    "notifications/subscriptions/acknowledged": ("basic/patterns/subscriptions", "acknowledgment"),
}

# What moved, from the version it moved in.
MOVED: dict[str, dict[str, Section]] = {
    "2025-11-25": {
        "elicitation/create": ("client/elicitation", "elicitation-requests"),
    },
    "2026-07-28": {
        "elicitation/create": ("client/elicitation", "elicitation-requests"),
        "notifications/cancelled": ("basic/patterns/cancellation", "cancellation-flow"),
        "notifications/progress": ("basic/patterns/progress", "progress-flow"),
    },
}

# Results of a request are described with it, except where a version gives them a section.
RESULTS: dict[str, dict[str, Section]] = {
    "2026-07-28": {
        "server/discover": ("server/discover", "response"),
    },
}
INPUT_REQUIRED: Section = ("basic/patterns/mrtr", "multi-round-trip-requests")  # 2026-07-28

# The general sections: messages (requests, notifications, responses) and error responses.
MESSAGES: dict[str, Section] = {"2024-11-05": ("basic/messages", "")}
MESSAGES_SINCE_2025: Section = ("basic/index", "messages")
ERRORS: dict[str, Section] = {
    "2024-11-05": ("basic/messages", "responses"),
    "2025-11-25": ("basic/index", "error-responses"),
}
ERRORS_OTHERWISE: Section = ("basic/index", "responses")

VERSION_ORDER = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")


def url(version: str, section: Section) -> str:
    page, anchor = section
    return f"{BASE}/{version}/{page}" + (f"#{anchor}" if anchor else "")


def for_method(version: str, method: str | None, *, result: bool = False) -> str:
    """The section describing `method` (its result, with `result`) in `version`; the messages
    section for a method the table does not know."""
    if method is not None:
        if result and method in RESULTS.get(version, {}):
            return url(version, RESULTS[version][method])
        section = _moved(version, method) or SECTIONS.get(method)
        if section is not None:
            return url(version, section)
    return messages(version)


def _moved(version: str, method: str) -> Section | None:
    """The newest move of `method` at or before `version`."""
    found = None
    for moved_in in VERSION_ORDER:
        if moved_in > version:
            break
        found = MOVED.get(moved_in, {}).get(method, found)
    return found


def messages(version: str) -> str:
    return url(version, MESSAGES.get(version, MESSAGES_SINCE_2025))


def errors(version: str) -> str:
    return url(version, ERRORS.get(version, ERRORS_OTHERWISE))


def input_required(version: str) -> str:
    return url(version, INPUT_REQUIRED)


def title(link: str) -> str:
    """A readable name for a section link: its heading ("Calling tools"), or its page."""
    anchor = link.partition("#")[2]
    words = (anchor or link.rstrip("/").rsplit("/", 1)[-1]).replace("-", " ").strip()
    return words[:1].upper() + words[1:]
