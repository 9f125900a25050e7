"""Reading a JWT's header and claims for display (never for trust: nothing is verified)."""

from __future__ import annotations

import base64
import json
from typing import Any


def _part(segment: str) -> Any:
    padded = segment + "=" * (-len(segment) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def decode_unverified(token: str) -> dict[str, Any] | None:
    """{"header": …, "claims": …} when `token` looks like a JWS compact JWT, else None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header, claims = _part(parts[0]), _part(parts[1])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return None
    return {"header": header, "claims": claims}
