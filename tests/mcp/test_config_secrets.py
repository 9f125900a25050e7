"""Which values a share or export must mask: found by the browser share test, where a server
echoed the bare token of an `Authorization: Bearer …` header and it was shown unmasked."""

from __future__ import annotations

import json

from playground.mcp.config import ServerConfig
from playground.mcp.secrets import Redactor


def test_header_credentials_are_secret_with_and_without_their_scheme() -> None:
    config = ServerConfig(
        transport="http",
        url="http://127.0.0.1:1/mcp",
        headers={"Authorization": "Bearer s3cr3t-value-123", "X-Api-Key": "k-9876"},
    )
    values = config.secret_values()
    assert "Bearer s3cr3t-value-123" in values
    assert "s3cr3t-value-123" in values
    assert "k-9876" in values
    redact = Redactor(values)
    assert redact.text("echo: s3cr3t-value-123 / Bearer s3cr3t-value-123") == "echo: •••• / ••••"


def test_url_credentials_are_secret() -> None:
    config = ServerConfig(transport="http", url="http://me:pw-4567@127.0.0.1:1/mcp?api_key=key-0001&page=2")
    assert sorted(config.secret_values()) == ["key-0001", "pw-4567"]


def test_env_secrets() -> None:
    config = ServerConfig(command="x", env={"API_TOKEN": "abc1", "MODE": "dev", "LONG_VALUE": "12345678"})
    assert sorted(config.secret_values()) == ["12345678", "abc1"]


def test_redactor_masks_secrets_as_they_appear_inside_raw_json():
    import json

    from playground.mcp.secrets import MASK, Redactor

    secret = 'pa"ss\\wörd-123'
    raw = json.dumps({"text": f"you sent {secret}"})  # escaped quote, backslash, \u00f6
    assert secret not in raw
    redacted = Redactor([secret]).obj({"raw": raw, "message": json.loads(raw)})
    assert redacted == {"raw": f'{{"text": "you sent {MASK}"}}', "message": {"text": f"you sent {MASK}"}}


def test_a_cut_leaves_no_secrets_head_behind():
    """The share pages mask whole values: a secret cut in two must be masked where it is cut."""
    from playground.mcp.secrets import CUT, MASK, Redactor

    redact = Redactor(["s3cret-value-42", "tok"])  # (values under 4 characters are no secrets)
    text = "key=s3cret-value-42 and again s3cret-value-42"
    for n in range(len(text) + 2):
        cut = redact.cut(text, n, CUT)
        assert "s3cr" not in redact.text(cut).replace("s3cret-value-42", ""), (n, cut)
        if n >= len(text):
            assert cut == text  # nothing cut, nothing changed
    assert redact.cut(text, 8, CUT) == f"key={MASK}{CUT}"  # "s3cr": its first 4 characters
    assert redact.cut(text, 7, CUT) == f"key=s3c{CUT}"  # 3 are not worth hiding (nor told apart)
    assert redact.cut(text, 19) == "key=s3cret-value-42"  # a whole value is left to whoever shows it
    assert redact.cut(text, 34) == f"key=s3cret-value-42 and again {MASK}"
    assert redact.cut("a tok", 4) == "a to" and Redactor().cut(text, 8) == "key=s3cr"
    # As it appears in raw JSON text, escaped: the head of the escaped form is masked too.
    quoted = Redactor(['pa"ss-word-1'])
    raw = json.dumps({"text": 'pa"ss-word-1'})
    assert quoted.cut(raw, raw.index("word") + 2) == '{"text": "' + MASK


def test_cuts_made_without_the_secrets_are_masked_at_their_marks():
    """A check's reason and a lint message were cut by helpers that had no secrets at hand:
    each cut is marked, and a secret's head right before a mark is masked."""
    from playground.mcp.check.result import clip
    from playground.mcp.secrets import CUT, MASK, Redactor

    redact = Redactor(["k-9876543210"])
    reason = f"{clip('the key k-9876543210', 15)!r}: unknown; {clip('k-9876543210 again', 8)!r} too"
    assert reason == f"'the key k-9876{CUT}': unknown; 'k-98765{CUT}' too"
    assert redact.at_cuts(reason) == f"'the key {MASK}{CUT}': unknown; '{MASK}{CUT}' too"
    assert redact.at_cuts("k-9876543210 whole, k-98 short…") == "k-9876543210 whole, k-98 short…"
    assert Redactor().at_cuts(reason) == reason
