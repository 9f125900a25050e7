"""An approximate token count, computed here without any network or tokenizer file.

The rule: one token per 4 characters of the compact JSON (or text), rounded up — OpenAI's
documented rule of thumb ("one token generally corresponds to ~4 characters of text for common
English text", https://help.openai.com/en/articles/4936856-what-are-tokens-and-how-to-count-them).
JSON's punctuation makes it land within about ±25% of o200k_base / cl100k_base counts for tool
definitions; each provider's own tokenizer differs, and each also adds its own framing (Anthropic
documents a tool-use system prompt of a few hundred tokens). Exact counts: tiktoken (OpenAI),
the Messages API's count_tokens (Anthropic), countTokens (Gemini).
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
RULE = (
    "≈ 1 token per 4 characters of the compact JSON (OpenAI's rule of thumb); "
    "exact counts need each provider's tokenizer (tiktoken, count_tokens, countTokens)"
)


def compact(value: Any) -> str:
    """The JSON as an API request carries it (no indentation)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def estimate_text(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate(value: Any) -> int:
    """Tokens of a JSON value, by the rule above."""
    return estimate_text(value if isinstance(value, str) else compact(value))
