"""`mcp --replay FILE`: a recorded session as a regression test, against two builds of an SDK
server that differ in one tool's output (tests/peers/sdk_variant.py)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import PEERS
from tests.mcp_cli import lines, mcp

BUILD = {build: [sys.executable, str(PEERS / "sdk_variant.py"), "stdio", build] for build in ("a", "b")}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> str:
    """A transcript of build "a": the tool list, three calls, an elicitation answered "Ada"."""
    path = tmp_path_factory.mktemp("replay") / "session.jsonl"
    proc = mcp(
        "--transcript",
        str(path),
        "--list",
        "tools",
        "--call",
        'echo={"text":"hi"}',
        "--call",
        "version",
        "--call",
        "ask_name",
        "--elicit",
        "accept",
        "--elicit-content",
        '{"name": "Ada"}',
        "--",
        *BUILD["a"],
    )
    assert proc.returncode == 0, proc.stderr
    return str(path)


def test_the_same_server_replays_the_same_and_exits_0(recorded):
    # No --elicit: the server's elicitation is answered from the recording.
    proc = mcp("--replay", recorded, "--", *BUILD["a"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = proc.stdout.splitlines()
    assert [r.split()[:3] for r in rows[:-1]] == [
        ["same", "tools/list", "(event"],
        ["same", "tools/call", "echo"],
        ["same", "tools/call", "version"],
        ["same", "tools/call", "ask_name"],
    ]
    assert rows[-1] == "replay: 4 requests replayed: 4 same"
    assert proc.stderr == ""


def test_a_changed_server_shows_that_request_changed_and_exits_5(recorded):
    proc = mcp("--replay", recorded, "--", *BUILD["b"])
    assert proc.returncode == 5, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    changed = [line for line in out if line.startswith("changed")]
    assert len(changed) == 1 and changed[0].split()[1:3] == ["tools/call", "version"]
    assert '/result/content/0/text: "release 1.0 (stable)" → "release 2.0 (beta)"' in proc.stdout
    assert "4 requests replayed: 3 same, 1 changed" in proc.stderr

    proc = mcp("--jsonl", "--replay", recorded, "--", *BUILD["b"])
    assert proc.returncode == 5
    events = lines(proc)
    diffs = [e for e in events if e["dir"] == "note" and e.get("kind") == "diff"]
    sent = {e["seq"]: e["message"] for e in json.loads("[" + ",".join(open(recorded)) + "]") if e["dir"] == "send"}
    assert [(d["data"]["status"], d["data"]["method"]) for d in diffs] == [
        ("same", "tools/list"),
        ("same", "tools/call"),
        ("changed", "tools/call"),
        ("same", "tools/call"),
    ]
    version = diffs[2]["data"]
    assert sent[version["seq"]]["params"]["name"] == "version"  # the seq of the original request
    assert version["changes"] == [
        {"path": "/result/content/0/text", "old": "release 1.0 (stable)", "new": "release 2.0 (beta)"},
        {"path": "/result/structuredContent/result", "old": "release 1.0 (stable)", "new": "release 2.0 (beta)"},
    ]
    # The transcript itself is there too: the handshake of the target's own era, then the requests.
    methods = [e["message"].get("method") for e in events if e["dir"] == "send" and e["message"]]
    assert methods[:2] == ["initialize", "notifications/initialized"]


def test_ignore_rules_leave_out_what_may_change(recorded):
    proc = mcp(
        "--replay",
        recorded,
        "--ignore",
        "/result/content/*/text",
        "--ignore",
        "/result/structuredContent",
        "--",
        *BUILD["b"],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--replay", "/nonexistent.jsonl"],
        ["--ignore", "/a"],
        ["--replay", "{recorded}", "--call", "echo"],
        ["--replay", "{recorded}", "--ignore", "no-slash"],
    ],
)
def test_usage_errors_exit_2(recorded, args):
    args = [a.replace("{recorded}", recorded) for a in args]
    proc = mcp(*args, "--", *BUILD["a"])
    assert proc.returncode == 2 and "mcp: error:" in proc.stderr


@pytest.mark.parametrize(
    "line, why",
    [
        ('{"hello": "world"}', "not a transcript"),
        (
            '{"seq": 1, "t": [], "dir": "send", "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}',
            "event 1: t is [], not a number of seconds",
        ),
    ],
)
def test_a_file_that_is_not_a_transcript_exits_2(tmp_path, line, why):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(line + "\n")
    proc = mcp("--replay", str(bad), "--", *BUILD["a"])
    assert proc.returncode == 2 and why in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_server_that_cannot_be_reached_exits_3(recorded):
    assert mcp("--replay", recorded, "--", "/nonexistent/server").returncode == 3


def test_junit_xml_of_a_replay_fails_the_changed_request_with_its_changes(recorded, tmp_path):
    import xml.etree.ElementTree as ET

    report = tmp_path / "replay.xml"
    proc = mcp("--replay", recorded, "--junit", str(report), "--", *BUILD["b"])
    assert proc.returncode == 5
    suite = ET.parse(report).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "1. tools/list",
        "2. tools/call echo",
        "3. tools/call version",
        "4. tools/call ask_name",
    ]
    assert suite.get("failures") == "1" and [c.find("failure") is not None for c in cases] == [
        False,
        False,
        True,
        False,
    ]
    failure = cases[2].find("failure").text
    assert (
        failure.startswith("changed")
        and '/result/content/0/text: "release 1.0 (stable)" → "release 2.0 (beta)"' in failure
    )
    assert "tools/call" in cases[2].find("system-out").text  # the replayed request and its response
