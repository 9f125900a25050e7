"""The HAR export: one entry per HTTP exchange of a real session (Streamable HTTP, HTTP+SSE,
the OAuth flow), SSE streams as their event text, secrets masked as the other exports mask them,
and every file valid against the HAR 1.2 JSON Schema (tests/wire/har-schema, what DevTools'
importer reads)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jsonschema
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import AsyncClient
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT6

from playground.mcp.auth import HeadlessAuthorizer, MemoryStore, OAuth
from playground.mcp.config import ServerConfig
from playground.mcp.connect import open_client
from playground.mcp.events import Tap
from playground.mcp.secrets import MASK, Redactor
from playground.registry.models import Server
from playground.transcripts import har
from playground.transcripts.models import Event, Session, ShareLink
from tests.auth_peer import auth_mock

SCHEMAS = Path(__file__).resolve().parent / "har-schema"
SECRET = "k-har-0123456789abcdef"
STARTED = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)


def _validator() -> jsonschema.Draft6Validator:
    resources = []
    for path in SCHEMAS.glob("*.json"):
        contents = json.loads(path.read_text())
        resources.append((path.name, Resource.from_contents(contents, default_specification=DRAFT6)))
    registry = Registry().with_resources(resources)
    return jsonschema.Draft6Validator(
        json.loads((SCHEMAS / "har.json").read_text()),
        registry=registry,
        format_checker=jsonschema.Draft6Validator.FORMAT_CHECKER,
    )


def valid_har(text: str) -> dict[str, Any]:
    """Parse and validate, plus what the schema's formats leave unchecked here (no uri or
    date-time checker is installed): ASCII URIs and dates DevTools' importer can parse."""
    document = json.loads(text)
    errors = sorted(_validator().iter_errors(document), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    for entry in document["log"]["entries"]:
        assert entry["request"]["url"].isascii() and urlsplit(entry["request"]["url"]).scheme in ("http", "https")
        datetime.fromisoformat(entry["startedDateTime"])
        assert all(
            isinstance(entry["timings"][k], (int, float)) and entry["timings"][k] >= 0
            for k in ("send", "wait", "receive")
        )
    return document


async def _record(config: ServerConfig, work: Any, auth: OAuth | None = None) -> list[dict[str, Any]]:
    tap = Tap()
    rows: list[dict[str, Any]] = []
    tap.subscribe(lambda e: rows.append(e.to_dict()))
    client = await open_client(config, tap=tap, auth=auth)
    try:
        await work(client)
    finally:
        await client.close()
    return rows


def _exchanges(rows: list[dict[str, Any]]) -> set[int]:
    return {r["http"]["exchange"] for r in rows if isinstance(r.get("http"), dict)}


def _document(rows: list[dict[str, Any]], redact: Redactor = Redactor()) -> dict[str, Any]:
    return valid_har("".join(har.document([redact.obj(r) for r in rows], STARTED, "test")))


@pytest.mark.timeout(60)
async def test_streamable_http_session_one_entry_per_exchange(sdk_http):
    async def work(client: Any) -> None:
        await client.list_tools()
        await client.call_tool("echo", {"text": "hello"})

    rows = await _record(ServerConfig(transport="http", url=sdk_http, headers={"X-Api-Key": SECRET}, timeout=20), work)
    document = _document(rows)
    entries = document["log"]["entries"]
    assert len(entries) == len(_exchanges(rows))
    assert SECRET not in json.dumps(document)  # the tap masked the configured header
    by_method: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_method.setdefault(entry["request"]["method"], []).append(entry)
    assert len(by_method["DELETE"]) == 1 and by_method["GET"]  # the session's end, the standalone stream
    call = next(e for e in by_method["POST"] if '"tools/call"' in e["request"]["postData"]["text"])
    sent = next(r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "tools/call")
    assert call["request"]["postData"] == {"mimeType": "application/json", "text": sent["raw"]}
    headers = {h["name"].lower(): h["value"] for h in call["request"]["headers"]}
    assert headers["x-api-key"] == MASK and headers["mcp-session-id"] and headers["mcp-protocol-version"]
    assert headers["user-agent"].startswith("python-httpx")  # as sent, httpx's own headers too
    assert call["response"]["status"] == 200
    # The SDK peer answers a call on an SSE stream of its own: the body is that stream's text.
    answer = next(r for r in rows if r["dir"] == "recv" and r.get("reply_to") == sent["seq"])
    assert call["response"]["content"]["mimeType"] == "text/event-stream"
    assert f"data: {answer['raw']}\n\n" in call["response"]["content"]["text"] and '"hello"' in answer["raw"]
    assert call["_transcriptSeq"][0] == sent["seq"]
    # Written as each exchange completed (streamed); the standalone GET stream, open to the end, last.
    ended = [e["_transcriptSeq"][-1] for e in entries if e["request"]["method"] != "GET"]
    assert ended == sorted(ended) and entries[-1]["request"]["method"] == "GET"
    initialized = next(e for e in by_method["POST"] if "notifications/initialized" in e["request"]["postData"]["text"])
    assert initialized["response"]["status"] == 202 and initialized["response"]["content"]["text"] == ""


@pytest.mark.timeout(60)
async def test_http_sse_session_stream_as_event_text(sdk_sse):
    async def work(client: Any) -> None:
        await client.call_tool("echo", {"text": "over sse"})

    rows = await _record(ServerConfig(transport="sse", url=sdk_sse, timeout=20), work)
    document = _document(rows)
    entries = document["log"]["entries"]
    assert len(entries) == len(_exchanges(rows))
    stream = next(e for e in entries if e["request"]["method"] == "GET")
    frames = [r for r in rows if r["dir"] == "recv"]
    assert stream["response"]["content"]["mimeType"].startswith("text/event-stream")
    text = stream["response"]["content"]["text"]
    assert text.count("\n\n") == len(frames) + 1  # the endpoint event, then every frame as an event
    # The stream's text as the server sent it (issue 31: HAR dropped the event names and the endpoint).
    endpoint = next(r for r in rows if (r.get("data") or {}).get("sse_event") == "endpoint")
    assert text.startswith(f"event: endpoint\ndata: {endpoint['data']['sse_data']}\n\n")
    assert endpoint["data"]["sse_data"].startswith("/messages/?session_id=")
    assert text.count("event: message\n") == len(frames) and all(r.get("sse_event") == "message" for r in frames)
    assert "over sse" in text
    assert stream["timings"]["receive"] >= 0 and len(stream["_transcriptSeq"]) == len(frames) + 2
    posts = [e for e in entries if e["request"]["method"] == "POST"]
    assert posts and all(e["response"]["status"] == 202 for e in posts)


@pytest.mark.timeout(90)
async def test_oauth_exchanges_are_entries_with_their_secrets_masked():
    with auth_mock("auth/scope-step-up", "2025-11-25") as url:
        tap_holder: dict[str, OAuth] = {}

        async def work(client: Any) -> None:
            await client.list_tools()
            await client.call_tool("test-tool", {})

        tap = Tap()
        rows: list[dict[str, Any]] = []
        tap.subscribe(lambda e: rows.append(e.to_dict()))
        oauth = OAuth(tap, url, authorizer=HeadlessAuthorizer(), store=MemoryStore())
        tap_holder["oauth"] = oauth
        client = await open_client(ServerConfig(transport="http", url=url, timeout=20), tap=tap, auth=oauth)
        try:
            await work(client)
        finally:
            await client.close()
    document = _document(rows, oauth.redactor())
    dumped = json.dumps(document)
    assert not [s for s in oauth.secret_values() if s in dumped]
    entries = document["log"]["entries"]
    assert len(entries) == len(_exchanges(rows))
    token = [
        e
        for e in entries
        if e["request"]["method"] == "POST" and "grant_type=" in (e["request"].get("postData") or {}).get("text", "")
    ]
    assert token and "access_token" in token[0]["response"]["content"]["text"]
    posted = token[0]["request"]["postData"]
    assert posted["mimeType"] == "application/x-www-form-urlencoded"
    # A form body as it went over the wire (the transcript keeps it one field a line), and its fields.
    fields = parse_qsl(posted["text"], keep_blank_values=True, strict_parsing=True)
    assert "\n" not in posted["text"] and ("grant_type", "authorization_code") in fields
    assert [(p["name"], p["value"]) for p in posted["params"]] == fields
    assert dict(fields)["code"] == MASK and dict(fields)["code_verifier"] == MASK  # secrets stay masked
    assert token[0]["request"]["bodySize"] == len(posted["text"].encode())
    challenges = [e for e in entries if e["response"]["status"] == 401]
    assert challenges and any(h["name"].lower() == "www-authenticate" for h in challenges[0]["response"]["headers"])
    # The MCP requests after the token carry it, masked, on the frame's own line too.
    sends = [r for r in rows if r["dir"] == "send" and "Authorization" in r["http"]["headers"]]
    assert sends and all(r["http"]["headers"]["Authorization"] == f"Bearer {MASK}" for r in sends)


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
async def test_owner_and_share_exports_stream_a_valid_masked_har(sdk_http):
    async def work(client: Any) -> None:
        await client.call_tool("echo", {"text": f"echo {SECRET}"})  # the server repeats a secret

    rows = await _record(ServerConfig(transport="http", url=sdk_http, headers={"X-Api-Key": SECRET}, timeout=20), work)
    user = await sync_to_async(get_user_model().objects.create_user)("har", password="pw")

    def save() -> tuple[Session, ShareLink]:
        server = Server.objects.create(
            name="sdk", transport="http", url=sdk_http, headers={"X-Api-Key": SECRET}, owner=user
        )
        session = Session.objects.create(
            server=server,
            server_name="sdk",
            owner=user,
            status="ended",
            transport="streamable-http",
            secret_values=server.to_config().secret_values(),
        )
        Event.objects.bulk_create([Event(session=session, seq=r["seq"], t=r["t"], dir=r["dir"], data=r) for r in rows])
        return session, ShareLink.objects.create(session=session, created_by=user)

    session, link = await sync_to_async(save)()
    browser = AsyncClient()
    await browser.aforce_login(user)
    owner = await browser.get(f"/sessions/{session.pk}/export.har?secrets=1")
    assert owner["Content-Disposition"] == f'attachment; filename="session-{session.pk}.har"'
    owned = b"".join([chunk async for chunk in owner.streaming_content]).decode()
    assert f"echo {SECRET}" in owned  # the owner asked for what the server sent
    valid_har(owned)
    default = await browser.get(f"/sessions/{session.pk}/export.har")  # masked unless asked (issue 31)
    masked = b"".join([chunk async for chunk in default.streaming_content]).decode()
    assert SECRET not in masked and "echo ••••" in masked
    valid_har(masked)
    shared = await AsyncClient().get(f"/share/{link.token}/export.har")
    text = b"".join([chunk async for chunk in shared.streaming_content]).decode()
    assert SECRET not in text and f"echo {MASK}" in text
    assert len(valid_har(text)["log"]["entries"]) == len(_exchanges(rows))
    page = (await browser.get(f"/sessions/{session.pk}/")).content.decode()
    assert "Export HAR" in page and "Copy as curl" in page and 'id="curl-secrets"' in page
    share_page = (await AsyncClient().get(f"/share/{link.token}/")).content.decode()
    assert f"/share/{link.token}/export.har" in share_page and "Copy as curl" in share_page
    assert 'id="curl-secrets"' not in share_page and "include secrets" not in share_page


def test_rows_recorded_before_exchange_numbers_are_grouped_by_what_they_say():
    post = {"method": "POST", "url": "http://127.0.0.1:1/mcp", "headers": {"Content-Type": "application/json"}}
    answer = {
        "method": "POST",
        "url": "http://127.0.0.1:1/mcp",
        "status": 200,
        "headers": {"content-type": "application/json"},
        "content_type": "application/json",
    }
    stream = {
        "method": "GET",
        "url": "http://127.0.0.1:1/mcp",
        "status": 200,
        "headers": {"content-type": "text/event-stream"},
        "content_type": "text/event-stream",
    }
    rows = [
        {"seq": 1, "t": 0.1, "dir": "send", "raw": '{"id":1}', "http": post},
        {"seq": 2, "t": 0.2, "dir": "note", "kind": "http", "text": "GET → 200", "http": stream},
        {"seq": 3, "t": 0.3, "dir": "recv", "raw": '{"id":1,"result":{}}', "reply_to": 1, "http": answer},
        {"seq": 4, "t": 0.4, "dir": "recv", "raw": '{"method":"a"}', "sse_id": "7", "http": stream},
        {"seq": 5, "t": 0.5, "dir": "recv", "raw": '{"method":"b"}', "http": stream},
        {"seq": 6, "t": 0.6, "dir": "stderr", "raw": "x"},
    ]
    entries = _document(rows)["log"]["entries"]
    assert [e["_transcriptSeq"] for e in entries] == [[1, 3], [2, 4, 5]]
    assert entries[1]["response"]["content"]["text"] == 'id: 7\ndata: {"method":"a"}\n\ndata: {"method":"b"}\n\n'
    assert entries[0]["timings"]["wait"] == pytest.approx(200.0)


def _stream_rows(count: int) -> list[dict[str, Any]]:
    """A standalone GET stream open the whole session, and `count` POSTs answered with SSE."""
    url = "http://127.0.0.1:1/mcp"
    stream = {
        "method": "GET",
        "url": url,
        "status": 200,
        "headers": {"content-type": "text/event-stream"},
        "content_type": "text/event-stream",
        "exchange": 1,
    }
    rows: list[dict[str, Any]] = [{"seq": 1, "t": 0.0, "dir": "note", "kind": "http", "text": "GET", "http": stream}]
    for i in range(count):
        seq, exchange = 2 + 3 * i, 2 + i
        post = {"method": "POST", "url": url, "headers": {"Content-Type": "application/json"}, "exchange": exchange}
        answer = {
            **post,
            "status": 200,
            "headers": {"content-type": "text/event-stream"},
            "content_type": "text/event-stream",
        }
        message = {"jsonrpc": "2.0", "id": i, "method": "ping"}
        rows += [
            {"seq": seq, "t": seq / 10, "dir": "send", "raw": json.dumps(message), "message": message, "http": post},
            {
                "seq": seq + 1,
                "t": seq / 10,
                "dir": "recv",
                "raw": '{"method":"notifications/progress"}',
                "http": answer,
            },
            {
                "seq": seq + 2,
                "t": seq / 10,
                "dir": "recv",
                "raw": json.dumps({"id": i, "result": {}}),
                "reply_to": seq,
                "http": {"exchange": exchange, "method": "POST", "url": url},
            },
        ]
    rows.append(
        {
            "seq": 2 + 3 * count,
            "t": 99.0,
            "dir": "recv",
            "raw": '{"method":"late"}',
            "http": {"exchange": 1, "method": "GET", "url": url},
        }
    )
    return rows


def test_entries_are_written_as_their_exchanges_complete():
    """The first entry comes out after the rows of its exchange, not after the whole session;
    the standalone stream, open to the end, comes last."""
    rows = _stream_rows(1000)
    taken = 0

    def counted() -> Any:
        nonlocal taken
        for row in rows:
            taken += 1
            yield row

    pieces = har.document(counted(), STARTED, "test")
    next(pieces)  # the log's head
    first = json.loads(next(pieces).lstrip(",\n"))
    assert first["_transcriptSeq"] == [2, 3, 4] and taken == 4
    document = valid_har(
        "".join(
            [
                '{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "pages": [], "entries": [',
                json.dumps(first),
                *pieces,
            ]
        )
    )
    entries = document["log"]["entries"]
    assert len(entries) == 1001 and taken == len(rows)
    assert entries[-1]["_transcriptSeq"] == [1, len(rows)]  # the GET stream, with its late event
    assert "progress" in entries[1]["response"]["content"]["text"] and entries[1]["_transcriptSeq"] == [5, 6, 7]


@pytest.mark.django_db
def test_times_count_from_the_sessions_clock_origin(client):
    """An event happened at clock_origin + t (the page and the JSON export say so too), not at
    started_at + t: the tap's clock starts when the transport does."""
    user = get_user_model().objects.create_user("clock", password="pw")
    origin = datetime(2026, 11, 20, 10, 0, 5, tzinfo=UTC)
    session = Session.objects.create(
        server_name="s",
        owner=user,
        status="ended",
        transport="streamable-http",
        started_at=STARTED,
        clock_origin=origin,
    )
    Session.objects.filter(pk=session.pk).update(started_at=STARTED)  # (auto_now_add)
    Event.objects.bulk_create(
        [Event(session=session, seq=r["seq"], t=r["t"], dir=r["dir"], data=r) for r in _stream_rows(1)]
    )
    client.force_login(user)
    response = client.get(f"/sessions/{session.pk}/export.har")
    entries = valid_har(b"".join(response.streaming_content).decode())["log"]["entries"]
    assert entries[0]["startedDateTime"] == "2026-11-20T10:00:05.200+00:00"


def test_a_stream_longer_than_an_entrys_budget_keeps_its_head_and_says_what_it_left_out(monkeypatch):
    """A standalone GET stream is held until it ends: a server streaming gigabytes on it would
    be held whole for one entry. The entry keeps `budget.HAR_ENTRY` of it and says how many
    events it left out (the JSONL export has them all)."""
    from playground import budget

    small = budget.Limits("HAR entry", steps=0, output=2_000, seconds=float("inf"), says=budget.HAR_ENTRY.says)
    monkeypatch.setattr(har, "HAR_ENTRY", small)
    stream = {
        "method": "GET",
        "url": "http://127.0.0.1:1/mcp",
        "status": 200,
        "headers": {"content-type": "text/event-stream"},
        "content_type": "text/event-stream",
        "exchange": 1,
    }
    rows = [
        {
            "seq": 1 + i,
            "t": i / 10,
            "dir": "recv",
            "raw": json.dumps({"method": "n", "params": {"i": i, "pad": "x" * 80}}),
            "http": stream,
        }
        for i in range(100)
    ]
    entry = _document(rows)["log"]["entries"][0]
    text = entry["response"]["content"]["text"]
    kept = text.count("data: ")
    assert 0 < kept < 100 and len(text) <= small.output
    assert f"the {100 - kept} after them are left out" in entry["comment"]
    assert entry["comment"].startswith("SSE stream") and "too large to show in one HAR entry" in entry["comment"]
    assert entry["_transcriptSeq"] == list(range(1, 101))
