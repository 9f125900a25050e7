"""The MCP Apps sandbox origin (core/sandbox.py): on the sandbox's Host only the proxy page, its
script, or a redirect — the application behind never sees the request, its cookies are never
read, no websocket opens; the proxy page carries the app's policy; the playground's own pages
may frame the sandbox origin and nothing else."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client

from playground.core.sandbox import SandboxHost


class Behind:
    """The application behind the wrapper: records what reaches it."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, Any]] = []

    async def __call__(self, scope, receive, send) -> None:
        self.scopes.append(scope)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"set-cookie", b"sessionid=x")]})
        await send({"type": "http.response.body", "body": b"the playground"})


async def request(
    path: str, host: str, query: str = "", kind: str = "http", raw_path: bytes | None = None
) -> tuple[Behind, list[dict[str, Any]]]:
    behind, sent = Behind(), []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": kind,
        "method": "GET",
        "path": path,
        "raw_path": raw_path if raw_path is not None else path.encode(),
        "query_string": query.encode(),
        "scheme": "http",
        "headers": [(b"host", host.encode()), (b"cookie", b"sessionid=stolen; csrftoken=t")],
    }
    await SandboxHost(behind)(scope, receive, send)
    return behind, sent


def headers(sent: list[dict[str, Any]]) -> dict[str, str]:
    return {k.decode().lower(): v.decode() for k, v in sent[0].get("headers", [])}


def directives(policy: str) -> dict[str, str]:
    return dict(d.strip().split(" ", 1) for d in policy.split(";"))


async def test_the_proxy_page_carries_the_apps_policy_and_nothing_reaches_the_app():
    csp = json.dumps({"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]})
    behind, sent = await request(
        "/sandbox/proxy", "localhost:8000", urlencode({"host": "http://127.0.0.1:8000", "csp": csp})
    )
    assert behind.scopes == [] and sent[0]["status"] == 200
    got = headers(sent)
    policy = directives(got["content-security-policy"])
    assert policy["frame-ancestors"] == "http://127.0.0.1:8000"
    assert policy["connect-src"] == "https://api.example.com" and policy["object-src"] == "'none'"
    assert "https://cdn.example.com" in policy["script-src"]
    assert "set-cookie" not in got and b'src="/sandbox/proxy.js"' in sent[1]["body"]
    _behind, script = await request("/sandbox/proxy.js", "localhost:8000")
    assert (
        b"sandbox-proxy-ready" in script[1]["body"]
        and headers(script)["content-security-policy"] == "default-src 'none'"
    )
    _behind, bucket = await request("/sandbox/token-bucket.js", "localhost:8000")
    assert b"window.tokenBucket" in bucket[1]["body"] and b'src="/sandbox/token-bucket.js"' in sent[1]["body"]


@pytest.mark.parametrize("host", ["https://evil.example", "http://localhost:8000", "javascript:alert(1)", ""])
async def test_the_proxy_page_is_framed_by_the_playground_only(host):
    behind, sent = await request("/sandbox/proxy", "localhost:8000", urlencode({"host": host}))
    assert behind.scopes == [] and sent[0]["status"] == 400


async def test_anything_else_on_the_sandbox_host_goes_to_the_playground_never_to_the_app():
    for path in ("/", "/admin/", "/sessions/1/"):
        behind, sent = await request(path, "localhost:8000")
        assert behind.scopes == [] and sent[0]["status"] == 302
        assert headers(sent)["location"] == f"http://127.0.0.1:8000{path}"
    behind, sent = await request("/ws/sessions/1/", "localhost:8000", kind="websocket")
    assert behind.scopes == [] and sent == [{"type": "websocket.close", "code": 4403}]


async def test_the_playgrounds_host_reaches_the_app():
    behind, sent = await request("/", "127.0.0.1:8000")
    assert len(behind.scopes) == 1 and sent[1]["body"] == b"the playground"


async def test_a_sandbox_origin_behind_a_proxy(settings):
    settings.PLAYGROUND_APPS_SANDBOX = "https://apps-sandbox.example.org"
    settings.PLAYGROUND_TRUSTED_ORIGINS = ["https://playground.example.org"]
    query = urlencode({"host": "https://playground.example.org"})
    behind, sent = await request("/sandbox/proxy", "apps-sandbox.example.org", query)
    assert behind.scopes == [] and directives(headers(sent)["content-security-policy"])["frame-ancestors"] == (
        "https://playground.example.org"
    )
    behind, sent = await request("/", "apps-sandbox.example.org")
    assert behind.scopes == [] and sent[0]["status"] == 404
    behind, _sent = await request("/", "localhost:8000")
    assert len(behind.scopes) == 1  # (localhost is the playground's again)


@pytest.mark.django_db
def test_the_playgrounds_pages_may_frame_the_sandbox_origin_only(settings):
    policy = directives(Client(HTTP_HOST="127.0.0.1:8000").get("/login/")["Content-Security-Policy"])
    assert policy["frame-src"] == "'self' http://localhost:8000"
    assert policy["frame-ancestors"] == "'none'" and policy["script-src"] == "'self'"
    settings.PLAYGROUND_APPS_SANDBOX = ""
    policy = directives(Client(HTTP_HOST="127.0.0.1:8000").get("/login/")["Content-Security-Policy"])
    assert policy["frame-src"] == "'self'"


@pytest.mark.parametrize(
    ("setting", "origin", "host"),
    [
        ("LocalHost", "http://localhost:8000", "LOCALHOST:8000"),
        ("HTTPS://Apps-Sandbox.Example.org:443/", "https://apps-sandbox.example.org", "apps-sandbox.example.org"),
        (
            "https://apps-sandbox.example.org:8443",
            "https://apps-sandbox.example.org:8443",
            "Apps-Sandbox.example.org:8443",
        ),
    ],
)
async def test_the_sandbox_origin_is_named_as_the_browser_names_it(settings, setting, origin, host):
    """One place computes it, in the browser's form (lower case, no default port): the page
    compares it with each message's `origin` as is, and the sandbox's requests are recognised."""
    from playground.core.sandbox import sandbox_origin

    settings.PLAYGROUND_APPS_SANDBOX = setting
    settings.PLAYGROUND_TRUSTED_ORIGINS = ["http://127.0.0.1:8000"]
    assert sandbox_origin("http", "127.0.0.1:8000") == origin
    behind, sent = await request("/sandbox/proxy", host, urlencode({"host": "http://127.0.0.1:8000"}))
    assert behind.scopes == [] and sent[0]["status"] == 200


@pytest.mark.django_db
def test_the_session_page_is_given_the_sandbox_origin_exactly(settings):
    from django.contrib.auth import get_user_model

    from playground.registry.models import Server
    from playground.transcripts.models import Session

    settings.PLAYGROUND_APPS_SANDBOX = "LocalHost"
    user = get_user_model().objects.create(username="u")
    session = Session.objects.create(server=Server.objects.create(name="s", owner=user, command="x"), owner=user)
    client = Client(HTTP_HOST="127.0.0.1:8000")
    client.force_login(user)
    page = client.get(f"/sessions/{session.pk}/").content.decode()
    assert 'data-apps-sandbox="http://localhost:8000"' in page


async def test_the_redirect_keeps_the_raw_path_and_the_query():
    """`/a%2Fb` is not `/a/b`, and `?next=…` is part of where the person was going."""
    behind, sent = await request(
        "/sessions/a/b c/", "localhost:8000", "next=%2Fsessions%2F1%2F&x=1 2", raw_path=b"/sessions/a%2Fb%20c/"
    )
    assert behind.scopes == [] and sent[0]["status"] == 302
    assert headers(sent)["location"] == "http://127.0.0.1:8000/sessions/a%2Fb%20c/?next=%2Fsessions%2F1%2F&x=1%202"
    _behind, sent = await request("/\r\nSet-Cookie: x=1/é", "localhost:8000", raw_path=b"/\r\nSet-Cookie: x=1/\xc3\xa9")
    assert headers(sent)["location"] == "http://127.0.0.1:8000/%0D%0ASet-Cookie:%20x=1/%C3%A9"
