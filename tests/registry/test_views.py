"""Server CRUD, login, import/export and the detail page, through the Django test client."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.contrib.auth import get_user_model

from playground.registry.models import Server

pytestmark = pytest.mark.django_db

STDIO_FORM = {
    "name": "Local time",
    "transport": "stdio",
    "command": "uvx",
    "args": "mcp-server-time\n--local-timezone=UTC\n",
    "env": "DEBUG=1\nAPI_TOKEN=s3cret-value\n",
    "cwd": "/tmp",
    "url": "",
    "headers": "",
    "era": "legacy",
}


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("dev", password="pw-123456")


@pytest.fixture
def browser(client, user):
    client.force_login(user)
    return client


def labels(html: str) -> list[str]:
    return [unescape(re.sub(r"<[^>]+>", "", m)).strip() for m in re.findall(r"<label[^>]*>(.*?)</label>", html, re.S)]


def options(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}".*?</select>', html, re.S).group(0)
    return [unescape(o) for o in re.findall(r"<option[^>]*>(.*?)</option>", select)]


# ---------------------------------------------------------------- login


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/servers/add/",
        "/servers/import/",
        "/servers/export/",
        "/servers/1/",
        "/servers/1/edit/",
        "/servers/1/delete/",
        "/servers/1/export/",
    ],
)
def test_every_page_requires_login(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_login_page_and_password_login(client, user):
    page = client.get("/login/").content.decode()
    assert labels(page) == ["Username", "Password"]
    assert ">Log in</button>" in page
    response = client.post("/login/", {"username": "dev", "password": "pw-123456"})
    assert response.status_code == 302 and response["Location"] == "/"
    home = client.get("/").content.decode()
    assert "MCP Playground" in home and "dev" in home and "Log out" in home


def test_wrong_password_is_refused(client, user):
    response = client.post("/login/", {"username": "dev", "password": "nope"})
    assert response.status_code == 200
    assert client.get("/").status_code == 302


def test_logout_is_a_post(browser):
    assert browser.post("/logout/").status_code == 302
    assert browser.get("/").status_code == 302


def test_base_layout_sends_csrf_header_to_htmx(browser):
    html = browser.get("/").content.decode()
    assert re.search(r"""<body hx-headers:inherited='\{"X-CSRFToken": "[^"]+"\}'""", html)
    assert "vendor/htmx/htmx.min.js" in html and "vendor/htmx/hx-ws.min.js" in html


# ---------------------------------------------------------------- CRUD


def test_add_form_has_exact_labels_and_options(browser):
    html = browser.get("/servers/add/").content.decode()
    assert labels(html) == [
        "Name",
        "Transport",
        "Command",
        "Arguments",
        "Environment",
        "Inherit the playground's environment",
        "Working directory",
        "URL",
        "Headers",
        "Roots",
        "Era",
        "Protocol version",
        "Replay ignore rules",
        "Render MCP Apps",
    ]
    assert re.search(r'<input type="checkbox" name="apps_enabled"[^>]* checked', html)
    assert options(html, "transport") == ["stdio", "Streamable HTTP", "SSE", "Auto"]
    assert options(html, "era") == ["Legacy", "Auto", "Modern"]
    assert options(html, "protocol_version") == [
        "The latest of the era",
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ]
    assert '<textarea name="args"' in html and '<textarea name="env"' in html and '<textarea name="headers"' in html
    assert ">Save</button>" in html


def test_create_stdio_server(browser, user):
    response = browser.post("/servers/add/", STDIO_FORM)
    server = Server.objects.get(name="Local time")
    assert response.status_code == 302 and response["Location"] == f"/servers/{server.pk}/"
    assert server.args == ["mcp-server-time", "--local-timezone=UTC"]
    assert server.env == {"DEBUG": "1", "API_TOKEN": "s3cret-value"}
    assert server.cwd == "/tmp" and server.era == "legacy" and server.owner == user
    home = browser.get("/").content.decode()
    assert f'<a href="/servers/{server.pk}/">Local time</a>' in home
    assert "—" in home


def test_create_http_server_and_to_config(browser):
    browser.post(
        "/servers/add/",
        {
            **STDIO_FORM,
            "name": "Remote",
            "transport": "http",
            "command": "",
            "url": "https://example.com/mcp",
            "headers": "Authorization: Bearer tok-123\nX-Env: dev",
            "era": "auto",
        },
    )
    server = Server.objects.get(name="Remote")
    config = server.to_config()
    assert (config.transport, config.url, config.era) == ("http", "https://example.com/mcp", "auto")
    assert config.protocol_version == ""  # the latest of the era
    assert config.headers == {"Authorization": "Bearer tok-123", "X-Env": "dev"}
    home = browser.get("/").content.decode()
    assert "Streamable HTTP" in home and "Auto" in home


@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"command": ""}, "command", "A stdio server needs a command."),
        ({"transport": "http", "url": ""}, "url", "This transport needs a URL."),
        ({"transport": "sse", "url": "ftp://x"}, "url", "Enter an http:// or https:// URL."),
        ({"transport": "auto", "url": "example.com/mcp"}, "url", "Enter an http:// or https:// URL."),
        ({"env": "DEBUG"}, "env", "Line 1: expected NAME=value, got &#x27;DEBUG&#x27;."),
        ({"env": "A=1\n2X=3"}, "env", "Line 2: &#x27;2X&#x27; is not a valid variable name."),
        ({"headers": "Authorization Bearer x"}, "headers", "Line 1: expected Name: value"),
        ({"headers": "X-Api-Key\u2028touch PWNED #: k"}, "headers", "Line 1: expected Name: value"),
        ({"headers": "X Y: k"}, "headers", "Line 1: &#x27;X Y&#x27; is not a valid header name."),
        ({"headers": "X-A: a\x00b"}, "headers", "Null characters are not allowed."),  # Django's, before ours
        ({"name": "  "}, "name", "This field is required."),
        ({"protocol_version": "2026-07-28"}, "protocol_version", "2026-07-28 has no initialize handshake"),
        ({"era": "modern", "protocol_version": "2025-03-26"}, "protocol_version", "2025-03-26 is a legacy version"),
    ],
)
def test_validation_errors(browser, changes, field, message):
    response = browser.post("/servers/add/", {**STDIO_FORM, **changes})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Server.objects.exists()


def test_duplicate_name_refused(browser):
    browser.post("/servers/add/", STDIO_FORM)
    response = browser.post("/servers/add/", STDIO_FORM)
    assert response.status_code == 200
    assert "You already have a server with this name." in response.content.decode()
    assert Server.objects.count() == 1


def test_edit_masks_secrets_and_an_unchanged_mask_keeps_them(browser):
    browser.post(
        "/servers/add/",
        {
            **STDIO_FORM,
            "transport": "http",
            "url": "https://h.example/mcp",
            "headers": "Authorization: Bearer tok-123\nX-Env: dev",
        },
    )
    server = Server.objects.get()
    html = browser.get(f"/servers/{server.pk}/edit/").content.decode()
    assert "mcp-server-time\n--local-timezone=UTC</textarea>" in html
    assert "s3cret-value" not in html and "tok-123" not in html  # never printed back
    assert "DEBUG=1\nAPI_TOKEN=••••</textarea>" in html and "Authorization: Bearer ••••\nX-Env: dev</textarea>" in html
    # Saved as shown (masks unchanged): the stored secrets stay; a new value replaces one.
    response = browser.post(
        f"/servers/{server.pk}/edit/",
        {
            **STDIO_FORM,
            "transport": "http",
            "url": "https://h.example/mcp",
            "args": "-v",
            "era": "modern",
            "env": "DEBUG=2\nAPI_TOKEN=••••",
            "headers": "Authorization: Bearer ••••\nX-Env: prod",
        },
    )
    assert response.status_code == 302
    server.refresh_from_db()
    assert server.args == ["-v"] and server.era == "modern"
    assert server.env == {"DEBUG": "2", "API_TOKEN": "s3cret-value"}
    assert server.headers == {"Authorization": "Bearer tok-123", "X-Env": "prod"}
    browser.post(f"/servers/{server.pk}/edit/", {**STDIO_FORM, "env": "API_TOKEN=new-one"})
    server.refresh_from_db()
    assert server.env == {"API_TOKEN": "new-one"}


def test_roots_are_edited_as_lines_uri_then_name(browser):
    browser.post("/servers/add/", {**STDIO_FORM, "roots": "file:///tmp/project Project one\n\nfile:///srv\n"})
    server = Server.objects.get()
    assert server.roots == [{"uri": "file:///tmp/project", "name": "Project one"}, {"uri": "file:///srv"}]
    html = browser.get(f"/servers/{server.pk}/edit/").content.decode()
    assert "file:///tmp/project Project one\nfile:///srv</textarea>" in html
    assert "file:///tmp/project" in browser.get(f"/servers/{server.pk}/").content.decode()
    response = browser.post(f"/servers/{server.pk}/edit/", {**STDIO_FORM, "roots": "not-a-uri"})
    assert response.status_code == 200 and "is not a URI" in unescape(response.content.decode())


def test_detail_masks_secrets_and_has_session_area(browser, user):
    server = Server.objects.create(
        owner=user, name="S", transport="stdio", command="run", env={"API_TOKEN": "s3cret-value", "DEBUG": "1"}
    )
    remote = Server.objects.create(
        owner=user,
        name="R",
        transport="http",
        url="https://e.example/mcp",
        headers={"Authorization": "Bearer tok-123", "X-Env": "dev"},
    )
    html = browser.get(f"/servers/{server.pk}/").content.decode()
    assert "s3cret-value" not in html and "API_TOKEN=••••" in html and "DEBUG=1" in html
    assert '<div id="session-area">' in html
    html = browser.get(f"/servers/{remote.pk}/").content.decode()
    assert "tok-123" not in html and "Authorization: Bearer ••••" in html and "X-Env: dev" in html


def test_delete_needs_post_and_confirms(browser, user):
    server = Server.objects.create(owner=user, name="Doomed", command="x")
    page = browser.get(f"/servers/{server.pk}/delete/").content.decode()
    assert "Delete Doomed?" in page and 'method="post"' in page
    assert Server.objects.filter(pk=server.pk).exists()
    response = browser.post(f"/servers/{server.pk}/delete/")
    assert response.status_code == 302 and response["Location"] == "/"
    assert not Server.objects.filter(pk=server.pk).exists()


def test_missing_server_is_404(browser):
    assert browser.get("/servers/999/").status_code == 404


# ---------------------------------------------------------------- import / export


def test_import_page_creates_and_reports(browser):
    html = browser.get("/servers/import/").content.decode()
    assert ">Import</button>" in html and "Replace servers with the same name" in html
    text = json.dumps(
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"]},
                "remote": {"url": "http://127.0.0.1:3000/mcp"},
                "broken": {"type": "carrier-pigeon", "url": "http://x"},
            }
        }
    )
    html = browser.post("/servers/import/", {"text": text}).content.decode()
    assert Server.objects.get(name="time").args == ["mcp-server-time"]
    assert Server.objects.get(name="remote").transport == "auto"
    assert not Server.objects.filter(name="broken").exists()
    assert html.count("status-created") == 2 and html.count("status-skipped") == 1
    assert "Unknown &quot;type&quot; &#x27;carrier-pigeon&#x27;" in html


def test_import_refuses_a_header_name_that_is_no_token(browser):
    """Issue 30: an imported header named "X-Api-Key\\ntouch PWNED #" was saved, and its newline put
    a command on a line of its own in the copied curl. Refused, named (escaped); the others import."""
    text = json.dumps(
        {
            "mcpServers": {
                "hostile": {
                    "type": "http",
                    "url": "https://example.com/mcp",
                    "headers": {"X-Api-Key\ntouch PWNED #": "k"},
                },
                "nul": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Ok": "a\u0000b"}},
                "fine": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Api-Key": "k"}},
            }
        }
    )
    html = browser.post("/servers/import/", {"text": text}).content.decode()
    assert list(Server.objects.values_list("name", flat=True)) == ["fine"]
    assert html.count("status-created") == 1 and html.count("status-skipped") == 2
    assert "&#x27;X-Api-Key\\ntouch PWNED #&#x27; is not a valid HTTP header name" in html
    assert "the value of X-Ok holds a line break or NUL character" in html


def test_import_name_clash_renames_unless_replace(browser, user):
    Server.objects.create(owner=user, name="time", command="old")
    text = json.dumps({"mcpServers": {"time": {"command": "new"}}})
    html = browser.post("/servers/import/", {"text": text}).content.decode()
    assert Server.objects.get(name="time").command == "old"
    assert Server.objects.get(name="time (2)").command == "new"
    assert "created as &#x27;time (2)&#x27;" in html
    browser.post("/servers/import/", {"text": json.dumps({"mcpServers": {"time": {"command": "newer"}}})})
    assert Server.objects.get(name="time (3)").command == "newer"

    html = browser.post(
        "/servers/import/", {"text": json.dumps({"mcpServers": {"time": {"command": "replaced"}}}), "replace": "on"}
    ).content.decode()
    assert Server.objects.get(name="time").command == "replaced"
    assert "status-updated" in html
    assert Server.objects.count() == 3


def test_reimporting_identical_server_is_skipped(browser):
    text = json.dumps({"mcpServers": {"time": {"command": "uvx"}}})
    browser.post("/servers/import/", {"text": text})
    html = browser.post("/servers/import/", {"text": text}).content.decode()
    assert "Already registered with the same settings." in html
    assert Server.objects.count() == 1


def test_import_bad_json_shows_error(browser):
    html = browser.post("/servers/import/", {"text": "{oops"}).content.decode()
    assert "Not valid JSON" in html
    assert not Server.objects.exists()


def test_replace_keeps_era_and_protocol_version(browser, user):
    Server.objects.create(owner=user, name="t", command="a", era="modern", protocol_version="2026-07-28")
    browser.post("/servers/import/", {"text": json.dumps({"mcpServers": {"t": {"command": "b"}}}), "replace": "on"})
    server = Server.objects.get(name="t")
    assert (server.command, server.era, server.protocol_version) == ("b", "modern", "2026-07-28")


def test_export_all_and_one(browser, user):
    a = Server.objects.create(owner=user, name="a b", command="x", args=["1"], env={"K": "v"})
    Server.objects.create(owner=user, name="r", transport="sse", url="http://127.0.0.1:1/sse", headers={"A": "b"})
    response = browser.get("/servers/export/")
    assert response["Content-Type"] == "application/json"
    assert "attachment" in response["Content-Disposition"]
    assert json.loads(response.content) == {
        "mcpServers": {
            "a b": {"command": "x", "args": ["1"], "env": {"K": "v"}},
            "r": {"type": "sse", "url": "http://127.0.0.1:1/sse", "headers": {"A": "b"}},
        }
    }
    vscode = json.loads(browser.get("/servers/export/?format=vscode").content)
    assert vscode["servers"]["a b"]["type"] == "stdio" and vscode["servers"]["r"]["type"] == "sse"
    one = browser.get(f"/servers/{a.pk}/export/")
    assert json.loads(one.content) == {"mcpServers": {"a b": {"command": "x", "args": ["1"], "env": {"K": "v"}}}}
    assert 'filename="a-b.json"' in one["Content-Disposition"]


def test_export_then_import_round_trip(browser, user):
    Server.objects.create(owner=user, name="a", command="x", args=["-m", "y"], env={"K": "v"}, cwd="/w")
    Server.objects.create(
        owner=user, name="h", transport="http", url="https://h.example/mcp", headers={"Authorization": "Bearer z"}
    )
    exported = browser.get("/servers/export/").content.decode()
    before = {s.name: s.to_config() for s in Server.objects.all()}
    Server.objects.all().delete()
    browser.post("/servers/import/", {"text": exported})
    assert {s.name: s.to_config() for s in Server.objects.all()} == before
