"""The upload (POST /capture/v1/frames) with a real host's exchange: what it stores, in what
order, and what it refuses (storing nothing)."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from playground.capture.models import Capture, CapturePart, CaptureRecord, CaptureToken
from playground.mcp import jsonrpc
from playground.registry.models import Server
from playground.sessions.live.durability import CAPTURE_SILENT, reap_dead_sessions
from playground.transcripts.models import Event, Session

from .helpers import body, post

pytestmark = pytest.mark.django_db


def rows(session_id: int) -> list[dict[str, Any]]:
    return list(Event.objects.filter(session_id=session_id).order_by("seq").values_list("data", flat=True))


def frames_of(records: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """(direction, parsed message) of each frame record, in the order they happened."""
    return [(r["dir"], json.loads(r["text"])) for r in records if r["kind"] == "frame"]


def test_a_real_exchange_becomes_the_transcript_a_live_session_has(exchange, owner):
    user, server, token = owner
    response = post(Client(), token, body(exchange, server.pk))
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["acked"] == len(exchange) - 1
    session = Session.objects.get(pk=answer["session"])
    assert (session.kind, session.owner, session.server) == (Session.Kind.CAPTURED, user, server)
    saved = rows(session.pk)
    # Every frame, both ways, in the order it happened, as the events the recorder writes.
    assert [(r["dir"], r["message"]) for r in saved if r["dir"] in ("send", "recv")] == frames_of(exchange)
    assert [r["seq"] for r in saved] == list(range(1, len(saved) + 1))
    assert session.event_count == len(saved)
    # Responses are paired with the host's requests, with their latency.
    by_seq = {r["seq"]: r for r in saved}
    responses = [r for r in saved if r["dir"] == "recv" and jsonrpc.classify(r["message"]) == "response"]
    assert responses and all(by_seq[r["reply_to"]]["message"]["id"] == r["message"]["id"] for r in responses)
    assert all(r["latency_ms"] >= 0 for r in responses)
    # The server's elicitation request (recv) is answered by the host (send): paired too.
    answers = [r for r in saved if r["dir"] == "send" and "result" in (r["message"] or {})]
    assert answers and by_seq[answers[0]["reply_to"]]["message"]["method"] == "elicitation/create"
    assert any(r["dir"] == "stderr" and "a line on stderr" in r["text"] for r in saved)
    # (On a loaded machine the upload's lint budget may leave frames unchecked: its note follows.)
    told = [r for r in saved if not str(r.get("text") or "").startswith("schema lint:")]
    assert saved[0]["kind"] == "started" and told[-1]["kind"] == "closed"
    # The host as it introduced itself, the server as it answered.
    host = session.report["host"]
    assert host["clientInfo"] == {"name": "test-host", "version": "9.8.7"}
    assert "elicitation" in host["capabilities"]
    initialize = next(m for d, m in frames_of(exchange) if d == "recv" and "serverInfo" in m.get("result", {}))
    assert session.server_info == initialize["result"]["serverInfo"]
    assert session.protocol_version == initialize["result"]["protocolVersion"]
    assert {t["name"] for t in session.catalogue["tools"]} >= {"echo", "ask_name"}
    # The `end` record ended it.
    assert session.status == Session.Status.ENDED and "exit code 0" in session.end_reason
    assert not CaptureRecord.objects.exists()


def test_resending_stores_nothing_twice(exchange, owner):
    _user, server, token = owner
    client = Client()
    first = post(client, token, body(exchange[:10], server.pk)).json()
    again = post(client, token, body(exchange[:10], server.pk)).json()
    assert again == first == {"session": first["session"], "acked": 9}
    full = post(client, token, body(exchange, server.pk)).json()  # the first ten a third time
    assert full["acked"] == len(exchange) - 1
    assert Session.objects.count() == 1
    assert len([r for r in rows(full["session"]) if r["dir"] in ("send", "recv")]) == len(frames_of(exchange))


def test_out_of_order_uploads_are_stored_in_the_order_things_happened(exchange, owner):
    _user, server, token = owner
    client = Client()
    third = len(exchange) // 3
    later = post(client, token, body(exchange[2 * third :], server.pk)).json()
    assert later["acked"] == -1  # held: a gap before it
    assert not Event.objects.filter(session_id=later["session"]).exists()
    assert CaptureRecord.objects.count() == len(exchange) - 2 * third
    middle = post(client, token, body(exchange[third : 2 * third], server.pk)).json()
    assert middle["acked"] == -1
    first = post(client, token, body(exchange[:third], server.pk)).json()
    assert first["acked"] == len(exchange) - 1
    saved = rows(first["session"])
    assert [(r["dir"], r["message"]) for r in saved if r["dir"] in ("send", "recv")] == frames_of(exchange)
    assert [r["seq"] for r in saved] == list(range(1, len(saved) + 1))
    assert not CaptureRecord.objects.exists()


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[1, 2]",
        '{"capture": "x", "server": 1, "i": 0, "t": 1.0, "kind": "frame"}',
        '{"capture": "%s", "server": 1, "i": -1, "t": 1.0, "kind": "heartbeat"}',
        '{"capture": "%s", "server": 1, "i": 0, "t": 1.0, "kind": "frame", "dir": "sideways", "text": "{}"}',
        '{"capture": "%s", "server": 1, "i": 0, "t": 1.0, "kind": "frame", "dir": "send", "b64": "!!"}',
        '{"capture": "%s", "server": 1, "i": 0, "t": 1.0, "kind": "teleport"}',
    ],
)
def test_a_malformed_upload_records_nothing(exchange, owner, line):
    _user, server, token = owner
    line = line.replace("%s", uuid.uuid4().hex).replace('"server": 1', f'"server": {server.pk}')
    response = post(Client(), token, body(exchange[:5], server.pk) + line.encode() + b"\n")
    assert response.status_code == 400 and response.json()["error"]
    assert not Session.objects.exists() and not Capture.objects.exists()


def test_one_capture_per_upload(exchange, owner):
    _user, server, token = owner
    data = body(exchange[:3], server.pk) + body(exchange[3:5], server.pk, capture=uuid.uuid4().hex)
    assert post(Client(), token, data).status_code == 400
    assert not Session.objects.exists()


def test_an_upload_over_4_mb_is_refused(exchange, owner):
    _user, server, token = owner
    big = dict(exchange[1], text="x" * (4 * 1024 * 1024))
    response = post(Client(), token, body([exchange[0], big], server.pk))
    assert response.status_code == 413
    assert not Session.objects.exists()


def test_tokens_refused_and_other_users_servers(exchange, owner, django_user_model):
    user, server, token = owner
    client = Client()
    data = body(exchange, server.pk)
    assert post(client, "mcpcap_" + "0" * 43, data).status_code == 401
    assert client.post("/capture/v1/frames", data=data, content_type="application/x-ndjson").status_code == 401
    other = django_user_model.objects.create_user("mallory", password="pw")
    theirs = Server.objects.create(owner=other, name="theirs", command="true")
    refused = post(client, token, body(exchange, theirs.pk))
    assert refused.status_code == 403 and refused.json()["error"]
    _, their_token = CaptureToken.issue(other, "m")
    assert post(client, their_token, data).status_code == 403  # alice's server, mallory's token
    # Another site's page cannot post with a token it learnt.
    assert post(client, token, data, Origin="https://evil.example").status_code == 403
    assert not Session.objects.exists()
    # Revoked: refused; rotated: the old value is refused, the new one records.
    row = CaptureToken.objects.get(owner=user)
    new = row.rotate()
    assert post(client, token, data).status_code == 401
    assert post(client, new, data).status_code == 200
    row.revoke()
    assert post(client, new, body(exchange, server.pk, capture=uuid.uuid4().hex)).status_code == 401
    assert Session.objects.count() == 1


def test_only_a_hash_of_the_token_is_stored(owner):
    user, _server, token = owner
    row = CaptureToken.objects.get(owner=user)
    stored = json.dumps(list(CaptureToken.objects.values()), default=str)
    assert token not in stored and token[7:] not in stored
    assert row.plain == token  # its owner's entries show it: derived with the SECRET_KEY


def test_a_silent_capture_ends_and_comes_back_with_its_records(exchange, owner):
    _user, server, token = owner
    client = Client()
    start, beat = exchange[0], {**exchange[0], "i": 1, "kind": "heartbeat"}
    session_id = post(client, token, body([start, beat], server.pk)).json()["session"]
    session = Session.objects.get(pk=session_id)
    assert session.status == Session.Status.CONNECTED
    beat_at = session.heartbeat_at
    assert reap_dead_sessions(now=beat_at + timedelta(seconds=29)) == []  # (and no worker to sweep)
    assert reap_dead_sessions(now=beat_at + timedelta(seconds=31)) == [session_id]
    session.refresh_from_db()
    assert session.status == Session.Status.ENDED and session.end_reason == CAPTURE_SILENT
    assert rows(session_id)[-1]["text"].startswith(CAPTURE_SILENT)
    # The capture kept its records while the playground was away: they are added, and it lives on.
    later = [{**r, "i": r["i"] + 1} for r in exchange[1:4]]
    assert post(client, token, body(later, server.pk)).json()["acked"] == 4
    session.refresh_from_db()
    assert session.status == Session.Status.CONNECTED
    assert [r["seq"] for r in rows(session_id)] == list(range(1, len(rows(session_id)) + 1))
    assert session.heartbeat_at > timezone.now() - timedelta(seconds=5)


def test_dropped_frames_are_counted_and_said(exchange, owner):
    _user, server, token = owner
    dropped = [
        {**exchange[0], "i": 1, "kind": "dropped", "count": 7},
        {**exchange[0], "i": 2, "kind": "dropped", "count": 5},
    ]
    session_id = post(Client(), token, body([exchange[0], *dropped], server.pk)).json()["session"]
    assert Session.objects.get(pk=session_id).report["dropped"] == 12
    assert [r["text"] for r in rows(session_id) if r.get("kind") == "error"][0].startswith("the capture dropped 7")


def test_frames_are_linted_against_the_schema_as_a_live_sessions_are(exchange, owner):
    """The host's and the server's frames checked against the negotiated version's schema, a
    response against the request it answers, across uploads: one frame broken on purpose."""
    _user, server, token = owner
    echo = next(
        r for r in exchange if r["kind"] == "frame" and '"hello capture"' in r.get("text", "") and r["dir"] == "recv"
    )
    broken = json.loads(echo["text"])
    del broken["result"]["content"][0]["text"]
    records = [dict(r, text=json.dumps(broken)) if r is echo else r for r in exchange]
    client = Client()
    cut = echo["i"]  # the request in one upload, its broken answer in the next
    post(client, token, body(records[:cut], server.pk))
    session_id = post(client, token, body(records[cut:], server.pk)).json()["session"]
    session = Session.objects.get(pk=session_id)
    assert session.schema_problems == 1
    flagged = [r for r in rows(session_id) if r.get("schema_problems")]
    assert len(flagged) == 1 and flagged[0]["message"] == broken
    problem = flagged[0]["schema_problems"][0]
    assert problem["pointer"] == "/result/content/0" and "'text' is a required property" in problem["message"]
    assert flagged[0]["schema_lint"]["definition"] == "CallToolResult"


def test_a_frame_over_the_recorded_size_is_kept_cut_with_its_size(exchange, owner):
    """A 3 MB line (more than Django's 2.5 MB form limit, less than an upload's 4 MB) is stored
    as any frame over PLAYGROUND_MAX_FRAME_BYTES is: cut, marked, with its real size."""
    _user, server, token = owner
    line = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 3_000_000}})
    big = {**exchange[0], "i": 1, "kind": "frame", "dir": "recv", "text": line}
    answer = post(Client(), token, body([exchange[0], big], server.pk))
    assert answer.status_code == 200, answer.content[:300]
    (row,) = [r for r in rows(answer.json()["session"]) if r["dir"] == "recv"]
    assert row["truncated"] and row["size"] == len(line) and len(row["raw"]) == settings.PLAYGROUND_MAX_FRAME_BYTES


def test_a_server_the_capture_could_not_start_is_said_so(exchange, owner):
    """The capture sends `start` with pid null when the command can't be started."""
    _user, server, token = owner
    start = {**exchange[0], "pid": None, "argv": ["no-such-server", "--stdio"]}
    assert start["kind"] == "start"
    end = {**exchange[0], "i": 1, "kind": "end", "code": 127, "reason": "the server could not be started"}
    session_id = post(Client(), token, body([start, end], server.pk)).json()["session"]
    (note,) = [r["text"] for r in rows(session_id) if r.get("kind") == "started"]
    assert "no-such-server --stdio" in note and "could not be started" in note and "pid" not in note


def _renumbered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "i": n} for n, r in enumerate(records)]


def _split(record: dict[str, Any], cuts: tuple[int, ...]) -> list[dict[str, Any]]:
    """A frame record as the capture sends a long line: `part` records, then its frame."""
    line = record["text"].encode()
    edges = [0, *cuts, len(line)]
    pieces = [line[a:b] for a, b in zip(edges, edges[1:])]
    rest = {k: v for k, v in record.items() if k != "text"}
    parts = [rest | {"kind": "part", "b64": base64.b64encode(p).decode()} for p in pieces[:-1]]
    return [*parts, rest | {"b64": base64.b64encode(pieces[-1]).decode(), "parts": len(parts)}]


def _largest_response(exchange: list[dict[str, Any]]) -> int:
    responses = [n for n, r in enumerate(exchange) if r["kind"] == "frame" and r["dir"] == "recv"]
    return max(responses, key=lambda n: len(exchange[n]["text"]))


def test_a_line_sent_in_parts_across_uploads_is_one_frame_paired_with_its_request(exchange, owner):
    _user, server, token = owner
    at = _largest_response(exchange)
    split = _split(exchange[at], (7, 30))
    records = _renumbered([*exchange[:at], *split, *exchange[at + 1 :]])
    client = Client()
    first = post(client, token, body(records[: at + 2], server.pk))  # the frame comes in the next upload
    assert first.status_code == 200, first.content
    assert CapturePart.objects.count() == 2
    second = post(client, token, body(records[at + 2 :], server.pk)).json()
    saved = rows(second["session"])
    assert [(r["dir"], r["message"]) for r in saved if r["dir"] in ("send", "recv")] == frames_of(exchange)
    whole = next(r for r in saved if r["dir"] == "recv" and r["message"] == json.loads(exchange[at]["text"]))
    assert whole["reply_to"] and not whole.get("problems") and whole["size"] == len(exchange[at]["text"].encode())
    assert not CapturePart.objects.exists() and Capture.objects.get().pending_parts == {}


def test_the_parts_of_a_lost_line_are_dropped_and_a_line_recorded_cut_says_so(exchange, owner):
    _user, server, token = owner
    at = _largest_response(exchange)
    orphan = _split(exchange[at], (5,))[0]  # the capture lost the rest of that line
    cut = _split(exchange[at], (5, 12))
    cut[-1]["cut"] = True
    records = _renumbered([*exchange[:at], orphan, exchange[at], *cut, *exchange[at + 1 :]])
    answer = post(Client(), token, body(records, server.pk)).json()
    saved = [r for r in rows(answer["session"]) if r["dir"] == "recv"]
    expected = json.loads(exchange[at]["text"])
    whole = [r for r in saved if r["message"] == expected]
    assert len(whole) == 2  # the line itself, unharmed by the lost line's part; its cut copy
    assert not whole[0].get("problems")
    assert any("recorded cut" in str(p) for p in whole[1]["problems"])
    assert not CapturePart.objects.exists()


def test_frames_left_unchecked_by_the_lint_are_said_at_most_every_ten_seconds(exchange, owner, monkeypatch):
    """A flood's uploads each leave frames unchecked (the lint's budget per upload): the session
    says so once, then again only LINT_NOTE_EVERY seconds later, with what went unchecked since."""
    from playground.capture import ingest

    monkeypatch.setattr(ingest, "LINT_FRAMES", 2)
    monkeypatch.setattr(ingest, "LINT_STEP", 1)
    _user, server, token = owner
    client = Client()
    start = exchange[0]
    message = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}})

    def upload(first: int, count: int, t: float) -> int:
        records = [
            {**start, "i": i, "t": t, "kind": "frame", "dir": "recv", "text": message}
            for i in range(first, first + count)
        ]
        return post(client, token, body(([start] if first == 1 else []) + records, server.pk)).json()["session"]

    session_id = upload(1, 5, start["t"])  # 3 not checked: said
    upload(6, 5, start["t"] + 1)  # 3 more, a second later: counted, not said
    upload(11, 5, start["t"] + 12)  # 3 more, 12 s after the first note: said, with the 3 before
    notes = [r["text"] for r in rows(session_id) if r.get("kind") == "info" and "schema lint" in r.get("text", "")]
    assert [n.split(" frame")[0] for n in notes] == ["schema lint: 3", "schema lint: 6"]


def test_an_uploads_lint_stays_within_the_process_share_of_live_sessions(exchange, owner, monkeypatch):
    """The lint of uploads draws on the same process share as live sessions' lint (checks are CPU
    under one GIL): with that share spent, an upload's frames wait unchecked, and the note says so."""
    from playground.mcp.lint import PROCESS_SHARE

    monkeypatch.setattr(PROCESS_SHARE, "share", 0.0)
    monkeypatch.setattr(PROCESS_SHARE, "burst", 0.0)
    _user, server, token = owner
    session_id = post(Client(), token, body(exchange, server.pk)).json()["session"]
    saved = rows(session_id)
    framed = [r for r in saved if r["dir"] in ("send", "recv")]
    assert framed and not any(r.get("schema_lint") for r in framed)
    notes = [r["text"] for r in saved if r.get("kind") == "info" and "schema lint" in r.get("text", "")]
    assert [n.split(" frame")[0] for n in notes] == [f"schema lint: {len(framed)}"]
