"""Pure conversion between host JSON dialects and registry settings."""

from __future__ import annotations

import json

import pytest

from playground.registry import interchange as ic
from playground.registry.interchange import Entry, InterchangeError


def one(text):
    result = ic.parse(text)
    assert not result.rejected, result.rejected
    assert len(result.entries) == 1
    return result.entries[0]


# ---------------------------------------------------------------- dialects


def test_claude_desktop_stdio():
    text = json.dumps(
        {
            "mcpServers": {
                "fs": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                    "env": {"DEBUG": "1"},
                }
            }
        }
    )
    result = ic.parse(text)
    assert result.dialect == "mcpServers"
    entry = result.entries[0]
    assert (entry.name, entry.transport, entry.command) == ("fs", "stdio", "npx")
    assert entry.args == ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    assert entry.env == {"DEBUG": "1"}
    assert entry.notes == []


@pytest.mark.parametrize(
    "type_, transport",
    [
        ("streamable_http", "http"),
        ("streamableHttp", "http"),
        ("streamable-http", "http"),
        ("http", "http"),
        ("HTTP", "http"),
        ("sse", "sse"),
        ("SSE", "sse"),
    ],
)
def test_remote_type_spellings(type_, transport):
    entry = one(
        {
            "mcpServers": {
                "r": {"type": type_, "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer abc"}}
            }
        }
    )
    assert entry.transport == transport
    assert entry.url == "https://example.com/mcp"
    assert entry.headers == {"Authorization": "Bearer abc"}


def test_url_without_type_is_auto_with_a_note():
    entry = one({"mcpServers": {"cursor-remote": {"url": "http://127.0.0.1:3000/mcp"}}})
    assert entry.transport == "auto"
    assert any("Auto" in n for n in entry.notes)


def test_cherry_studio_base_url_and_bookkeeping():
    text = json.dumps(
        {
            "mcpServers": {
                "cherry-http": {
                    "isActive": True,
                    "name": "cherry-http",
                    "type": "streamableHttp",
                    "baseUrl": "http://127.0.0.1:8080/mcp",
                    "headers": {"X-Api-Key": "k"},
                },
                "cherry-sse": {"isActive": False, "type": "sse", "baseUrl": "http://127.0.0.1:8081/sse"},
                "cherry-stdio": {
                    "isActive": True,
                    "type": "stdio",
                    "command": "uvx",
                    "args": ["mcp-server-time"],
                    "env": {},
                },
            }
        }
    )
    result = ic.parse(text)
    by = {e.name: e for e in result.entries}
    assert by["cherry-http"].transport == "http" and by["cherry-http"].url == "http://127.0.0.1:8080/mcp"
    assert by["cherry-http"].headers == {"X-Api-Key": "k"}
    assert by["cherry-http"].notes == []  # isActive/name are known bookkeeping
    assert by["cherry-sse"].transport == "sse"
    assert any("Disabled" in n for n in by["cherry-sse"].notes)
    assert by["cherry-stdio"].transport == "stdio" and by["cherry-stdio"].args == ["mcp-server-time"]


def test_windsurf_server_url():
    entry = one({"mcpServers": {"w": {"serverUrl": "https://w.example/mcp"}}})
    assert entry.transport == "auto" and entry.url == "https://w.example/mcp"


def test_vscode_servers_with_comments_and_trailing_commas():
    text = """{
      // .vscode/mcp.json
      "inputs": [{"type": "promptString", "id": "key", "password": true}],
      "servers": {
        "local": {"type": "stdio", "command": "python", "args": ["-m", "srv",], "env": {"TOKEN": "${input:key}"},},
        /* remote one */
        "remote": {"type": "http", "url": "https://r.example/mcp", "headers": {"A": "b"}},
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
      },
    }"""
    result = ic.parse(text)
    assert result.dialect == "vscode"
    by = {e.name: e for e in result.entries}
    assert by["local"].args == ["-m", "srv"] and by["local"].env == {"TOKEN": "${input:key}"}
    assert any("${" in n for n in by["local"].notes)
    assert by["remote"].transport == "http" and by["remote"].headers == {"A": "b"}
    assert by["old"].transport == "sse"
    assert any("inputs" in w for w in result.warnings)


def test_vscode_settings_json_mcp_key():
    entry = one({"mcp": {"servers": {"s": {"type": "stdio", "command": "node", "args": ["x.js"]}}}})
    assert entry.command == "node"


def test_bare_mapping():
    result = ic.parse({"a": {"command": "x"}, "b": {"url": "http://127.0.0.1:1/mcp", "type": "sse"}})
    assert result.dialect == "bare"
    assert [e.transport for e in result.entries] == ["stdio", "sse"]


def test_slashes_in_strings_are_not_comments():
    text = '{"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp", "type": "http", "headers": {"X": "a,}"}},}}'
    assert one(text).headers == {"X": "a,}"}


def test_numbers_and_booleans_in_args_and_env_become_strings():
    entry = one({"mcpServers": {"a": {"command": "x", "args": ["--port", 8080], "env": {"DEBUG": True, "N": 3}}}})
    assert entry.args == ["--port", "8080"]
    assert entry.env == {"DEBUG": "true", "N": "3"}


def test_unknown_keys_are_noted():
    entry = one({"mcpServers": {"a": {"command": "x", "weird": 1, "envFile": ".env"}}})
    assert any('"weird"' in n for n in entry.notes)
    assert any("envFile" in n for n in entry.notes)


def test_duplicate_keys_warn():
    result = ic.parse('{"mcpServers": {"a": {"command": "one"}, "a": {"command": "two"}}}')
    assert result.entries[0].command == "two"
    assert any("twice" in w for w in result.warnings)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "Nothing to import"),
        ("{not json", "Not valid JSON"),
        ("[1, 2]", "got a JSON array"),
        ('{"other": 1}', "No servers found"),
        ('{"mcpServers": []}', "must be an object"),
        ('{"servers": "x"}', "must be an object"),
    ],
)
def test_document_errors(text, message):
    with pytest.raises(InterchangeError, match=message):
        ic.parse(text)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("npx", "Expected an object"),
        ({}, 'Needs a "command"'),
        ({"type": "websocket", "url": "ws://x"}, "Unknown \"type\" 'websocket'"),
        ({"type": 3, "url": "http://x"}, "must be a string"),
        ({"type": "stdio"}, 'needs a "command"'),
        ({"type": "http"}, 'needs a "url"'),
        ({"url": "ftp://example.com"}, "not an http"),
        ({"url": "http://"}, "not an http"),
        ({"command": "x", "url": "http://127.0.0.1/"}, "both"),
        ({"command": "x", "args": "--flag"}, '"args" must be a list'),
        ({"command": "x", "args": [{"a": 1}]}, "only strings"),
        ({"command": "x", "env": ["A=1"]}, '"env" must be an object'),
        ({"command": "x", "env": {"A": {"b": 1}}}, '"env".A must be a string'),
        ({"url": "http://127.0.0.1/", "headers": "Authorization: x"}, '"headers" must be an object'),
        ({"command": "x", "cwd": 5}, '"cwd" must be a string'),
        # Header names are RFC 9110 tokens: a newline in one reached the copied curl command's comments.
        (
            {"url": "http://127.0.0.1/", "headers": {"X-Api-Key\ntouch PWNED #": "k"}},
            "\"headers\": 'X-Api-Key\\ntouch PWNED #' is not a valid HTTP header name",
        ),
        ({"url": "http://127.0.0.1/", "headers": {"Region\n": "k"}}, "'Region\\n' is not a valid HTTP header name"),
        ({"url": "http://127.0.0.1/", "headers": {"X Y": "k"}}, "'X Y' is not a valid HTTP header name"),
        ({"url": "http://127.0.0.1/", "headers": {"": "k"}}, "'' is not a valid HTTP header name"),
        ({"url": "http://127.0.0.1/", "headers": {"X-A": "a\nb"}}, "the value of X-A holds a line break or NUL"),
        ({"url": "http://127.0.0.1/", "headers": {"X-A": "a\x00b"}}, "the value of X-A holds a line break or NUL"),
    ],
)
def test_bad_entries_are_rejected_with_reasons_and_others_still_import(spec, message):
    result = ic.parse({"mcpServers": {"bad": spec, "good": {"command": "ok"}}})
    assert [e.name for e in result.entries] == ["good"]
    assert result.rejected[0].name == "bad"
    assert message in result.rejected[0].reason


def test_empty_name_rejected():
    result = ic.parse({"mcpServers": {"  ": {"command": "x"}}})
    assert "non-empty name" in result.rejected[0].reason


# ---------------------------------------------------------------- export and round trip

ENTRIES = [
    Entry(
        name="local",
        transport="stdio",
        command="python",
        args=["-m", "srv", "--flag=a b"],
        env={"API_KEY": "s3cret", "DEBUG": "1"},
        cwd="/srv/app",
    ),
    Entry(name="plain", transport="stdio", command="uvx", args=["mcp-server-time"]),
    Entry(name="remote", transport="http", url="https://r.example/mcp", headers={"Authorization": "Bearer t"}),
    Entry(name="legacy-sse", transport="sse", url="http://127.0.0.1:9/sse"),
    Entry(name="unsure", transport="auto", url="http://127.0.0.1:10/mcp"),
]


def test_export_mcp_servers_shape():
    doc = ic.export(ENTRIES)
    servers = doc["mcpServers"]
    assert servers["local"] == {
        "command": "python",
        "args": ["-m", "srv", "--flag=a b"],
        "env": {"API_KEY": "s3cret", "DEBUG": "1"},
        "cwd": "/srv/app",
    }
    assert servers["plain"] == {"command": "uvx", "args": ["mcp-server-time"]}
    assert servers["remote"] == {
        "type": "http",
        "url": "https://r.example/mcp",
        "headers": {"Authorization": "Bearer t"},
    }
    assert servers["legacy-sse"] == {"type": "sse", "url": "http://127.0.0.1:9/sse"}
    assert servers["unsure"] == {"url": "http://127.0.0.1:10/mcp"}


def test_export_vscode_shape():
    servers = ic.export(ENTRIES, "vscode")["servers"]
    assert servers["local"]["type"] == "stdio"
    assert servers["remote"]["type"] == "http"
    assert servers["legacy-sse"]["type"] == "sse"
    assert servers["unsure"]["type"] == "http"  # VS Code's http falls back to SSE itself


def test_round_trip_mcp_servers_is_lossless():
    back = ic.parse(ic.dumps(ic.export(ENTRIES)))
    assert [(e.name, e.settings()) for e in back.entries] == [(e.name, e.settings()) for e in ENTRIES]


def test_round_trip_vscode_keeps_everything_but_auto():
    back = {e.name: e for e in ic.parse(ic.dumps(ic.export(ENTRIES, "vscode"))).entries}
    for entry in ENTRIES:
        expected = entry.settings()
        if entry.transport == "auto":
            expected["transport"] = "http"
        assert back[entry.name].settings() == expected


def test_export_rejects_unknown_format():
    with pytest.raises(ValueError):
        ic.export(ENTRIES, "yaml")


# ---------------------------------------------------------------- the form's text fields


def test_env_lines():
    assert ic.parse_env_lines("A=1\n\n# comment\nB=x=y\nC=\n") == {"A": "1", "B": "x=y", "C": ""}
    assert ic.format_env_lines({"A": "1", "B": "x=y"}) == "A=1\nB=x=y"


@pytest.mark.parametrize(
    "text, message",
    [
        ("JUSTNAME", "Line 1: expected NAME=value"),
        ("A=1\n1BAD=2", "Line 2: '1BAD' is not a valid variable name"),
        ("A=1\nA=2", "Line 2: A is set twice"),
    ],
)
def test_env_line_errors(text, message):
    with pytest.raises(ValueError) as info:
        ic.parse_env_lines(text)
    assert message in info.value.args[0][0]


def test_header_lines():
    assert ic.parse_header_lines("Authorization: Bearer a:b\nX-Trace:  1 ") == {
        "Authorization": "Bearer a:b",
        "X-Trace": "1",
    }
    assert ic.format_header_lines({"A": "b"}) == "A: b"


@pytest.mark.parametrize(
    "text, message",
    [
        ("Authorization Bearer x", "Line 1: expected Name: value"),
        ("Bad Name: x", "'Bad Name' is not a valid header name"),
        ("X-A: 1\nx-a: 2", "Line 2: x-a is set twice"),
        ("X\u2028Y: 1", "Line 1: expected Name: value, got 'X'"),  # splitlines ends a line there too
        ("X\x85Y: 1", "Line 1: expected Name: value, got 'X'"),
        ("X-A: a\x00b", "Line 1: the value of X-A holds a line break or NUL character"),
    ],
)
def test_header_line_errors(text, message):
    with pytest.raises(ValueError) as info:
        ic.parse_header_lines(text)
    assert message in info.value.args[0][0]


def test_arg_lines():
    assert ic.parse_arg_lines("-m\r\n server \n\n--x=a b\n") == ["-m", "server", "--x=a b"]
    assert ic.format_arg_lines(["-m", "server"]) == "-m\nserver"
