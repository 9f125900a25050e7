"""How long one search-indexing chunk holds the database thread (the one every live session's
saves go through) when the saved frames are big: N events of a SIZE-character text saved, then
indexed chunk by chunk; prints the longest chunk, the total, and the process's peak memory.

    .venv/bin/python bench/search_chunks.py [N] [SIZE]          (default: 300 events of 1,000,000)
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "playground.settings"
os.environ["PLAYGROUND_SQLITE_PATH"] = str(Path(tempfile.mkdtemp(prefix="playground-chunks-")) / "db.sqlite3")
os.environ["PLAYGROUND_LOG_LEVEL"] = "WARNING"
os.environ.pop("DATABASE_URL", None)

import django

django.setup()

from django.core.management import call_command

from playground.transcripts.models import Session
from playground.transcripts.recorder import save_events
from playground.transcripts.search import engine


def main(count: int, size: int) -> None:
    call_command("migrate", verbosity=0)
    session = Session.objects.create(server_name="bench", status="ended")
    words = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
    for start in range(1, count + 1, 50):
        rows = []
        for seq in range(start, min(start + 50, count + 1)):
            message = {"jsonrpc": "2.0", "id": seq, "result": {"content": [{"type": "text", "text": words}]}}
            rows.append({"seq": seq, "t": seq / 10, "dir": "recv", "raw": json.dumps(message), "message": message})
        save_events(session.pk, rows)
    backend = engine()
    chunks, longest, started = 0, 0.0, time.perf_counter()
    while True:
        began = time.perf_counter()
        more = backend.index_pending()
        longest = max(longest, time.perf_counter() - began)
        if not more:
            break
        chunks += 1
    total = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{count} events of {size} characters: {chunks} chunks, longest {longest:.2f} s, total {total:.2f} s, "
        f"peak memory {peak:.0f} MB"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300, int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000)
