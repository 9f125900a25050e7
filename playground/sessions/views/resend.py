"""Edit and resend: a request the client sent, read back from the transcript to prefill the
raw composer, or the tool's form when it called a listed tool."""

from __future__ import annotations

import json
from typing import Any

from django.http import Http404

from playground.mcp.replay import user_params
from playground.transcripts.models import Session

from ..protocol import catalogue_item
from ..transcript_window import seq_param


def sent_request(session: Session, seq: str) -> tuple[int, dict[str, Any]]:
    """The request the client sent as event `seq` of `session` (as its owner reads it); 404
    for anything else."""
    number = seq_param(seq)
    if number is None:
        raise Http404("no such event")
    data = session.events.filter(seq=number, dir="send").values_list("data", flat=True).first()
    message = session.owner_redactor().obj(data).get("message") if isinstance(data, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str) or "id" not in message:
        raise Http404("that event is not a request the client sent")
    return number, message


def listed_tool_call(session: Session, message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the tool, its arguments) when `message` is a tools/call of a tool the session lists."""
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if message["method"] != "tools/call" or not isinstance(params.get("name"), str):
        return None
    tool = catalogue_item(session.catalogue, "tools", params["name"])
    arguments = params.get("arguments")
    if tool is None or not isinstance(arguments, (dict, type(None))):
        return None
    return tool, arguments or {}


def composer_values(message: dict[str, Any]) -> dict[str, str]:
    """The raw composer's method and params (what the client adds itself left out: it adds it again)."""
    params = user_params(message.get("params"))
    return {
        "method": message["method"],
        "params": "" if params is None else json.dumps(params, indent=2, ensure_ascii=False),
    }


def fits_form(schema: Any, arguments: dict[str, Any]) -> bool:
    """Whether the form's fields can hold `arguments` (no member its schema does not name)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return not arguments or (isinstance(properties, dict) and set(arguments) <= set(properties))
