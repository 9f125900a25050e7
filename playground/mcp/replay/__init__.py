"""Replay: a recorded session played again against a server, and what changed.

- `recordings`: a transcript as exported read back as what its client did (`recording`, `load`);
- `replayer`: the recording played through an open client, each request a row (`Replayer`);
- `diff`: the structural JSON diff a row's response is compared with, and its ignore rules;
- `cli`: `mcp --replay FILE`, the rest of the command line's replay.

The page's side (the replay feature, its views) is in playground/sessions and transcripts.
"""

from __future__ import annotations

from . import diff
from .recordings import RAW_KEPT, Recording, RecordingError, load, read_rows, recording, user_params
from .replayer import VALUE_KEPT, Replayer, compare_response, counts, summary_text

__all__ = [
    "RAW_KEPT",
    "VALUE_KEPT",
    "Recording",
    "RecordingError",
    "Replayer",
    "compare_response",
    "counts",
    "diff",
    "load",
    "read_rows",
    "recording",
    "summary_text",
    "user_params",
]
