"""Every HTTP exchange of the authorization flow goes on the tap as an `http` note, with
request and response facts and bodies — secrets masked: tokens, codes, verifiers and
client secrets in JSON and form bodies, in URLs (the redirect's `code`), in headers, and
any value the flow has learnt is secret wherever else it appears.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from ..events import Tap
from ..secrets import MASK, Redactor, mask_headers
from ..transports.http_common import content_type, shown_url

# Body fields (JSON or form) whose values are secrets.
SECRET_FIELDS = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "client_secret",
        "code",
        "code_verifier",
        "registration_access_token",
        "assertion",
        "client_assertion",
        "token",
        "device_code",
    }
)
MAX_BODY_SHOWN = 20_000


def mask_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (MASK if k in SECRET_FIELDS and isinstance(v, str) and v else mask_json(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_json(v) for v in value]
    return value


def mask_pairs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, MASK if k in SECRET_FIELDS and v else v) for k, v in pairs]


def mask_url(url: str) -> str:
    """shown_url, plus the OAuth secrets a query may carry (a redirect's `code`)."""
    parts = urlsplit(shown_url(url))
    if not parts.query:
        return urlunsplit(parts)
    query = urlencode(mask_pairs(parse_qsl(parts.query, keep_blank_values=True)), safe=":/ ")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query.replace("%E2%80%A2", "•"), parts.fragment))


def mask_body(raw: bytes | str, ctype: str) -> str:
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    if ctype == "application/x-www-form-urlencoded":  # shown decoded, one field a line
        return "\n".join(f"{k}={v}" for k, v in mask_pairs(parse_qsl(text, keep_blank_values=True)))
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return json.dumps(mask_json(parsed), indent=1, ensure_ascii=False)


@dataclass
class Exchange:
    """One recorded HTTP exchange: the response (read whole) or why there is none."""

    method: str
    url: str
    status: int | None = None
    headers: httpx.Headers = field(default_factory=httpx.Headers)
    body: bytes = b""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def describe(self) -> str:
        return self.error or f"HTTP {self.status}"


class Recorder:
    """Sends the flow's requests and records each exchange on the tap."""

    def __init__(
        self,
        tap: Tap,
        secrets: Callable[[], Iterable[str]],
        timeout: float = 30.0,
        client_factory: Callable[..., httpx.AsyncClient] | None = None,
    ) -> None:
        self.client_factory = client_factory or httpx.AsyncClient
        self.tap = tap
        self._secrets = secrets
        self.timeout = timeout

    def redact(self, text: str, extra: Iterable[str] = ()) -> str:
        return Redactor([*self._secrets(), *extra]).text(text)

    def facts(
        self,
        method: str,
        url: str,
        request_headers: dict[str, str],
        response: httpx.Response | None,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"method": method, "url": mask_url(url), "request_headers": mask_headers(request_headers)}
        if response is not None:
            headers = mask_headers(response.headers.multi_items())
            if "location" in {k.lower() for k in headers}:
                headers = {k: (mask_url(v) if k.lower() == "location" else v) for k, v in headers.items()}
            out.update(status=response.status_code, headers=headers, content_type=content_type(response.headers))
        return out

    async def send(
        self,
        step: str,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        form: dict[str, str] | None = None,
        json_body: Any = None,
    ) -> Exchange:
        headers = {"Accept": "application/json", **(headers or {})}
        content: bytes | None = None
        ctype = ""
        if form is not None:
            content = urlencode(form).encode()
            ctype = "application/x-www-form-urlencoded"
        elif json_body is not None:
            content = json.dumps(json_body).encode()
            ctype = "application/json"
        if ctype:
            headers["Content-Type"] = ctype
        ex = Exchange(method, url)
        response = None
        try:
            async with self.client_factory(timeout=self.timeout, follow_redirects=False) as http:
                response = await http.request(method, url, headers=headers, content=content)
                ex.status, ex.headers, ex.body = response.status_code, response.headers, response.content
        except httpx.HTTPError as exc:
            ex.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        self.record(step, ex, headers, content, ctype, response)
        return ex

    def record(
        self,
        step: str,
        ex: Exchange,
        request_headers: dict[str, str],
        request_body: bytes | None,
        request_ctype: str,
        response: httpx.Response | None,
    ) -> None:
        facts = self.facts(ex.method, ex.url, request_headers, response)
        facts["exchange"] = self.tap.exchange()  # one note is one whole exchange (the HAR export's entry)
        try:
            if response is not None:
                facts["wait_ms"] = round(response.elapsed.total_seconds() * 1000, 3)
        except RuntimeError:  # (not read to its end)
            pass
        data: dict[str, Any] = {"auth_step": step}
        # A redirect's code is not known as a secret yet, and its HTML body repeats it.
        location = ex.headers.get("location") or ""
        extra = [v for k, v in parse_qsl(urlsplit(location).query) if k in SECRET_FIELDS]
        if request_body:
            data["request_body"] = self.redact(mask_body(request_body, request_ctype), extra)
        if ex.error:
            data["error"] = ex.error
        elif ex.body:
            shown = self.redact(mask_body(ex.body, facts.get("content_type", "")), extra)
            data["response_body"] = shown[:MAX_BODY_SHOWN]
            if len(shown) > MAX_BODY_SHOWN:
                data["response_body_truncated"] = len(shown)
        outcome = ex.error or f"HTTP {ex.status} {response.reason_phrase if response is not None else ''}".rstrip()
        self.tap.note("http", f"{ex.method} {mask_url(ex.url)} → {outcome}", http=facts, **data)
