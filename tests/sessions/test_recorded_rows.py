"""What a replay reads of the session it replays: the rows as its owner reads them, a chunk at a
time from the database (a long session is not built as one list first)."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from playground.transcripts.models import Event, Session
from playground.transcripts.replays import recorded_rows


@pytest.mark.django_db
def test_recorded_rows_are_read_lazily_and_masked():
    token = "ya29.replayed-secret-token"
    session = Session.objects.create(server_name="s", status="ended", oauth_secret_values=[token])
    Event.objects.bulk_create([Event(session=session, seq=seq, t=seq, dir="stderr",
                                     data={"seq": seq, "dir": "stderr", "text": f"line {seq} {token}",
                                           "raw": json.dumps(seq)})
                               for seq in range(1, 4502)])
    with CaptureQueriesContext(connection) as queries:
        rows = recorded_rows(session)
        assert isinstance(rows, Iterator) and len(queries) == 0          # nothing read yet
        first = next(rows)
    assert first["seq"] == 1 and token not in first["text"] and "••••" in first["text"]
    rest = list(rows)
    assert [r["seq"] for r in rest] == list(range(2, 4502))
