"""The comparison made again when a server's ignore rules change (transcripts/replays.py, through
the Differences' ignore rules view), on saved rows only: a replayed response not saved yet leaves
its row as the worker compared it."""
from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from playground.transcripts.models import Event, Session

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client: Client) -> Any:
    user = get_user_model().objects.create_user("replayer", password="pw")
    client.force_login(user)
    return user


def compare_again(client: Client, replay: Session, rules: list[str]) -> dict[str, Any]:
    """The view's comparison, as saved."""
    assert client.post(f"/sessions/{replay.pk}/differences/ignore/", {"ignore": "\n".join(rules)}).status_code == 200
    return Session.objects.get(pk=replay.pk).report


def _response(session: Session, seq: int, text: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}
    Event.objects.create(session=session, seq=seq, t=0.1, dir="recv", data={
        "seq": seq, "t": 0.1, "dir": "recv", "raw": str(message), "message": message})


def test_rows_are_compared_again_from_saved_responses_only(client, owner):
    source = Session.objects.create(server_name="a", owner=owner)
    replay = Session.objects.create(server_name="b", kind=Session.Kind.REPLAY, source=source, owner=owner)
    _response(source, 2, "10:00")
    _response(source, 4, "10:01")
    _response(replay, 12, "11:00")                  # the second replayed response: not saved yet (seq 14)
    rows = [{"kind": "request", "method": "tools/call", "status": "changed", "old_response_seq": 2,
             "new_response_seq": 12, "changes": [{"path": "/result/content/0/text"}]},
            {"kind": "request", "method": "tools/call", "status": "changed", "old_response_seq": 4,
             "new_response_seq": 14, "changes": [{"path": "/result/content/0/text"}]}]
    replay.report = {"rows": rows}
    replay.save()

    report = compare_again(client, replay, ["/result/content/*/text"])
    saved, pending = report["rows"]
    assert saved["status"] == "same" and not saved.get("changes")       # compared again under the rule
    assert pending["status"] == "changed" and pending["changes"] == rows[1]["changes"]   # left as it was


def test_rows_compared_again_mask_the_original_sessions_oauth_values(client, owner):
    """The original's responses reach the replay's report masked as its owner reads them (as the
    replay's recording did): an OAuth value of the original only is not in the report."""
    token = "tok-only-the-original-had-0123456789"
    source = Session.objects.create(server_name="a", oauth_secret_values=[token], owner=owner)
    replay = Session.objects.create(server_name="b", kind=Session.Kind.REPLAY, source=source, owner=owner)
    _response(source, 2, f"you are {token}")
    _response(replay, 12, "you are someone else")
    replay.report = {"rows": [{"kind": "request", "method": "tools/call", "status": "same",
                               "old_response_seq": 2, "new_response_seq": 12}]}
    replay.save()

    report = compare_again(client, replay, [])
    row, = report["rows"]
    assert row["status"] == "changed" and row["old_raw"] and "you are" in row["old_raw"]
    assert token not in str(report) and token not in str(Session.objects.get(pk=replay.pk).report)
