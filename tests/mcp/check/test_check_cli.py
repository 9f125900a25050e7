"""`manage.py mcp --check`: the report on stdout (text or JSON lines), the transcript file the
rows cite, and the exit status (0 nothing failed, 1 a check failed, 2 usage, 3 no connection)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import PEERS
from tests.mcp_cli import mcp

FAULTS = [sys.executable, str(PEERS / "check_faults.py")]


def test_a_clean_server_exits_0_and_prints_one_line_per_check():
    proc = mcp("--check", "--timeout", "5", "--call-tools", "go", "--", *FAULTS, "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PASS  handshake: this session — legacy era over stdio")
    assert any(line.startswith('PASS  tools/call: go — called with {"n": 1}') for line in lines)
    assert lines[-1].startswith("Server check: ") and "0 failed" in lines[-1]
    assert "→ initialize" not in proc.stdout and "← result" not in proc.stdout  # the report, not the transcript


def test_a_failing_check_exits_1_and_jsonl_rows_cite_the_transcript_file(tmp_path):
    transcript = tmp_path / "t.jsonl"
    proc = mcp("--check", "--jsonl", "--timeout", "5", "--transcript", str(transcript), "--", *FAULTS, "ping-fails")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    checks, summary = rows[:-1], rows[-1]
    assert summary == {
        "failed": True,
        "summary": {s: sum(r["status"] == s for r in checks) for s in ("pass", "warn", "fail", "skip")},
    }
    assert summary["summary"]["fail"] == 1 and summary["summary"]["pass"] > 0  # the ping alone failed
    ping = next(r for r in rows if r.get("name") == "ping")
    assert ping["status"] == "fail" and "ping broke" in ping["reason"]
    events = {e["seq"]: e for e in map(json.loads, transcript.read_text().splitlines())}
    assert [events[s]["message"].get("method") for s in ping["seqs"] if events[s]["dir"] == "send"] == ["ping"]


def test_usage_and_connection_failures_keep_their_codes():
    assert mcp("--check", "--ping", "--", *FAULTS, "none").returncode == 2
    assert mcp("--call-tools", "go", "--", *FAULTS, "none").returncode == 2
    assert mcp("--check", "--", "/nonexistent/server").returncode == 3


@pytest.mark.timeout(90)  # bounded by --deadline: before it, the progress kept `mcp --check` running for ever
def test_the_deadline_ends_a_check_whose_tool_keeps_sending_progress(tmp_path):
    transcript = tmp_path / "t.jsonl"
    proc = mcp(
        "--check",
        "--deadline",
        "3",
        "--timeout",
        "1",
        "--call-tools",
        "go",
        "--transcript",
        str(transcript),
        "--",
        *FAULTS,
        "progress-forever",
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PASS  handshake: this session")  # the rows done so far
    deadline = next(i for i, line in enumerate(lines) if line.startswith("FAIL  deadline — "))
    assert lines[deadline].startswith(
        "FAIL  deadline — the check ran out of its deadline of 3 s during tools/call "
        "of go, which was cancelled; the remaining checks did not run  [events "
    )
    assert [line.split("  ")[1].split(" — ")[0] for line in lines[deadline + 1 : -2]] == [
        "wire: the server's frames",
        "timing",
    ]
    assert lines[-2] == "Tools called: go." and lines[-1].startswith("Server check: ") and "1 failed" in lines[-1]
    sent = [
        json.loads(line)["message"] for line in transcript.read_text().splitlines() if json.loads(line)["dir"] == "send"
    ]
    assert sent[-1]["method"] == "notifications/cancelled"  # the call, cancelled
    assert "Traceback" not in proc.stderr


def test_the_deadline_is_a_positive_number_of_seconds_for_a_check():
    for bad in ("0", "-1", "nan", "inf"):
        proc = mcp("--check", "--deadline", bad, "--", *FAULTS, "none")
        assert proc.returncode == 2 and "--deadline must be a positive number of seconds" in proc.stderr
    proc = mcp("--ping", "--deadline", "5", "--", *FAULTS, "none")
    assert proc.returncode == 2 and "--deadline goes with --check" in proc.stderr
    assert "--deadline SECONDS" in mcp("--help").stdout


def test_hostile_server_data_still_gives_the_whole_report():
    proc = mcp(
        "--check",
        "--timeout",
        "5",
        "--call-tools",
        "tiny,huge",
        "--",
        *FAULTS,
        "hostile-numbers,tool-name-list,prompt-arguments-number",
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("WARN  tools/call: huge — could not make arguments") for line in lines)
    assert lines[-1].startswith("Server check: ") and proc.returncode == 1  # genuine findings fail


@pytest.mark.parametrize("transcript", [False, True])
def test_frames_are_schema_linted_only_where_they_are_written(tmp_path, monkeypatch, capsys, transcript):
    """--check prints its report, not the frames: without --transcript nothing would show what the
    schema lint found, so it does not run (the check judges every answer against the schema itself).
    Where it runs, it checks in a thread, not on the event loop."""
    import threading

    from playground.mcp import cli
    from playground.mcp.lint import FrameLinter, check_all, cli_output

    linted, threads = [], []

    class Counting(FrameLinter):
        def pick(self, events):
            events = list(events)
            linted.extend(e.seq for e in events)
            return super().pick(events)

    def checking(picks):
        threads.append(threading.current_thread())
        return check_all(picks)

    monkeypatch.setattr(cli, "FrameLinter", Counting)
    monkeypatch.setattr(cli_output, "check_all", checking)
    file = tmp_path / "t.jsonl"
    args = ["--check", "--timeout", "5", *(["--transcript", str(file)] if transcript else []), "--", *FAULTS, "none"]
    assert cli.main(args) == 0
    assert "Server check: " in capsys.readouterr().out
    assert bool(linted) is transcript
    if transcript:
        rows = [json.loads(line) for line in file.read_text().splitlines()]
        assert linted == [r["seq"] for r in rows]  # every line, in order
        assert threads and threading.main_thread() not in threads  # checked off the event loop
        flagged = [r for r in rows if r.get("schema_problems")]  # the check's own invalid probes
        assert flagged and all(r["schema_lint"]["on_purpose"] for r in flagged)


def test_a_server_s_unpaired_surrogates_are_written_as_their_escape(tmp_path):
    """misbehaving.py lone-surrogates: names and URIs holding "\\ud800". Written to stdout as they
    are, they raised in the middle of reading the server, and each request waited out its timeout."""
    transcript = tmp_path / "t.jsonl"
    proc = mcp(
        "--check",
        "--jsonl",
        "--timeout",
        "2",
        "--transcript",
        str(transcript),
        "--call-tools",
        "go",
        "--",
        sys.executable,
        str(PEERS / "misbehaving.py"),
        "lone-surrogates",
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    described = next(r for r in rows if r.get("name") == "tools: descriptions")
    assert "lone \ud800 end: no description" in described["reason"]  # the escape, read back
    assert rows[-1]["failed"] and proc.returncode == 1
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    listed = [
        t["name"]
        for e in events
        if isinstance(e["message"], dict)
        for t in (e["message"].get("result") or {}).get("tools", [])
    ]
    assert "lone \ud800 end" in listed


def test_junit_xml_has_a_case_per_row_and_failures_with_their_reason_and_events(tmp_path):
    """CI reports people's CI already reads (issue 31): `--junit FILE` beside the report."""
    import xml.etree.ElementTree as ET

    report = tmp_path / "check.xml"
    proc = mcp("--check", "--jsonl", "--timeout", "5", "--junit", str(report), "--", *FAULTS, "ping-fails")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()][:-1]
    suite = ET.parse(report).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [r["name"] for r in rows]
    assert suite.get("tests") == str(len(rows)) and suite.get("failures") == "1"
    assert suite.get("skipped") == str(sum(r["status"] == "skip" for r in rows))
    ping = next(c for c in cases if c.get("name") == "ping")
    failure = ping.find("failure")
    assert failure is not None and "ping broke" in failure.get("message")
    out = ping.find("system-out").text
    seq = next(r for r in rows if r["name"] == "ping")["seqs"][0]
    assert f"#{seq} " in out and "ping" in out  # the transcript events the row cites


def test_junit_needs_check_or_replay_and_holds_what_xml_cannot(tmp_path):
    import xml.etree.ElementTree as ET

    from playground.mcp import junit
    from playground.mcp.check.result import CheckResult

    assert mcp("--junit", str(tmp_path / "x.xml"), "--ping", "--", *FAULTS, "none").returncode == 2
    text = junit.check_report([CheckResult("tools: names \x00", "fail", "bad \x01 \ud800 name")], junit.Events(), "s")
    case = ET.fromstring(text).find("testsuite/testcase")  # (a NUL or a lone surrogate made it unreadable)
    assert case.get("name") == "tools: names \\x00" and case.find("failure").text == "bad \\x01 \\ud800 name"
