"""jsontext: orjson's speed only where its answer is the standard library's."""

from __future__ import annotations

import json

import pytest

from playground.mcp import jsontext
from playground.mcp.events import Tap

TEXTS = [
    '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"héllo \\u00e9 \\ud83d\\ude00"}]}}',
    '{"a": 1, "a": 2}',  # duplicate keys: the last wins in both
    '  [1, 2.5, -0, 1e-7, true, null, "x"]  \n',
    '{"id": 123456789012345678901234567890}',  # beyond 64 bits: orjson would make it a float
    '{"id": -9223372036854775809}',
    '{"id": 18446744073709551615}',
    "[NaN, Infinity, -Infinity]",  # not JSON; the stdlib reads them leniently
    '"\\ud800"',  # a lone surrogate
    "1e400",  # beyond a double
]


def same(a, b) -> bool:
    """Equal values of equal types (1 is not 1.0), NaN included: compare the stdlib's encodings."""
    return json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize("text", TEXTS)
def test_loads_is_the_standard_librarys_answer(text):
    assert same(jsontext.loads(text), json.loads(text))
    assert same(jsontext.loads(text.encode()), json.loads(text))


def test_big_integers_stay_integers():
    value = jsontext.loads('{"id": 123456789012345678901234567890}')["id"]
    assert isinstance(value, int) and value == 123456789012345678901234567890


@pytest.mark.parametrize("text", ["{", '{"a": }', "[1,]", "", "\x00"])
def test_loads_raises_the_standard_librarys_error(text):
    with pytest.raises(ValueError) as ours:
        jsontext.loads(text)
    with pytest.raises(ValueError) as theirs:
        json.loads(text)
    assert str(ours.value) == str(theirs.value)  # the transcript shows json's message


def test_dumps_round_trips_and_what_orjson_cannot_encode_goes_through_json():
    for value in ({"a": "é", "b": [1, 2.5, None]}, {"big": 2**70}, {"s": "\ud800"}):
        text = jsontext.dumps(value)
        assert json.loads(text) == value
    assert jsontext.dumps({"s": "\ud800"}).isascii()  # escaped: any UTF-8 store takes it
    assert "é" in jsontext.dumps({"a": "é"})  # not escaped on the fast path


def test_dumps_writes_nan_and_infinity_as_null_on_both_paths():
    assert json.loads(jsontext.dumps([float("nan"), float("inf")])) == [None, None]
    assert json.loads(jsontext.dumps([float("nan"), 2**70])) == [None, 2**70]


def test_the_tap_records_a_big_id_exactly():
    tap = Tap()
    event, message = tap.recv(b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}')
    assert message["id"] == 123456789012345678901234567890 and event.problems is None


@pytest.mark.parametrize(
    "raw",
    [
        *(text.encode() for text in TEXTS),
        b"\xef\xbb\xbf{}",  # a BOM: json refuses it in a text (it would read bytes as utf-8-sig)
        b'{"a": "\xff"}',  # invalid UTF-8: read as decoded, with U+FFFD
        b'{"a": "\xef\xbf\xbd", "b": "\xfe"}',  # a real U+FFFD beside an invalid byte
        b"\x00{\x00}",  # json would read these bytes as UTF-16
        b"{",
    ],
)
def test_the_tap_reads_a_frame_as_the_text_it_decodes_to(raw):
    """A frame read as bytes is parsed from its own bytes when they are valid UTF-8 (not encoded
    again): the answer is still `json.loads` of the decoded text."""
    event, message = Tap().recv(raw)
    text = raw.decode("utf-8", "replace")
    try:
        expected, error = json.loads(text), None
    except ValueError as exc:
        expected, error = None, str(exc)
    assert same(message, expected) and event.parse_error == error and event.raw == text
