"""What `Redactor.text` and `Redactor.cut` cost on a 1 MB frame (the share page, its exports
and a live share viewer's lines mask every frame with them): a typical frame, and adversarial
ones made of near-matches of each secret (its encodings but the last character, over and over).

    .venv/bin/python bench/redactor.py [--repeat N]

CPU time (`time.process_time`), best of N: the machine may be shared."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.mcp.secrets import Redactor

SIZE = 1_000_000
SECRETS = [
    "Bearer sk-live-0123456789abcdef",
    "sk-live-0123456789abcdef",
    "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "a/b&c-SECRET",
    'pa"ss\\wörd-123',
    "key=v+1/2==",
    "Basic dXNlcjpwYXNz",
]


def typical() -> str:
    """A tools/call result: 1 MB of words and JSON punctuation, a secret echoed now and then."""
    rng = random.Random(1)
    words = ["tool", "result", "value", "name", "description", "2024-11-05", "ok", "x", "id", "ü", "path/to"]
    parts: list[str] = []
    size = 0
    while size < SIZE:
        piece = " ".join(rng.choice(words) for _ in range(20))
        if rng.random() < 0.01:
            piece += " " + rng.choice(SECRETS)
        parts.append(piece)
        size += len(piece)
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "\n".join(parts)}]}})


def near_misses(secret: str) -> list[tuple[str, str]]:
    """1 MB of a secret's encodings cut by one character, back to back (each start matches far)."""
    head = secret[:-1]
    forms = {
        "plain": head,
        "json": json.dumps(head, ensure_ascii=False)[1:-1],
        "ascii": json.dumps(head)[1:-1],
        "php": json.dumps(head)[1:-1].replace("/", "\\/"),
        "all-escaped": "".join(f"\\u{ord(c):04x}" for c in head),
        "twice": json.dumps(json.dumps(head)[1:-1].replace("/", "\\/"))[1:-1],
    }
    return [(name, (form * (SIZE // max(1, len(form)) + 1))[:SIZE]) for name, form in forms.items()]


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    start = time.process_time()
    redact = Redactor(SECRETS)
    redact.text("")
    middle = time.process_time()
    redact.cut("x" * 10, 5)
    print(
        f"make and compile for {len(SECRETS)} secrets ({sum(map(len, SECRETS))} characters): "
        f"text {(middle - start) * 1000:.1f} ms, cut {(time.process_time() - middle) * 1000:.1f} ms"
    )
    frame = typical()
    row = {"raw": frame, "message": json.loads(frame)}  # as a share page and an export mask a row
    print(
        f"typical frame ({len(frame) / 1e6:.1f} MB): text {best(lambda: redact.text(frame), args.repeat) * 1000:.0f} ms, "
        f"obj(row) {best(lambda: redact.obj(row), args.repeat) * 1000:.0f} ms, "
        f"cut {best(lambda: redact.cut(frame, len(frame) - 7), args.repeat) * 1000:.2f} ms"
    )
    for secret in SECRETS:
        one = Redactor([secret])
        for name, text in near_misses(secret):
            print(f"near-misses of {secret!r} ({name}): text {best(lambda: one.text(text), args.repeat) * 1000:.0f} ms")
    # The worst case: a periodic secret, text made of its period (each place begins a near-match).
    # (One backslash in it: a text without any is searched for the values as they are.)
    for secret, text in (
        ("\\" * 20 + "zzzz", "\\" * SIZE),
        ("ab" * 20 + "!", "ab" * (SIZE // 2) + "\\"),
        ("a" * 64 + "!", "a" * SIZE + "\\"),
    ):
        one = Redactor([secret])
        print(
            f"periodic {secret!r} in 1 MB of {text[:2]!r}…: text {best(lambda: one.text(text), args.repeat) * 1000:.0f} ms, "
            f"cut {best(lambda: one.cut(text, SIZE - 1), args.repeat) * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
