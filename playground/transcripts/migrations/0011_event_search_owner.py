"""The owner goes into the search index, so a query never reaches another user's rows
(transcripts/search/query.py: `owned`).

Until now both indexes matched first and kept the searching person's rows afterwards (a join to
the session): a word frequent in alice's sessions made bob's search walk every one of her matches.
Now each indexed word is kept behind its owner's id ("12x" + "weather"), and a query asks for
the searching person's words only:

- SQLite: the FTS5 table is made again with two columns: `body` (not indexed: the excerpt is
  cut from it) and `words` (the owned words, split on spaces only: the `ascii` tokenizer). Its
  rows are copied from the old table, their words made from the text it kept (no event's JSON is
  parsed again), so what was searchable stays so; the delete trigger is made again with it.
- PostgreSQL: the index table gets `owner_id` and a B-tree on (owner_id, event_id) (the plan
  that walks the newest rows walks the owner's only); each row's `words` is made again from its
  `body`, owned; the GIN index loses its pending list (`fastupdate = off`, the list flushed): each
  lookup scanned the whole list, every user's recent entries.

The words and the owner's prefix are written out here as the code wrote them when this was made
(migrations must not change with the code).
"""
import re

from django.db import migrations

_WORD = re.compile(r"[^\W_]+")
BATCH = 1000
MAX_LEXEME_BYTES = 2046
MAX_POSITION = 16383


def _owned_words(owner_id, body):
    return [f"{owner_id or 0}x{word.lower()}" for word in _WORD.findall(body or "")]


def _tsvector(owner_id, body):
    positions = {}
    for position, word in enumerate(_owned_words(owner_id, body), start=1):
        if len(word.encode("utf-8")) <= MAX_LEXEME_BYTES:
            positions.setdefault(word, []).append(str(min(position, MAX_POSITION)))
    return " ".join(f"'{word}':{','.join(places)}" for word, places in positions.items())


SQLITE_TRIGGER = ("CREATE TRIGGER IF NOT EXISTS transcripts_event_search_delete AFTER DELETE ON transcripts_event "
                  "BEGIN DELETE FROM transcripts_event_search WHERE rowid = old.id; END")
SQLITE_OWNED = ("CREATE VIRTUAL TABLE transcripts_event_search_new USING fts5("
                "body UNINDEXED, words, tokenize = 'ascii', columnsize = 0)")
SQLITE_UNOWNED = ("CREATE VIRTUAL TABLE transcripts_event_search_new USING fts5("
                  "body, tokenize = 'unicode61 remove_diacritics 0', columnsize = 0)")


def _sqlite_copy(cursor, owned):
    """Every row of the old table into the new one (by rowid, a batch at a time), then the new
    one takes the old one's name and its trigger."""
    cursor.execute("DROP TRIGGER IF EXISTS transcripts_event_search_delete")
    cursor.execute(SQLITE_OWNED if owned else SQLITE_UNOWNED)
    last = -1
    while True:
        cursor.execute("SELECT f.rowid, f.body, s.owner_id FROM transcripts_event_search f "
                       "LEFT JOIN transcripts_event e ON e.id = f.rowid "
                       "LEFT JOIN transcripts_session s ON s.id = e.session_id "
                       "WHERE f.rowid > %s ORDER BY f.rowid LIMIT %s", [last, BATCH])
        rows = cursor.fetchall()
        if not rows:
            break
        last = rows[-1][0]
        if owned:
            values = [v for rowid, body, owner in rows for v in (rowid, body, " ".join(_owned_words(owner, body)))]
            cursor.execute("INSERT INTO transcripts_event_search_new (rowid, body, words) VALUES "
                           + ", ".join(["(%s, %s, %s)"] * len(rows)), values)
        else:
            values = [v for rowid, body, _owner in rows for v in (rowid, body)]
            cursor.execute("INSERT INTO transcripts_event_search_new (rowid, body) VALUES "
                           + ", ".join(["(%s, %s)"] * len(rows)), values)
    cursor.execute("DROP TABLE transcripts_event_search")
    cursor.execute("ALTER TABLE transcripts_event_search_new RENAME TO transcripts_event_search")
    cursor.execute(SQLITE_TRIGGER)


def _pg_rewrite(cursor, owned):
    """Each row's words made again from its body (owned or not), a batch at a time by event id."""
    last = -1
    while True:
        cursor.execute("SELECT x.event_id, x.body, s.owner_id FROM transcripts_event_search x "
                       "LEFT JOIN transcripts_event e ON e.id = x.event_id "
                       "LEFT JOIN transcripts_session s ON s.id = e.session_id "
                       "WHERE x.event_id > %s ORDER BY x.event_id LIMIT %s", [last, BATCH])
        rows = cursor.fetchall()
        if not rows:
            break
        last = rows[-1][0]
        if owned:
            values = [v for event_id, body, owner in rows for v in (event_id, owner, _tsvector(owner, body))]
            cursor.execute("UPDATE transcripts_event_search x SET owner_id = v.owner_id, words = v.words::tsvector "
                           "FROM (VALUES " + ", ".join(["(%s::bigint, %s::bigint, %s::text)"] * len(rows))
                           + ") AS v (event_id, owner_id, words) WHERE x.event_id = v.event_id", values)
        else:
            values = [v for event_id, body, _owner in rows
                      for v in (event_id, " ".join(_WORD.findall(body or "")))]
            cursor.execute("UPDATE transcripts_event_search x SET words = to_tsvector('simple'::regconfig, v.words) "
                           "FROM (VALUES " + ", ".join(["(%s::bigint, %s::text)"] * len(rows))
                           + ") AS v (event_id, words) WHERE x.event_id = v.event_id", values)


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    with schema_editor.connection.cursor() as cursor:
        if vendor == "sqlite":
            _sqlite_copy(cursor, owned=True)
        elif vendor == "postgresql":
            cursor.execute("ALTER TABLE transcripts_event_search ADD COLUMN IF NOT EXISTS owner_id bigint")
            _pg_rewrite(cursor, owned=True)
            cursor.execute("CREATE INDEX IF NOT EXISTS transcripts_event_search_owner "
                           "ON transcripts_event_search (owner_id, event_id)")
            cursor.execute("ALTER INDEX transcripts_event_search_words SET (fastupdate = off)")
            cursor.execute("SELECT gin_clean_pending_list('transcripts_event_search_words'::regclass)")


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    with schema_editor.connection.cursor() as cursor:
        if vendor == "sqlite":
            _sqlite_copy(cursor, owned=False)
        elif vendor == "postgresql":
            cursor.execute("DROP INDEX IF EXISTS transcripts_event_search_owner")
            cursor.execute("ALTER INDEX transcripts_event_search_words RESET (fastupdate)")
            _pg_rewrite(cursor, owned=False)
            cursor.execute("ALTER TABLE transcripts_event_search DROP COLUMN IF EXISTS owner_id")


class Migration(migrations.Migration):

    dependencies = [
        ("transcripts", "0010_session_schema_problems"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
