"""OAuth 2.1 in the client core, against the conformance suite's mocks as real peers (an MCP
server behind a real authorization server), plus the parsing rules on their own."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from playground.mcp.auth import AuthSettings, HeadlessAuthorizer, MemoryStore, OAuth
from playground.mcp.auth.challenge import bearer_challenge, parse_challenges
from playground.mcp.auth.flow import backcompat_applies
from playground.mcp.auth.httpx_auth import protocol_version_of
from playground.mcp.auth.jwt import decode_unverified
from playground.mcp.auth.metadata import as_metadata_urls, canonical_resource, prm_urls, resource_matches
from playground.mcp.auth.recorder import mask_body, mask_url
from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.events import Tap, TranscriptEvent
from playground.mcp.secrets import MASK
from tests.auth_peer import auth_mock, sdk_auth_server
from tests.peers.sdk_auth_server import PRE_REGISTERED


def _tap() -> tuple[Tap, list[TranscriptEvent]]:
    tap = Tap()
    events: list[TranscriptEvent] = []
    tap.subscribe(events.append)
    return tap, events


def _steps(events: list[TranscriptEvent]) -> list[tuple[str, str]]:
    return [(e.data["step"], e.data["status"]) for e in events if e.kind == "auth"]


def _auth_http(events: list[TranscriptEvent], step: str) -> list[TranscriptEvent]:
    return [e for e in events if e.kind == "http" and (e.data or {}).get("auth_step") == step]


@pytest.mark.timeout(60)
async def test_authorization_code_flow_then_step_up_against_a_real_authorization_server() -> None:
    tap, events = _tap()
    with auth_mock("auth/scope-step-up", "2025-11-25") as url:
        oauth = OAuth(tap, url, authorizer=HeadlessAuthorizer(), store=MemoryStore())
        client = await open_client(ServerConfig(transport="http", url=url, timeout=20), tap=tap, auth=oauth)
        try:
            tools = await client.list_tools()
            result = await client.call_tool("test-tool", {})
        finally:
            await client.close()
    assert [t["name"] for t in tools] == ["test-tool"]
    assert result["content"][0]["text"] == "test"
    steps = _steps(events)
    for expected in [
        ("challenge", "info"),
        ("resource-metadata", "ok"),
        ("authorization-server-metadata", "ok"),
        ("registration", "ok"),
        ("authorization-request", "info"),
        ("authorization-response", "ok"),
        ("token", "ok"),
        ("retry", "ok"),
        ("step-up", "info"),
    ]:
        assert expected in steps, (expected, steps)
    assert steps.count(("token", "ok")) == 2  # the first token, then the stepped-up one
    requests = [e.data["params"] for e in events if e.kind == "auth" and e.data["step"] == "authorization-request"]
    assert requests[0]["scope"] == "mcp:basic"
    assert set(requests[1]["scope"].split()) == {"mcp:basic", "mcp:write"}  # union on re-authorization
    assert all(r["code_challenge_method"] == "S256" and r["resource"] == url for r in requests)
    # Secrets never reach an event: tokens, the code, the verifier, the DCR client secret.
    secrets = oauth.secret_values()
    assert len(secrets) >= 5
    dumped = json.dumps([e.to_dict() for e in events])
    assert not [s for s in secrets if s in dumped]
    token_exchange = _auth_http(events, "token")[0]
    assert json.loads(token_exchange.data["response_body"])["access_token"] == MASK
    assert f"code={MASK}" in token_exchange.data["request_body"].splitlines()


@pytest.mark.timeout(60)
async def test_a_wrong_iss_is_refused_before_the_code_reaches_the_token_endpoint() -> None:
    tap, events = _tap()
    with auth_mock("auth/iss-wrong-issuer", "2026-07-28") as url:
        oauth = OAuth(tap, url, settings=AuthSettings(), authorizer=HeadlessAuthorizer())
        with pytest.raises(ConnectError) as failure:
            await open_client(ServerConfig(transport="http", url=url, era="modern", timeout=20), tap=tap, auth=oauth)
    # The error names the step and why, not only the server's "invalid_token".
    assert str(failure.value).startswith(
        "HTTP 401: authorization refused at authorization-response: the response's "
        "iss 'https://evil.example.com' is not the recorded issuer"
    )
    assert oauth.outcome.status == "refused" and oauth.outcome.step == "authorization-response"
    assert "https://evil.example.com" in oauth.refusal
    assert _auth_http(events, "token") == []
    failed = [e for e in events if e.kind == "auth" and e.data["status"] == "refused"]
    assert "RFC 9207" in failed[0].data["expected"]


@pytest.mark.timeout(60)
async def test_pre_registered_client_uses_basic_auth_and_no_registration() -> None:
    tap, events = _tap()
    with auth_mock("auth/pre-registration", "2026-07-28") as url:
        # The mock accepts exactly these credentials (its MCP_CONFORMANCE_CONTEXT).
        settings = AuthSettings(client_id="pre-registered-client", client_secret="pre-registered-secret")
        oauth = OAuth(tap, url, settings=settings)
        client = await open_client(
            ServerConfig(transport="http", url=url, era="modern", timeout=20), tap=tap, auth=oauth
        )
        try:
            assert [t["name"] for t in await client.list_tools()] == ["test-tool"]
        finally:
            await client.close()
    assert ("registration", "ok") in _steps(events)
    assert _auth_http(events, "registration") == []
    token_exchange = _auth_http(events, "token")[0]
    assert token_exchange.http["request_headers"]["Authorization"] == f"Basic {MASK}"
    assert "pre-registered-secret" not in json.dumps([e.to_dict() for e in events])


@pytest.mark.timeout(60)
async def test_a_pre_registered_client_stays_bound_to_its_issuer_across_sessions() -> None:
    """auth/authorization-server-migration: the resource moves to another authorization server
    after the first authorized request. The settings name no issuer, so the client is bound to
    the first one it met; the next session (same store) must not take it to the new one."""
    store = MemoryStore()
    settings = AuthSettings(client_id="pre-registered-at-as1", client_secret="as1-only-s3cret")
    with auth_mock("auth/authorization-server-migration", "2026-07-28") as url:
        first_tap, first_events = _tap()
        first = OAuth(first_tap, url, settings=settings, store=store)
        client = await open_client(
            ServerConfig(transport="http", url=url, era="modern", timeout=20), tap=first_tap, auth=first
        )
        await client.close()  # server/discover was authorized at AS1; AS2 from now on
        tap, events = _tap()
        second = OAuth(tap, url, settings=settings, store=store)
        client = await open_client(
            ServerConfig(transport="http", url=url, era="modern", timeout=20), tap=tap, auth=second
        )
        try:
            await client.list_tools()
        finally:
            await client.close()
    as1 = first.record.issuer
    assert [e.data.get("source") for e in first_events if e.kind == "auth" and e.data["step"] == "registration"] == [
        "pre-registered"
    ]
    assert second.record.issuer != as1 and second.record.client.source == "dcr"
    assert second.record.client.client_id == "as2-client-id"
    notes = [e.text for e in events if e.kind == "auth" and e.data["step"] == "registration"]
    assert f"the pre-registered client pre-registered-at-as1 belongs to {as1}, not {second.record.issuer}" in notes[0]
    sent = json.dumps([e.to_dict() for e in events if e.kind == "http" and e.data.get("auth_step")])
    assert "pre-registered-at-as1" not in sent  # neither at AS2's authorize nor its token endpoint


async def _whoami(client) -> str:
    return (await client.call_tool("whoami", {}))["content"][0]["text"]


@pytest.mark.timeout(60)
async def test_pre_registered_client_refresh_and_revocation_at_the_official_sdk_authorization_server() -> None:
    tap, events = _tap()
    client_id, secret = PRE_REGISTERED
    with sdk_auth_server() as url:
        settings = AuthSettings(client_id=client_id, client_secret=secret, auth_method="client_secret_post")
        oauth = OAuth(tap, url, settings=settings)
        client = await open_client(ServerConfig(transport="http", url=url, timeout=20), tap=tap, auth=oauth)
        try:
            assert await _whoami(client) == "authorized"
            first = oauth.record.tokens
            claims = decode_unverified(first.access_token)["claims"]
            assert (claims["aud"], claims["scope"], claims["client_id"]) == (url, "mcp:read", client_id)

            assert await oauth.refresh()
            second = oauth.record.tokens
            assert second.access_token != first.access_token and second.refresh_token != first.refresh_token
            assert await _whoami(client) == "authorized"  # the resource server takes the new token

            second.expires_at = time.time()  # as if an hour had passed: refreshed first
            assert await _whoami(client) == "authorized"
            assert oauth.record.tokens.access_token != second.access_token
            second = oauth.record.tokens

            await oauth.revoke()
            assert oauth.record.tokens is None
            async with httpx.AsyncClient() as http:  # the authorization server forgot it
                refused = await http.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 9, "method": "ping"},
                    headers={
                        "Authorization": f"Bearer {second.access_token}",
                        "Accept": "application/json, text/event-stream",
                    },
                )
            assert refused.status_code == 401, refused.text
            assert await _whoami(client) == "authorized"  # no token: a new authorization, on its own
        finally:
            await client.close()

        # Registered by DCR, the client authenticates with client_secret_basic; the SDK's revocation
        # endpoint (2.3.0) also wants a client_secret form field and answers 400: said, not hidden.
        dcr_tap, dcr_events = _tap()
        dcr = OAuth(dcr_tap, url)
        client = await open_client(ServerConfig(transport="http", url=url, timeout=20), tap=dcr_tap, auth=dcr)
        try:
            assert await _whoami(client) == "authorized"
            assert dcr.record.client.auth_method == "client_secret_basic"
            await dcr.revoke()
        finally:
            await client.close()
    steps = _steps(events)
    assert ("registration", "ok") in steps and _auth_http(events, "registration") == []
    assert steps.count(("refresh", "ok")) == 2 and ("revoke", "ok") in steps and steps.count(("token", "ok")) == 2
    assert [e.http["status"] for e in _auth_http(events, "revoke")] == [200, 200]  # refresh and access token
    posted = _auth_http(events, "token") + _auth_http(events, "refresh") + _auth_http(events, "revoke")
    assert all(f"client_secret={MASK}" in e.data["request_body"].splitlines() for e in posted)
    dumped = json.dumps([e.to_dict() for e in events])
    assert not [s for s in oauth.secret_values() + [first.access_token, second.refresh_token, secret] if s in dumped]

    assert all(e.http["request_headers"]["Authorization"] == f"Basic {MASK}" for e in _auth_http(dcr_events, "token"))
    revoked = [e for e in dcr_events if e.kind == "auth" and e.data["step"] == "revoke"]
    assert revoked[-1].data["status"] == "failed" and "may still be valid" in revoked[-1].text
    assert "error=invalid_request" in revoked[-1].text and "RFC 7009" in revoked[-1].data["expected"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "scenario", ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"]
)
async def test_the_2025_03_26_fallback_is_for_a_session_speaking_2025_03_26_only(scenario: str) -> None:
    """A server without Protected Resource Metadata: a client offering 2025-03-26 finds the
    authorization server at the server's origin (and default endpoints); one offering
    2025-11-25, which MUST use PRM, stops at resource-metadata and asks nothing of the origin."""
    old_tap, old_events = _tap()
    new_tap, new_events = _tap()
    with auth_mock(scenario, "2025-03-26") as url:
        config = ServerConfig(transport="http", url=url, timeout=20)
        # The version set on the server (the page's Protocol version, the CLI's --protocol-version).
        old = ServerConfig(transport="http", url=url, timeout=20, protocol_version="2025-03-26")
        client = await open_client(old, tap=old_tap, auth=OAuth(old_tap, url))
        try:
            assert client.protocol_version == "2025-03-26"
            await client.list_tools()
        finally:
            await client.close()
        strict = OAuth(new_tap, url)
        with pytest.raises(ConnectError):
            await open_client(config, tap=new_tap, auth=strict)
    assert ("backcompat", "info") in _steps(old_events) and ("token", "ok") in _steps(old_events)
    backcompat = next(e for e in old_events if e.kind == "auth" and e.data["step"] == "backcompat")
    assert backcompat.data["protocol_version"] == "2025-03-26"

    assert (strict.outcome.status, strict.outcome.step) == ("failed", "resource-metadata")
    failed = [e for e in new_events if e.kind == "auth" and e.data["status"] == "failed"]
    assert [e.data["step"] for e in failed] == ["resource-metadata"]
    assert (
        "made under 2025-11-25" in failed[0].text and "applies only to a session speaking" in failed[0].data["expected"]
    )
    assert ("backcompat", "info") not in _steps(new_events)
    assert [_auth_http(new_events, step) for step in ("authorization-server-metadata", "registration", "token")] == [
        [],
        [],
        [],
    ]


def test_the_protocol_version_a_request_is_made_under() -> None:
    def post(body: object, headers: dict[str, str] | None = None) -> httpx.Request:
        return httpx.Request("POST", "http://127.0.0.1/mcp", json=body, headers=headers)

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}
    assert protocol_version_of(post(initialize)) == "2025-03-26"  # offered in the handshake
    assert protocol_version_of(post(initialize, {"MCP-Protocol-Version": "2025-11-25"})) == "2025-11-25"
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert protocol_version_of(post(listing), "2025-06-18") == "2025-06-18"  # HTTP+SSE: no header
    assert protocol_version_of(post(listing)) is None
    assert protocol_version_of(httpx.Request("GET", "http://127.0.0.1/sse")) is None
    assert protocol_version_of(httpx.Request("POST", "http://127.0.0.1/mcp", content=b"not json")) is None
    assert [
        backcompat_applies(v)
        for v in ("2025-03-26", "2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28", None, "", "draft")
    ] == [True, True, False, False, False, False, False, False]


def test_www_authenticate_parsing() -> None:
    c = bearer_challenge(
        [
            'Basic realm="x", Bearer error="insufficient_scope", scope="a b", '
            'resource_metadata="https://h/.well-known/oauth-protected-resource", error_description="a, b"'
        ]
    )
    assert c is not None and c.error == "insufficient_scope" and c.scopes == ["a", "b"]
    assert c.resource_metadata == "https://h/.well-known/oauth-protected-resource"
    assert c.params["error_description"] == "a, b"
    assert [x.scheme for x in parse_challenges('Bearer, DPoP algs="ES256"')] == ["Bearer", "DPoP"]
    assert bearer_challenge(["Negotiate abc=="]) is None


def test_discovery_urls_follow_the_spec_order() -> None:
    assert prm_urls("https://Example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert [u for u, _ in as_metadata_urls("https://auth.example.com/tenant1")] == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert [u for u, _ in as_metadata_urls("https://auth.example.com")] == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]
    assert canonical_resource("HTTPS://MCP.example.com/mcp/#frag") == "https://mcp.example.com/mcp"
    assert resource_matches("https://mcp.example.com", "https://mcp.example.com/mcp")
    assert not resource_matches("https://mcp.example.com/mc", "https://mcp.example.com/mcp")
    assert not resource_matches("https://evil.example.com/mcp", "https://mcp.example.com/mcp")


def test_masking_of_codes_and_tokens() -> None:
    assert (
        mask_url("http://127.0.0.1/callback?code=abc123&state=s1&iss=https://as")
        == f"http://127.0.0.1/callback?code={MASK}&state=s1&iss=https://as"
    )
    body = json.loads(mask_body(b'{"access_token":"t1","refresh_token":"r1","scope":"a"}', "application/json"))
    assert body == {"access_token": MASK, "refresh_token": MASK, "scope": "a"}
    assert (
        mask_body(
            b"grant_type=refresh_token&refresh_token=r1&resource=https%3A%2F%2Fh%2Fmcp",
            "application/x-www-form-urlencoded",
        )
        == f"grant_type=refresh_token\nrefresh_token={MASK}\nresource=https://h/mcp"
    )


async def test_a_stored_token_goes_only_to_the_resource_it_was_issued_for() -> None:
    """The registry keys tokens by server, not URL: when a server's URL changes, its stored token
    is not sent to the new URL (it stays stored), and the steps say why."""
    from playground.mcp.auth.records import AuthRecord, TokenSet

    store = MemoryStore()
    await store.put(
        "server-1",
        AuthRecord(
            "https://as.example", resource="https://old.example/mcp", tokens=TokenSet(access_token="tok-for-old")
        ),
    )
    tap, events = _tap()
    moved = OAuth(tap, "https://new.example/mcp", store=store, server_key="server-1")
    assert await moved.authorization_header() is None
    note = next(e for e in events if e.kind == "auth" and e.data["step"] == "stored-token")
    assert (
        "issued for https://old.example/mcp, not https://new.example/mcp" in note.text
        and "tok-for-old" not in note.text
    )
    assert (await store.latest("server-1")).tokens.access_token == "tok-for-old"  # kept
    same = OAuth(Tap(), "https://old.example/mcp/", store=store, server_key="server-1")
    assert await same.authorization_header() == "Bearer tok-for-old"
