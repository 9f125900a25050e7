"""Which values a share or export must mask: found by the browser share test, where a server
echoed the bare token of an `Authorization: Bearer …` header and it was shown unmasked."""
from __future__ import annotations

from playground.mcp.config import ServerConfig
from playground.mcp.secrets import Redactor


def test_header_credentials_are_secret_with_and_without_their_scheme() -> None:
    config = ServerConfig(transport="http", url="http://127.0.0.1:1/mcp",
                          headers={"Authorization": "Bearer s3cr3t-value-123", "X-Api-Key": "k-9876"})
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
    raw = json.dumps({"text": f"you sent {secret}"})                 # escaped quote, backslash, \u00f6
    assert secret not in raw
    redacted = Redactor([secret]).obj({"raw": raw, "message": json.loads(raw)})
    assert redacted == {"raw": f'{{"text": "you sent {MASK}"}}', "message": {"text": f"you sent {MASK}"}}
