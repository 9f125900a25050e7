"""Full-text search of transcript events, one index per database (see transcripts/search/).

- SQLite: an FTS5 table, `rowid` = the event's id, filled after the events are saved
  (search/sqlite.py: off the flood path), emptied of an event's row by a trigger when the
  event is deleted. Needs SQLite built with FTS5 (Python's usually is; a system check says
  so when not).
- PostgreSQL: a table of the events' words (a tsvector, GIN-indexed), filled after the
  events are saved from a queue a statement trigger keeps (search/postgresql.py).
- Any other database: nothing (search says it is not available there).

The SQL is written out here, as it was when the index was made (migrations must not change
with the code); search/sqlite.py and search/postgresql.py use these names.
"""
from django.db import migrations

SQLITE_CREATE = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS transcripts_event_search USING fts5("
    "body, tokenize = 'unicode61 remove_diacritics 0', columnsize = 0)",
    "CREATE TRIGGER IF NOT EXISTS transcripts_event_search_delete AFTER DELETE ON transcripts_event BEGIN "
    "DELETE FROM transcripts_event_search WHERE rowid = old.id; END",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS transcripts_event_search_delete",
    "DROP TABLE IF EXISTS transcripts_event_search",
]

# PostgreSQL: the index in a table of its own (what text.py takes of each event, and its words
# as a tsvector), filled after the events are saved like SQLite's: a GIN index kept on insert
# made a flood ~35% slower (bench/README.md). What is to be indexed is queued by a statement
# trigger, one row per INSERT statement (a batch of 500 events), whoever inserts; deletes and
# TRUNCATE take the index rows with them. Events saved before this migration are queued too.
PG_CREATE = [
    """CREATE TABLE IF NOT EXISTS transcripts_event_search (
        event_id bigint PRIMARY KEY, body text NOT NULL, words tsvector NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS transcripts_event_search_words ON transcripts_event_search USING gin (words)",
    """CREATE TABLE IF NOT EXISTS transcripts_event_search_queue (
        id bigserial PRIMARY KEY, session_id bigint NOT NULL, first_seq bigint NOT NULL, last_seq bigint NOT NULL)""",
    """CREATE OR REPLACE FUNCTION transcripts_event_search_enqueue() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        INSERT INTO transcripts_event_search_queue (session_id, first_seq, last_seq)
            SELECT session_id, min(seq), max(seq) FROM saved GROUP BY session_id;
        RETURN NULL;
    END $fn$""",
    """CREATE TRIGGER transcripts_event_search_enqueue AFTER INSERT ON transcripts_event
        REFERENCING NEW TABLE AS saved FOR EACH STATEMENT EXECUTE FUNCTION transcripts_event_search_enqueue()""",
    """CREATE OR REPLACE FUNCTION transcripts_event_search_forget() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        DELETE FROM transcripts_event_search s USING gone WHERE s.event_id = gone.id;
        RETURN NULL;
    END $fn$""",
    """CREATE TRIGGER transcripts_event_search_forget AFTER DELETE ON transcripts_event
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION transcripts_event_search_forget()""",
    """CREATE OR REPLACE FUNCTION transcripts_event_search_clear() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        TRUNCATE transcripts_event_search, transcripts_event_search_queue;
        RETURN NULL;
    END $fn$""",
    """CREATE TRIGGER transcripts_event_search_clear AFTER TRUNCATE ON transcripts_event
        FOR EACH STATEMENT EXECUTE FUNCTION transcripts_event_search_clear()""",
    """INSERT INTO transcripts_event_search_queue (session_id, first_seq, last_seq)
        SELECT session_id, min(seq), max(seq) FROM transcripts_event GROUP BY session_id""",
]
PG_DROP = [
    "DROP TRIGGER IF EXISTS transcripts_event_search_enqueue ON transcripts_event",
    "DROP TRIGGER IF EXISTS transcripts_event_search_forget ON transcripts_event",
    "DROP TRIGGER IF EXISTS transcripts_event_search_clear ON transcripts_event",
    "DROP FUNCTION IF EXISTS transcripts_event_search_enqueue()",
    "DROP FUNCTION IF EXISTS transcripts_event_search_forget()",
    "DROP FUNCTION IF EXISTS transcripts_event_search_clear()",
    "DROP TABLE IF EXISTS transcripts_event_search_queue",
    "DROP TABLE IF EXISTS transcripts_event_search",
]


def _run(statements: dict[str, list[str]]):
    def run(apps, schema_editor) -> None:
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)
    return run


def _has_fts5(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    import sqlite3

    try:
        sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE probe USING fts5(body)")
    except sqlite3.OperationalError as exc:
        raise RuntimeError(f"This SQLite library has no FTS5 ({exc}), which session search needs: use a Python "
                           "whose sqlite3 has it (most do), or PostgreSQL (DATABASE_URL).") from exc


class Migration(migrations.Migration):

    dependencies = [
        ("transcripts", "0007_session_kind_source_report"),
    ]

    operations = [
        migrations.RunPython(_has_fts5, migrations.RunPython.noop),
        migrations.RunPython(_run({"sqlite": SQLITE_CREATE, "postgresql": PG_CREATE}),
                             _run({"sqlite": SQLITE_DROP, "postgresql": PG_DROP})),
    ]
