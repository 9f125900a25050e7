"""What another user's data costs bob's search: alice saves N events that all hold the word
"weather", bob 20; bob searches for "weather" (a prefix, as a bare word is) and for the phrase
"weather report". Prints the median of REPEAT searches (after the index caught up), with alice's
events and, for reference, with none of them. Before the owner was in the index, bob's query
walked every one of alice's matches and dropped them by owner afterwards.

    .venv/bin/python bench/search_owner.py [N] [REPEAT] [--postgres]      (default: 50,000 and 30)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "playground.settings"
os.environ["PLAYGROUND_SQLITE_PATH"] = str(Path(tempfile.mkdtemp(prefix="playground-owner-")) / "db.sqlite3")
os.environ["PLAYGROUND_LOG_LEVEL"] = "WARNING"
os.environ.pop("DATABASE_URL", None)
ARGS = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
POSTGRES = f"playground_owner_{os.getpid()}" if "--postgres" in sys.argv else None
if POSTGRES:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{POSTGRES}"')
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{POSTGRES}"

import django

django.setup()

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from playground.transcripts.models import Session
from playground.transcripts.recorder import save_events
from playground.transcripts.search import catch_up, search


def rows(count: int, start: int = 1) -> list[dict]:
    out = []
    for seq in range(start, start + count):
        message = {
            "jsonrpc": "2.0",
            "id": seq,
            "result": {"content": [{"type": "text", "text": f"weather report {seq}: sunny, wind from the west"}]},
        }
        out.append({"seq": seq, "t": seq / 10, "dir": "recv", "raw": json.dumps(message), "message": message})
    return out


def save(owner: object, count: int) -> None:
    session = Session.objects.create(server_name="bench", owner=owner, status="ended")
    for start in range(1, count + 1, 500):
        save_events(session.pk, rows(min(500, count - start + 1), start))


def timed(user: object, text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        results = search(user, text)
        times.append(time.perf_counter() - began)
    assert sum(len(group.hits) for group in results.groups) == 20, "bob sees his own 20 events"
    return statistics.median(times) * 1000


def index_size() -> int:
    """Bytes of the search index: its tables and their indexes."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'transcripts_event_search%'")
        else:
            cursor.execute("SELECT pg_total_relation_size('transcripts_event_search')")
        return int(cursor.fetchone()[0])


def main(count: int, repeat: int) -> None:
    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    alice, bob = users.create_user("alice", password="pw"), users.create_user("bob", password="pw")
    save(bob, 20)
    catch_up(3600)
    alone = {text: timed(bob, text, repeat) for text in ("weather", '"weather report"')}
    save(alice, count)
    began = time.perf_counter()
    catch_up(3600)
    print(
        f"{connection.vendor}: indexing alice's {count} events: {time.perf_counter() - began:.2f} s, "
        f"the index {index_size() / 2**20:.1f} MB"
    )
    if POSTGRES:  # the statistics autovacuum would gather soon: the plan of a steady state
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    for text, ms in alone.items():
        print(
            f"{connection.vendor}: bob's search for {text}: {ms:.2f} ms with no other data, "
            f"{timed(bob, text, repeat):.2f} ms with alice's {count} matching events (median of {repeat})"
        )


def drop_database() -> None:
    from django.db import connections

    connections.close_all()
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{POSTGRES}" WITH (FORCE)')


if __name__ == "__main__":
    try:
        main(int(ARGS[0]) if ARGS else 50_000, int(ARGS[1]) if len(ARGS) > 1 else 30)
    finally:
        if POSTGRES:
            drop_database()
