"""A whole command line typed as a stdio server's Command (or written so in a host's JSON) is
split as a shell would split it, and the page says what was done; shell-only syntax is refused."""

from __future__ import annotations

import shlex
import sys
from html import unescape

import pytest
from django.contrib.auth import get_user_model

from playground.registry import interchange
from playground.registry.command_line import CommandLineError, split_command_line
from playground.registry.models import Server


@pytest.mark.parametrize(
    ("line", "given", "command", "args", "assigned"),
    [
        ("npx -y pkg arg", [], "npx", ["-y", "pkg", "arg"], {}),
        ("node /path/index.js stdio", [], "node", ["/path/index.js", "stdio"], {}),
        ("uvx mcp-server-time", ["--local-timezone=UTC"], "uvx", ["mcp-server-time", "--local-timezone=UTC"], {}),
        ("python 'my server.py' --name \"a b\" c\\ d", [], "python", ["my server.py", "--name", "a b", "c d"], {}),
        ("API_KEY=k1234567890 DEBUG=1 npx -y pkg", [], "npx", ["-y", "pkg"], {"API_KEY": "k1234567890", "DEBUG": "1"}),
        ("sh -c 'sleep 1 && exec server'", [], "sh", ["-c", "sleep 1 && exec server"], {}),  # quoted: one word
        ("node 'a|b.js' \"x;y\" c\\&d e#f", [], "node", ["a|b.js", "x;y", "c&d", "e#f"], {}),  # quoted, escaped
    ],
)
def test_a_command_line_is_split_as_a_shell_would(line, given, command, args, assigned):
    split = split_command_line(line, given)
    assert split is not None
    assert (split.command, split.args, split.assigned) == (command, args, assigned)


def test_the_sentence_says_what_was_done_and_masks_secret_values():
    split = split_command_line("API_TOKEN=k1234567890 npx -y @scope/pkg $HOME/data")
    assert split.message == (
        "Split the command line into command `npx` and arguments `-y`, `@scope/pkg`, "
        "`$HOME/data`. Moved `API_TOKEN=••••` to Environment. `$HOME/data` is passed as "
        "written: no shell expands it."
    )
    assert split_command_line("npx pkg", ["--flag"]).message == (
        "Split the command line into command `npx` and argument `pkg` (before the 1 already under Arguments)."
    )


@pytest.mark.parametrize("one_program", ["npx", sys.executable, "  uvx  "])
def test_one_program_is_left_alone(one_program):
    assert split_command_line(one_program) is None


def test_an_existing_path_with_spaces_is_one_program(tmp_path):
    program = tmp_path / "My Server" / "run"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    assert split_command_line(str(program)) is None


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("npx pkg | tee log", "'|' is shell syntax"),
        ("node x.js > out.txt", "'>' is shell syntax"),
        ("node x.js 2>/dev/null", "'2>/dev/null' is shell syntax"),
        ("node $(pwd)/x.js", "'$(pwd)/x.js' is shell syntax"),
        ("npx a && npx b", "'&&' is shell syntax"),
        # Operators attached to a word: shlex.split leaves them inside it (['pkg|tee', 'log']).
        ("npx pkg|tee log", "'|' is shell syntax"),
        ("npx pkg; echo hi", "';' is shell syntax"),
        ("npx pkg&&x", "'&&' is shell syntax"),
        ("node x.js>out.txt", "'>' is shell syntax"),
        ("npx pkg&", "'&' is shell syntax"),
        ("node x.js>&2", "'>&' is shell syntax"),
        ("python 'unclosed", "cannot be split (no closing quotation)"),
        ("A=1 B=2", "sets variables but names no program"),
    ],
)
def test_what_only_a_shell_understands_is_refused(line, why):
    with pytest.raises(CommandLineError) as refused:
        split_command_line(line)
    assert why in str(refused.value)


# ---------------------------------------------------------------- the form and the import


@pytest.fixture
def browser(client, db):
    client.force_login(get_user_model().objects.create_user("dev", password="pw-123456"))
    return client


FORM = {
    "name": "everything",
    "transport": "stdio",
    "args": "",
    "env": "DEBUG=1",
    "cwd": "",
    "url": "",
    "headers": "",
    "roots": "",
    "era": "legacy",
    "protocol_version": "",
}


def test_the_form_splits_on_save_and_says_so(browser):
    line = shlex.join([sys.executable, "/opt/peers/sdk server.py"]) + " stdio"
    response = browser.post("/servers/add/", {**FORM, "command": f"TOKEN=abcdefghijk {line}"}, follow=True)
    server = Server.objects.get(name="everything")
    assert server.command == sys.executable
    assert server.args == ["/opt/peers/sdk server.py", "stdio"]
    assert server.env == {"DEBUG": "1", "TOKEN": "abcdefghijk"}
    page = unescape(response.content.decode())
    assert (
        f"Split the command line into command `{sys.executable}` and arguments `/opt/peers/sdk server.py`, "
        "`stdio`. Moved `TOKEN=••••` to Environment."
    ) in page
    assert "abcdefghijk" not in page


def test_a_form_with_other_errors_shows_the_split_so_a_second_save_keeps_it(browser):
    Server.objects.create(name="taken", owner=get_user_model().objects.get(), command="x")
    response = browser.post("/servers/add/", {**FORM, "name": "taken", "command": "npx -y pkg"})
    page = unescape(response.content.decode())
    assert "You already have a server with this name." in page
    assert 'name="command" value="npx"' in page and ">\n-y\npkg</textarea>" in page
    assert "Split the command line into command `npx`" in page
    assert not Server.objects.filter(command="npx").exists()


def test_shell_syntax_is_a_form_error(browser):
    response = browser.post("/servers/add/", {**FORM, "command": "npx pkg | tee log"})
    assert "is shell syntax, and a stdio server is started without a shell" in unescape(response.content.decode())
    assert not Server.objects.filter(name="everything").exists()


def test_an_http_server_is_not_split(browser):
    browser.post(
        "/servers/add/",
        {**FORM, "transport": "http", "url": "http://127.0.0.1:9/mcp", "command": "left over from stdio"},
    )
    assert Server.objects.get(name="everything").command == "left over from stdio"


def test_the_import_splits_a_command_line_too():
    result = interchange.parse(
        {
            "mcpServers": {
                "time": {"command": "uvx mcp-server-time --local-timezone=UTC"},
                "everything": {"command": "npx -y @modelcontextprotocol/server-everything", "args": ["stdio"]},
                "broken": {"command": "npx pkg > log"},
            }
        }
    )
    time, everything = result.entries
    assert (time.command, time.args) == ("uvx", ["mcp-server-time", "--local-timezone=UTC"])
    assert time.notes == [
        "Split the command line into command `uvx` and arguments `mcp-server-time`, `--local-timezone=UTC`."
    ]
    assert (everything.command, everything.args) == ("npx", ["-y", "@modelcontextprotocol/server-everything", "stdio"])
    assert [(r.name, "shell syntax" in r.reason) for r in result.rejected] == [("broken", True)]


def test_the_form_shows_each_transports_fields_in_its_own_group(browser):
    page = browser.get("/servers/add/").content.decode()
    stdio = page.index('data-transports="stdio"')
    http = page.index('data-transports="http sse auto"')
    assert stdio < page.index('name="command"') < page.index('name="cwd"') < http < page.index('name="url"')
    # Each choice explains itself in one line; the page shows the chosen one's (server_form.js).
    for value in ("legacy", "auto", "modern"):
        assert f'<span data-choice="{value}">' in page
    assert 'aria-describedby="id_era-help"' in page and 'id="id_era-help"' in page
    assert "server_form.js" in page
