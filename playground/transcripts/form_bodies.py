"""Form bodies as the transcript keeps them: the authorization flow's form posts are recorded
decoded, one `name=value` a line, secrets masked (mcp/auth/recorder.mask_body). What repeats or
exports such a request (curl.py, har.py) turns them back into a form body from here."""

from __future__ import annotations

from urllib.parse import urlencode

FORM = "application/x-www-form-urlencoded"


def is_form(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == FORM


def recorded_fields(recorded: str) -> list[tuple[str, str]]:
    """The (name, value) fields of a form body recorded one a line."""
    return [(name, value) for name, _, value in (line.partition("=") for line in recorded.splitlines() if line)]


def form_body(recorded: str) -> str:
    """The body as it went over the wire (application/x-www-form-urlencoded)."""
    return urlencode(recorded_fields(recorded))
