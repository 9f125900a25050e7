"""MCP Apps in the core: the vendored schema as published, a tool's UI metadata read from
untrusted lists, the app's policy built from its resource's `_meta.ui.csp`, the bridge's
messages checked."""

from __future__ import annotations

import hashlib
import json

from playground.budget import APP_POLICY
from playground.mcp.apps import app_csp, app_may_call, app_policy, capability, requested_permissions, tool_ui
from playground.mcp.lint.bridge import SCHEMA_FILE, check_bridge
from playground.mcp.lint.definitions import Request
from tests.conftest import ROOT

PACKAGE = ROOT / "tools" / "npm" / "node_modules" / "@modelcontextprotocol" / "ext-apps"


def test_the_schema_is_the_packages_unmodified():
    digest = "3823abdec2ab00069420812520c20f561428e1bf328c8f61189094f5160e33d9"
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == digest
    published = PACKAGE / "dist" / "src" / "generated" / "schema.json"
    if published.exists():  # (tools/npm installed: the same bytes as ext-apps 2.0.4's)
        assert json.loads((PACKAGE / "package.json").read_text())["version"] == "2.0.4"
        assert published.read_bytes() == SCHEMA_FILE.read_bytes()


def test_the_capability_names_the_mime_type():
    assert capability() == {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}


def test_a_tools_ui_both_spellings_and_what_is_not_one():
    ui = tool_ui({"name": "t", "_meta": {"ui": {"resourceUri": "ui://a/b.html", "visibility": ["app"]}}})
    assert ui is not None and ui.resource_uri == "ui://a/b.html" and ui.visibility == ("app",) and not ui.legacy_key
    older = tool_ui({"name": "t", "_meta": {"ui/resourceUri": "ui://old"}})
    assert older is not None and older.legacy_key and older.visibility == ("model", "app")
    for meta in ({"ui": {"resourceUri": "https://x"}}, {"ui": "x"}, {"ui": {"resourceUri": 5}}, None, []):
        assert tool_ui({"name": "t", "_meta": meta}) is None
    assert not app_may_call({"_meta": {"ui": {"visibility": ["model"]}}})
    assert app_may_call({"_meta": {"ui": {"visibility": ["app"]}}}) and app_may_call({"name": "plain"})


def test_the_apps_policy_defaults_closed_and_keeps_only_domains():
    rejected: list[str] = []
    policy = app_policy(
        {"connectDomains": ["https://api.example.com", "'unsafe-eval'; script-src *", "data:"]},
        "http://127.0.0.1:8000",
        rejected,
    )
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["connect-src"] == "https://api.example.com"
    assert directives["object-src"] == "'none'" and directives["frame-src"] == "'none'"
    assert directives["frame-ancestors"] == "http://127.0.0.1:8000"
    assert "unsafe-eval" not in policy and len(rejected) == 2
    bare = dict(d.strip().split(" ", 1) for d in app_policy(None, "javascript:alert(1)").split(";"))
    assert bare["connect-src"] == "'none'" and bare["frame-ancestors"] == "'none'"
    assert requested_permissions({"camera": {}, "clipboardWrite": {}, "teleport": {}}) == ["camera", "clipboard-write"]


def test_a_huge_policy_is_cut_to_its_budget_and_what_was_cut_is_said():
    """A server's csp reaches a header: bounded whatever its size, only domains, cut said."""
    wide = ["https://" + "a" * 250 + f"{i}.example.com" for i in range(32)]
    csp = {
        "resourceDomains": wide,
        "connectDomains": ["https://" + "b" * 100_000 + ".example.com", *wide],
        "frameDomains": {"not": "a list"},
        "default-src *; script-src": ["*"],
    }
    rejected: list[str] = []
    policy = app_policy(csp, "http://127.0.0.1:8000", rejected)
    reduced = app_csp(csp)
    assert sum(len(d) + 1 for lst in reduced.values() for d in lst) <= APP_POLICY.output
    assert len(policy) < 6 * APP_POLICY.output + 500 and "bbbbb" not in policy and "default-src *" not in policy
    assert any(r.startswith("connectDomains: 'https://bbbb") and r.endswith("'…") for r in rejected)
    assert any(r.startswith("resourceDomains: ") and APP_POLICY.says in r for r in rejected)
    assert "frameDomains: a dict, not a list" in rejected
    assert "keys the spec does not name: 'default-src *; script-src'" in rejected
    assert max(len(r) for r in rejected) < 300


def test_bridge_messages_against_the_extension_and_mcp():
    ok = check_bridge(
        {"jsonrpc": "2.0", "id": 1, "method": "ui/open-link", "params": {"url": "https://x"}},
        direction="recv",
        request=None,
        mcp_version="2025-11-25",
    )
    assert ok.definition == "McpUiOpenLinkRequest" and not ok.problems
    unknown = check_bridge(
        {"jsonrpc": "2.0", "method": "ui/nope"}, direction="recv", request=None, mcp_version="2025-11-25"
    )
    assert unknown.problems[0]["pointer"] == "/method"
    mode = check_bridge(
        {"jsonrpc": "2.0", "id": 3, "result": {"mode": "sideways"}},
        direction="send",
        request=Request("ui/request-display-mode"),
        mcp_version="2025-11-25",
    )
    assert mode.definition == "McpUiRequestDisplayModeResult" and mode.problems[0]["pointer"] == "/result/mode"
    # The app's standard MCP requests: checked as a client's.
    call = check_bridge(
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {}},
        direction="recv",
        request=None,
        mcp_version="2025-11-25",
    )
    assert call.definition == "CallToolRequest" and call.problems


def test_a_replay_leaves_the_bridge_lane_out():
    from playground.mcp.replay.recordings import recording

    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    rows = [
        {"seq": 1, "t": 0.0, "dir": "send", "message": ping},
        {"seq": 2, "t": 0.1, "dir": "recv", "message": {"jsonrpc": "2.0", "id": 1, "result": {}}, "reply_to": 1},
        {"seq": 3, "t": 0.2, "dir": "send", "message": {**ping, "id": 9}, "data": {"connection": "app"}},
        {
            "seq": 4,
            "t": 0.3,
            "dir": "recv",
            "message": {"jsonrpc": "2.0", "id": 4, "method": "tools/call"},
            "data": {"connection": "app"},
        },
    ]
    rec = recording(rows)
    assert [e.method for e in rec.exchanges] == ["ping"]
    assert rec.skipped == ["2 frames of another lane (an MCP App's bridge, a server check's probes) were not replayed"]


def test_a_message_the_published_apps_schema_cannot_check_is_said_unchecked_not_raised():
    """Three definitions of the published MCP Apps schema `$ref` a `#/$defs/__schema0` that is not
    there: a host's `ui/initialize` result with a tool's input properties met it and jsonschema
    raised, which broke the check of the whole batch. Now the frame is said unchecked."""
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}
    result = {
        "protocolVersion": "2026-01-26",
        "hostInfo": {"name": "h", "version": "1"},
        "hostCapabilities": {},
        "hostContext": {"toolInfo": {"tool": tool}},
    }
    report = check_bridge(
        {"jsonrpc": "2.0", "id": 1, "result": result},
        direction="send",
        request=Request("ui/initialize"),
        mcp_version="2025-11-25",
    )
    assert report.definition == "McpUiInitializeResult" and report.problems == []
    assert "cannot be applied" in report.unchecked and "__schema0" in report.unchecked
