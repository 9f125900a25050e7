"""JUnit XML of `mcp --check` and `mcp --replay` (`--junit FILE`): the report a server's CI
already reads (GitHub, GitLab, Jenkins show `testsuite`/`testcase` as test results).

A check row is a test case (fail: `<failure>`, skip: `<skipped>`, warn: passed, with the
warning in its output); a replay row is one (`same` passes, any other status fails with its
detail and changes). Each case carries the transcript events it cites (the lines `--transcript`
would keep), capped: `Events` remembers a short form of every event the tap reports.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any

from . import jsontext
from .events import TranscriptEvent

EVENT_CHARS = 2000  # of one event's raw text in a case's output
EVENTS_SHOWN = 20  # events in one case's output
KEPT = 200_000  # events remembered for the cases (the first ones: a check's cite those)
# What XML 1.0 cannot hold (controls but tab, LF and CR; lone surrogates; U+FFFE, U+FFFF): a
# server may send any of them, and one would make the whole file unreadable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` with each character XML cannot hold written as its escape (`\\x00`, `\\ud800`)."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


class Events:
    """What the report's cases may cite: each event's line, as `--transcript` would write it, cut."""

    def __init__(self) -> None:
        self.lines: dict[int, str] = {}
        self.started = time.monotonic()

    def __call__(self, event: TranscriptEvent) -> None:
        if len(self.lines) < KEPT:
            text = event.raw if event.raw is not None else event.text or ""
            if len(text) > EVENT_CHARS:
                text = text[:EVENT_CHARS] + f"… ({len(text)} characters)"
            head = event.kind if event.dir == "note" else event.method or ""
            self.lines[event.seq] = f"#{event.seq} {event.dir} {head} {text}".replace("  ", " ")

    def cited(self, seqs: Iterable[int]) -> str:
        seqs = [s for s in seqs if s in self.lines]
        shown = [self.lines[s] for s in seqs[:EVENTS_SHOWN]]
        if len(seqs) > EVENTS_SHOWN:
            shown.append(f"… and {len(seqs) - EVENTS_SHOWN} more events (the --transcript file has them)")
        return "\n".join(shown)

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


def _suite(name: str, cases: list[ET.Element], seconds: float) -> ET.Element:
    suite = ET.Element(
        "testsuite",
        name=xml_text(name),
        tests=str(len(cases)),
        failures=str(sum(1 for c in cases if c.find("failure") is not None)),
        errors="0",
        skipped=str(sum(1 for c in cases if c.find("skipped") is not None)),
        time=f"{seconds:.3f}",
    )
    suite.extend(cases)
    return suite


def _case(
    classname: str, name: str, *, failure: str | None = None, skipped: str | None = None, output: str = ""
) -> ET.Element:
    case = ET.Element("testcase", classname=classname, name=xml_text(name), time="0")
    if failure is not None:
        ET.SubElement(case, "failure", message=xml_text(failure[:500]), type="failure").text = xml_text(failure)
    if skipped is not None:
        ET.SubElement(case, "skipped", message=xml_text(skipped[:500]))
    if output:
        ET.SubElement(case, "system-out").text = xml_text(output)
    return case


def check_report(rows: Iterable[Any], events: Events, server: str) -> str:
    """A check report (its CheckResult rows) as JUnit XML."""
    cases = []
    for row in rows:
        cited = events.cited(row.seqs)
        if row.status == "fail":
            cases.append(_case("mcp.check", row.name, failure=row.reason, output=cited))
        elif row.status == "skip":
            cases.append(_case("mcp.check", row.name, skipped=row.reason, output=cited))
        else:
            said = f"WARN: {row.reason}" if row.status == "warn" else row.reason
            cases.append(_case("mcp.check", row.name, output=f"{said}\n{cited}".rstrip()))
    return _document(_suite(f"MCP server check: {server}", cases, events.seconds))


def replay_report(report: dict[str, Any], events: Events, recording: str) -> str:
    """A replay's Differences as JUnit XML: a case per row, in order."""
    cases = []
    for n, row in enumerate(report.get("rows") or [], 1):
        name = f"{n}. {row.get('method', '')}" + (f" {row['name']}" if row.get("name") else "")
        if row.get("kind") != "request":
            name += f" ({row.get('kind')} {row.get('status')})"
        seqs = [s for s in (row.get("new_seq"), row.get("new_response_seq")) if isinstance(s, int)]
        output = events.cited(seqs)
        if row.get("status") == "same":
            cases.append(_case("mcp.replay", name, output=output))
            continue
        lines = [f"{row.get('status')}: {row.get('detail') or ''}".rstrip(": ")]
        if isinstance(row.get("seq"), int):
            lines.append(f"recorded as event {row['seq']} of {recording}")
        for change in row.get("changes") or []:
            old = jsontext.dumps(change["old"]) if "old" in change else "(absent)"
            new = jsontext.dumps(change["new"]) if "new" in change else "(absent)"
            lines.append(f"{change.get('path') or '(the whole response)'}: {old} → {new}")
        if row.get("old_raw") or row.get("new_raw"):
            lines += [f"recorded: {row.get('old_raw') or ''}", f"replayed: {row.get('new_raw') or ''}"]
        cases.append(_case("mcp.replay", name, failure="\n".join(lines), output=output))
    if report.get("aborted"):
        cases.append(_case("mcp.replay", "the replay", failure=f"stopped: {report['aborted']}"))
    return _document(_suite(f"MCP replay of {recording}", cases, events.seconds))


def _document(suite: ET.Element) -> str:
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
