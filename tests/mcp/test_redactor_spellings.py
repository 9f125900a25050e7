r"""A secret in every spelling a JSON encoder may give it is masked (issue 30, item 4): PHP writes
`/` as `\/`, Go `<`, `>`, `&` as `\u003c`…, any encoder may write any character as `\uXXXX` in
either case and one beyond U+FFFF as a surrogate pair, and a tool's text is often JSON encoded
once more in the message. The redactor only knew `json.dumps`'s two spellings."""

from __future__ import annotations

import json
import random

import pytest

from playground.mcp.secrets import CUT, MASK, Redactor

SHORT = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


def u_escape(code: int, rng: random.Random | None = None, upper: bool = False) -> str:
    r"""`\uXXXX`, its hex letters lower, upper, or each at random."""
    digits = f"{code:04x}"
    if upper:
        digits = digits.upper()
    elif rng is not None:
        digits = "".join(d.upper() if rng.random() < 0.5 else d for d in digits)
    return "\\u" + digits


def char_forms(c: str, rng: random.Random, everything: bool = True) -> list[str]:
    """The ways one JSON encoding may write `c` (written here from the JSON grammar, not from
    the redactor's code). `everything=False`: what real encoders escape (none escapes a letter
    or a digit), as the outer encoding of a text that is JSON itself."""
    forms = [] if c in '"\\' or c < " " else [c]
    if c in SHORT:
        forms.append("\\" + SHORT[c])
    code = ord(c)
    if code > 0xFFFF:
        code -= 0x10000
        forms.append(u_escape(0xD800 + (code >> 10), rng) + u_escape(0xDC00 + (code & 0x3FF), rng))
    elif everything or not (c.isascii() and c.isalnum()):
        forms.append(u_escape(code, rng))
    return forms


def spelled(value: str, rng: random.Random, depth: int) -> list[str]:
    """`value` encoded `depth` times (1 or 2), each character in a form chosen at random: the
    text each of its characters became, in order."""
    pieces = [rng.choice(char_forms(c, rng)) for c in value]
    if depth == 2:
        pieces = ["".join(rng.choice(char_forms(c, rng, everything=False)) for c in piece) for piece in pieces]
    return pieces


def test_php_and_go_spellings_are_masked() -> None:
    redact = Redactor(["a/b&c-SECRET", "<k>&v-s3cret"])
    php = json.dumps("a/b&c-SECRET").replace("/", "\\/")  # json_encode's default
    assert php == '"a\\/b&c-SECRET"'
    for echoed in (
        php,
        '"a\\/b\\u0026c-SECRET"',
        '"a/b\\u0026c-SECRET"',
        '"\\u003ck\\u003e\\u0026v-s3cret"',  # Go's json.Marshal
        '"\\u003Ck\\u003E\\u0026v-s3cret"',
    ):  # upper-case hex
        assert redact.text(f'{{"text": {echoed}}}') == f'{{"text": "{MASK}"}}', echoed


def test_any_character_as_u_escape_in_either_case() -> None:
    redact = Redactor(["s3cret-Value"])
    lower = "".join(u_escape(ord(c)) for c in "s3cret-Value")
    upper = "".join(u_escape(ord(c), upper=True) for c in "s3cret-Value")
    mixed = "s3c" + u_escape(ord("r")) + "et" + u_escape(ord("-"), upper=True) + "Val\\u0075e"
    for text in (lower, upper, mixed):
        assert redact.text(f"[{text}]") == f"[{MASK}]", text


def test_non_ascii_and_astral_characters_escaped() -> None:
    redact = Redactor(["pässwörd-9", "key-😀-zz"])
    for text in (
        "p\\u00e4ssw\\u00f6rd-9",
        "p\\u00E4ssw\\u00F6rd-9",
        "p\\u00e4sswörd-9",
        "key-\\ud83d\\ude00-zz",
        "key-\\uD83D\\uDE00-zz",
        "key-\\uD83D\\ude00-zz",
        "key-😀-zz",
    ):
        assert redact.text(f"({text})") == f"({MASK})", text
    assert json.dumps("key-😀-zz") == '"key-\\ud83d\\ude00-zz"'  # (the one spelling masked before)


def test_short_escapes() -> None:
    redact = Redactor(['tab\there/"q"'])
    for text in ('tab\\there\\/\\"q\\"', 'tab\\u0009here/\\u0022q\\"', 'tab\there/"q"'):
        assert redact.text(text) == MASK, text


def test_a_json_text_encoded_again_in_the_message() -> None:
    """A tool returns `json.dumps(...)` as its text, the server encodes the message: the raw
    frame has the secret twice escaped."""
    secret = 'pa"ss/wörd-1'
    tool_text = json.dumps({"key": secret})  # pa\"ss/w\u00f6rd-1
    raw = json.dumps({"result": {"content": [{"type": "text", "text": tool_text}]}})
    assert secret not in raw and json.dumps(secret)[1:-1] not in raw
    redact = Redactor([secret])
    assert MASK in redact.text(raw) and "rd-1" not in redact.text(raw)
    php_twice = json.dumps(json.dumps(secret)[1:-1].replace("/", "\\/"))[1:-1]
    assert php_twice == 'pa\\\\\\"ss\\\\/w\\\\u00f6rd-1'
    assert redact.text(php_twice) == MASK


def test_a_secret_with_a_backslash_in_each_depth() -> None:
    secret = "C:\\key\\s3cret"
    redact = Redactor([secret])
    once = json.dumps(secret)[1:-1]
    for text in (secret, once, json.dumps(once)[1:-1], once.replace("\\\\", "\\u005C", 1)):
        assert redact.text(f"<{text}>") == f"<{MASK}>", text


def test_random_secrets_in_random_spellings() -> None:
    """Secrets drawn from characters every encoder treats differently, each spelled with a form
    drawn at random for each character, once or twice encoded."""
    rng = random.Random(30)
    alphabet = list("abcXYZ019/&<>\"\\'+=-_.: ") + ["\t", "\n", "é", "€", "\u2028", "😀", "𝄞"]
    for _ in range(300):
        secret = "".join(rng.choice(alphabet) for _ in range(rng.randint(4, 24)))
        depth = rng.choice([1, 2])
        text = "".join(spelled(secret, rng, depth))
        assert Redactor([secret]).text(f"«{text}»") == f"«{MASK}»", (secret, depth, text)


def test_a_cut_head_in_any_spelling_is_masked() -> None:
    """A cut leaves 4 whole characters of a secret or more at the end, in some spelling, a part
    of the next one's escape maybe: masked. Three or fewer: left."""
    rng = random.Random(4)
    alphabet = list("abcXYZ019/&<>\"'+=-_.: ") + ["é", "€", "😀"]
    cases = [("a/b&c-SECRET", ["a", "\\/", "b", "\\u0026", "c", *"-SECRET"])]
    for _ in range(100):
        secret = "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 16)))
        cases.append((secret, spelled(secret, rng, rng.choice([1, 2]))))
    for secret, pieces in cases:
        redact = Redactor([secret])
        spelling = "".join(pieces)
        text = f"«{spelling}»"
        for n in range(1, len(spelling)):
            whole = max(k for k in range(len(pieces) + 1) if len("".join(pieces[:k])) <= n)
            expected = f"«{MASK}{CUT}" if whole >= 4 else f"«{spelling[:n]}{CUT}"
            assert redact.cut(text, n + 1, CUT) == expected, (secret, pieces, n)
    redact = Redactor(["a/b&c-SECRET"])
    assert redact.cut('"a\\/b\\u0026c\\u002d', 15) == f'"{MASK}'  # a/b&c, then in an escape
    assert redact.cut('"a\\/b\\u0026c\\u002d', 10) == '"a\\/b\\u002'  # a/b: 3 only
    assert redact.at_cuts('key "a\\/b\\u0026c-S…" unknown') == f'key "{MASK}…" unknown'
    assert redact.cut('"a\\/b\\u0026c-SECRET"', 20) == '"a\\/b\\u0026c-SECRET"'  # whole: left to `text`
    redact = Redactor(["s3cret-value"])
    assert redact.cut("x s3c\\u0072et", 10) == "x s3c\\u007"  # "s3c" and a part of "r"
    assert redact.cut("x s3c\\u0072et", 11) == f"x {MASK}"  # "s3cr"


def test_nothing_else_is_masked() -> None:
    redact = Redactor(["a/b&c-SECRET", "s3cret-value"])
    for text in (
        "caf\\u00e9 \\u00e9",
        "a\\/b\\u0026c-SECRE",
        "a/b&d-SECRET",
        "a\\/b\\u0027c-SECRET",
        "s3cret-valuE",
        "s3cret\\u002Dvalu",
    ):
        assert redact.text(text) == text
    text = "na\\u00efve caf\\u00e9 \\u00e9 a\\/b\\u0026"
    assert all(redact.cut(text, n) == text[:n] for n in range(len(text)))  # cut anywhere, an escape too


@pytest.mark.timeout(60)
def test_a_megabyte_of_near_matches_takes_linear_time() -> None:
    r"""Each character's encodings are prefix-free and factored: from each start the regex
    follows one path. An ambiguous choice (a backslash as `\` or `\\`) would backtrack
    exponentially on a run of backslashes; this would not end."""
    size = 1_000_000
    secrets = ["a/b&c-SECRET", 'pa"ss\\wörd-123', "\\" * 20 + "zz", "key-😀-" + "ab" * 10 + "!"]
    redact = Redactor(secrets)
    rng = random.Random(1)
    for secret in secrets:
        for depth in (1, 2):
            near = "".join(spelled(secret[:-1], rng, depth))
            text = (near * (size // len(near) + 1))[:size]
            assert redact.text(text) == text
    backslashes = "\\" * size
    assert redact.text(backslashes) == backslashes
