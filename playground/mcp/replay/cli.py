"""`mcp --replay FILE`: a saved session replayed against a server from the command line — a
server's regression test in CI. playground/mcp/cli.py parses the options and connects; this holds the rest.

Output: one line per replayed request with its status (a changed one's paths under it), then
a summary; with `--jsonl`, the transcript's lines, the rows among them as notes of kind "diff"
(`data`: `status`, `method`, `seq` of the original, `changes` as `{path, old, new}`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import IO, Any

from .. import jsontext
from ..client import McpClient
from ..events import Tap, TranscriptEvent
from . import diff
from .recordings import load
from .replayer import Replayer, summary_text


@dataclass
class Outcome:
    differs: bool
    aborted: str
    report: dict[str, Any]


def prepare(ns: argparse.Namespace, tap: Tap) -> Replayer:
    """The replayer for `--replay FILE` and its `--ignore` rules (raises RecordingError or
    RuleError, both ValueErrors, for a usage error)."""
    ignore = diff.clean_rules(ns.ignore or [])
    return Replayer(load(ns.replay), tap=tap, ignore=ignore)


async def run(client: McpClient, replayer: Replayer, out: IO[str] | None) -> Outcome:
    """Replay; `out`: where the summary goes in the readable mode (None with --jsonl)."""
    report = await replayer.run(client)
    summary = summary_text(report)
    if report["aborted"]:
        summary += f"; stopped: {report['aborted']}"
    if out is not None:
        out.write(f"replay: {summary}\n")
        out.flush()
    if replayer.differs or report["aborted"]:
        print(f"mcp: replay: {summary}", file=sys.stderr)
    return Outcome(differs=replayer.differs, aborted=report["aborted"], report=report)


def describe(event: TranscriptEvent) -> str:
    """A "diff" note as the readable mode prints it: the row, and a changed one's paths."""
    data = event.data or {}
    status = str(data.get("status", ""))
    lines = [f"{status:8} {(event.text or '').removeprefix(status + ': ')}"]
    for change in data.get("changes") or []:
        old = jsontext.dumps(change["old"]) if "old" in change else "(absent)"
        new = jsontext.dumps(change["new"]) if "new" in change else "(absent)"
        lines.append(f"           {change.get('path') or '(the whole response)'}: {_short(old)} → {_short(new)}")
    return "\n".join(lines)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
