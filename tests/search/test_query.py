"""What of an event is searchable, how a person's words become each database's query, and the
excerpt: no database here (test_search_db.py runs the same on SQLite and PostgreSQL)."""

from __future__ import annotations

import base64
import json

from playground.transcripts.search.query import MAX_TERMS, index_words, owned, parse_query, words
from playground.transcripts.search.text import TEXT_CAP, searchable_text, stored_text


def call(name: str, arguments: dict, seq: int = 1) -> dict:
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return {"seq": seq, "t": 0.5, "dir": "send", "raw": json.dumps(message), "message": message}


def test_values_are_searched_not_keys_nor_the_envelope():
    row = call("get_weather", {"city": "Paris", "days": 3, "metric": True})
    row["message"]["params"]["_meta"] = {"progressToken": "progress-6"}
    text = searchable_text(row)
    assert text == "tools/call get_weather Paris 3"
    assert "jsonrpc" not in text and "2.0" not in text and "7" not in text and "city" not in text


def test_stderr_and_notes_are_their_text_and_unparsed_frames_their_raw_text():
    assert (
        searchable_text(
            {"seq": 1, "t": 0, "dir": "stderr", "raw": "KeyError: 'x'", "message": None, "text": "KeyError: 'x'"}
        )
        == "KeyError: 'x'"
    )
    assert (
        searchable_text(
            {"seq": 2, "t": 0, "dir": "note", "message": None, "kind": "error", "text": "the server closed its stdout"}
        )
        == "the server closed its stdout"
    )
    assert (
        searchable_text(
            {
                "seq": 3,
                "t": 0,
                "dir": "recv",
                "raw": "{oops not json",
                "message": None,
                "parse_error": "Expecting property name",
            }
        )
        == "{oops not json"
    )


def test_base64_blobs_are_not_words_and_an_event_is_capped():
    image = base64.b64encode(bytes(range(256)) * 8).decode()
    result = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [
                {"type": "image", "data": image, "mimeType": "image/png"},
                {"type": "text", "text": "a chart of sales"},
            ]
        },
    }
    text = searchable_text({"seq": 1, "t": 0, "dir": "recv", "raw": "", "message": result})
    assert image[:40] not in text and "a chart of sales" in text
    huge = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "word " * 400_000}]}}
    assert len(searchable_text({"seq": 1, "t": 0, "dir": "recv", "raw": "", "message": huge})) == TEXT_CAP
    many = {"jsonrpc": "2.0", "id": 1, "result": {"items": [f"value{i}" for i in range(100_000)]}}
    assert len(searchable_text({"seq": 1, "t": 0, "dir": "recv", "raw": "", "message": many})) <= TEXT_CAP


def test_stored_text_reads_what_the_database_returns():
    row = call("echo", {"text": "hello"})
    assert stored_text(json.dumps(row)) == stored_text(row) == "tools/call echo hello"
    assert stored_text("not json") == "" and stored_text("[1, 2]") == ""


def test_words_phrases_and_prefixes():
    query = parse_query('get_weather "Sunny in" fail')
    assert [(t.words, t.prefix) for t in query.terms] == [
        (("get", "weather"), True),
        (("sunny", "in"), False),
        (("fail",), True),
    ]
    assert query.fts5(12) == '"12xget 12xweather"* AND "12xsunny 12xin" AND "12xfail"*'
    assert query.tsquery(12) == "('12xget' <-> '12xweather':*) & ('12xsunny' <-> '12xin') & ('12xfail':*)"
    assert words("tools/call x-y_z 2.0") == ["tools", "call", "x", "y", "z", "2", "0"]


def test_an_owners_words_are_never_a_prefix_of_anothers():
    """The index keeps each word behind its owner's id: a query (a prefix query too) of owner 1's
    words cannot reach owner 12's, nor 1's "2x…" word owner 12's "x…" one."""
    assert index_words(12, "Get_Weather in Zürich 21.5") == [
        "12xget",
        "12xweather",
        "12xin",
        "12xzürich",
        "12x21",
        "12x5",
    ]
    assert index_words(None, "nobody's") == ["0xnobody", "0xs"]
    assert not owned(12, "weather").startswith(owned(1, "")) and owned(1, "2xa") != owned(12, "a")
    assert parse_query("Zür").fts5(1) == '"1xzür"*'  # lower case, as the index keeps it


def test_no_input_is_database_syntax():
    """Quotes, operators, column filters, tsquery syntax: all become quoted words, or nothing."""
    for text in [
        '" OR *',
        "NEAR(a b)",
        "body:secret",
        "a:* & !b | c <-> d",
        "'; DROP TABLE x; --",
        '\\"',
        "\x00",
        "\ud800",
        "((((",
        "-x",
        "^start",
        "col : value",
        '"unclosed phrase',
    ]:
        query = parse_query(text)
        for term in query.terms:
            assert all(word.isalnum() for word in term.words), (text, term)
        assert '""' not in query.fts5(3) and "''" not in query.tsquery(3)
    assert not parse_query("  -- ** ").terms and not parse_query("").terms
    assert len(parse_query(" ".join(f"w{i}" for i in range(50))).terms) == MAX_TERMS


def test_the_excerpt_is_escaped_then_marked():
    query = parse_query("script weat")
    excerpt = str(query.excerpt('the server said <script>alert("x")</script> about weather & rain'))
    assert "<script>" not in excerpt and "&lt;<mark>script</mark>&gt;" in excerpt
    assert "<mark>weat</mark>her" in excerpt and "&amp; rain" in excerpt
    assert str(parse_query("mark").excerpt("<mark>")) == "&lt;<mark>mark</mark>&gt;"


def test_the_excerpt_is_around_the_first_match():
    text = "filler " * 200 + "the needle is here " + "tail " * 200
    excerpt = str(parse_query('"needle is"').excerpt(text))
    assert (
        excerpt.startswith("…") and excerpt.endswith("…") and "the <mark>needle</mark> <mark>is</mark> here" in excerpt
    )
    assert len(excerpt) < 400
    # a whole word unless it is a prefix: "in" of a phrase does not mark "inside"
    assert str(parse_query('"in"').excerpt("inside in")) == "inside <mark>in</mark>"
