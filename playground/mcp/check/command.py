"""`manage.py mcp --check`: the server check from the command line. Prints each row as it is
judged (or, with --jsonl, each as a JSON line), then the summary; `--transcript FILE` keeps the
transcript the rows cite by seq. Exit status: 0 nothing failed, 1 a check failed (the CLI's own:
2 usage, 3 could not connect)."""

from __future__ import annotations

import argparse
import json
from typing import IO

from ..auth import OAuth
from ..client import McpClient
from ..config import ServerConfig
from ..connect import open_client
from ..events import Tap
from .context import CheckOptions
from .result import CheckResult, Report
from .runner import Runner, options_from

EXIT_OK = 0
EXIT_FAILED = 1

MARKS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skip": "SKIP"}


def describe_row(row: CheckResult) -> str:
    seqs = (
        f"  [events {', '.join(str(s) for s in row.seqs[:12])}{' …' if len(row.seqs) > 12 else ''}]" if row.seqs else ""
    )
    return f"{MARKS[row.status]}  {row.name} — {row.reason}{seqs}"


def tool_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def options_from_args(ns: argparse.Namespace, config: ServerConfig) -> CheckOptions:
    """--call-tools and --deadline (the whole check's; CHECK_DEADLINE when not given)."""
    return options_from(
        {
            "call_tools": [n for v in ns.call_tools or [] for n in tool_names(v)],
            "deadline": getattr(ns, "deadline", None),
        },
        config.timeout,
    )


def make_runner(ns: argparse.Namespace, config: ServerConfig, tap: Tap) -> Runner:
    """Before connecting: the runner's trace must see the handshake."""
    return Runner(tap, options_from_args(ns, config))


async def run(
    runner: Runner, ns: argparse.Namespace, client: McpClient, config: ServerConfig, auth: OAuth | None, out: IO[str]
) -> int:
    """The battery on the open session; the exit status."""

    async def connect(changed: ServerConfig, tap: Tap) -> McpClient:  # the version probes' own connections
        return await open_client(changed, tap=tap, auth=auth)

    async def on_row(row: CheckResult) -> None:
        out.write((json.dumps(row.to_dict(), ensure_ascii=False) if ns.jsonl else describe_row(row)) + "\n")
        out.flush()

    report = await runner.run(client, config, connect, on_row)
    _summary(report, ns.jsonl, out)
    return EXIT_FAILED if report.failed else EXIT_OK


def _summary(report: Report, jsonl: bool, out: IO[str]) -> None:
    if jsonl:
        out.write(json.dumps({"summary": report.counts(), "failed": report.failed}) + "\n")
    else:
        out.write(f"{report.tools_line()}\nServer check: {report.summary()}\n")
    out.flush()
