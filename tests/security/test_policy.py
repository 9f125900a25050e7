"""Hosted-mode policy: the SSRF guard (on save, on connect, at socket open), the stdio
allow-list, and the warning for a bind beyond loopback."""

from __future__ import annotations

import ipaddress
import sys
from io import StringIO

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.core.management import call_command

from playground import security
from playground.core.checks import check_bind
from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from playground.mcp.events import Tap
from playground.mcp.netguard import AddressRefused, NetGuard
from playground.registry import interchange, services
from playground.registry.forms import ServerForm
from playground.registry.models import Server
from playground.sessions.live.worker import start_session
from playground.sessions.live.workers import WORKERS
from playground.transcripts.models import Event, Session
from tests.http_peers import FaultServer, head

REFUSED = [
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "100.64.0.1",
    "169.254.169.254",
    "169.254.1.1",
    "fe80::1",
    "fd00:ec2::254",
    "fc00::1",
    "100.100.100.200",
    "::ffff:10.0.0.1",
    "224.0.0.1",
    "240.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "2002:a9fe:a9fe::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
]  # NAT64, 6to4, Teredo
ALLOWED = [
    "127.0.0.1",
    "127.8.9.1",
    "::1",
    "0.0.0.0",
    "8.8.8.8",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
]


@pytest.mark.parametrize("address", REFUSED)
def test_private_link_local_and_metadata_are_refused_by_default(address):
    reason = security.address_refusal(ipaddress.ip_address(address))
    assert reason and "PLAYGROUND_HTTP_ALLOW_PRIVATE" in reason
    if address in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "64:ff9b::a9fe:a9fe"):
        assert "metadata" in reason


@pytest.mark.parametrize("address", ALLOWED)
def test_loopback_and_public_are_allowed_by_default(address):
    assert security.address_refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("address", ["::169.254.169.254", "::10.0.0.1", "::8.8.8.8", "::7f00:1"])
def test_the_deprecated_ipv4_compatible_form_is_refused_whatever_the_settings(address, settings):
    settings.PLAYGROUND_HTTP_ALLOW_PRIVATE = True
    reason = security.address_refusal(ipaddress.ip_address(address))
    assert reason and "IPv4-compatible" in reason


def test_settings_switch_the_policy(settings):
    settings.PLAYGROUND_HTTP_ALLOW_PRIVATE = True
    assert all(security.address_refusal(ipaddress.ip_address(a)) is None for a in REFUSED)
    settings.PLAYGROUND_HTTP_ALLOW_LOOPBACK = False
    assert "loopback" in security.address_refusal(ipaddress.ip_address("127.0.0.1"))


def fake_dns(table: dict[str, list[str]]):
    async def resolver(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError("no such name")
        return table[host]

    return resolver


async def test_every_resolved_address_is_checked_and_nothing_is_sent():
    guard = NetGuard(security.address_refusal, fake_dns({"rebind.test": ["127.0.0.1", "10.1.2.3"]}))
    with pytest.raises(AddressRefused, match=r"rebind.test \(10.1.2.3\) is a private"):
        await guard.check("rebind.test", 80)
    tap, seen = Tap(), []
    tap.subscribe(seen.append)
    config = ServerConfig(transport="http", url="http://rebind.test/mcp", timeout=5)
    with pytest.raises(ConnectError, match="refused by the address guard"):
        await open_client(config, tap=tap, guard=guard)
    assert any(e.dir == "note" and "10.1.2.3" in (e.text or "") for e in seen)
    assert not any(e.dir == "send" for e in seen)


async def test_the_guard_runs_when_the_socket_opens_and_connects_to_the_checked_address():
    """A name the system resolver does not know reaches the server only through the guard's own
    (checked, pinned) address; once the name 'rebinds' to a private address, the next
    connection is refused before anything is sent."""

    async def answer(req, w):
        w.write(
            head("200 OK", "application/json")
            + b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},'
            b'"serverInfo":{"name":"fault","version":"0"}}}'
        )
        await w.drain()

    table = {"pinned.test": ["127.0.0.1"]}
    guard = NetGuard(security.address_refusal, fake_dns(table))
    async with FaultServer(answer) as server:
        port = server.url.split(":")[2].split("/")[0]
        seen: list = []
        tap = Tap()
        tap.subscribe(seen.append)
        config = ServerConfig(transport="http", url=f"http://pinned.test:{port}/mcp", timeout=5)
        client = await open_client(config, tap=tap, guard=guard)
        assert client.server_info["name"] == "fault"
        requests = len(server.requests)
        table["pinned.test"] = ["10.9.9.9"]  # DNS changed after connecting
        await client.transport._client.aclose()  # force a new connection for the next request
        client.transport._client = None
        with pytest.raises(Exception, match="refused by the address guard"):
            await client.ping()
        assert len(server.requests) == requests  # nothing reached anyone
        await client.close()


# --- on save -----------------------------------------------------------------------------

FORM = {
    "name": "x",
    "transport": "http",
    "command": "",
    "args": "",
    "env": "",
    "cwd": "",
    "url": "",
    "headers": "",
    "era": "legacy",
}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url, error",
    [
        ("http://10.0.0.8/mcp", "10.0.0.8 is a private or reserved address"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://[fe80::1]:3000/mcp", "link-local"),
        ("http://127.0.0.1:3000/mcp", None),
        ("http://localhost:3000/mcp", None),
    ],
)
def test_server_form_applies_the_address_guard(url, error):
    form = ServerForm(data={**FORM, "url": url})
    if error is None:
        assert form.is_valid(), form.errors
    else:
        assert not form.is_valid() and error in " ".join(form.errors["url"])


@pytest.mark.django_db
def test_stdio_can_be_turned_off_or_limited_to_an_allow_list(settings):
    stdio = {**FORM, "transport": "stdio", "command": "npx", "args": "-y\nsome-server"}
    assert ServerForm(data=stdio).is_valid()
    settings.PLAYGROUND_STDIO_COMMANDS = ["npx", "uvx"]
    assert ServerForm(data=stdio).is_valid()
    for command in ("/tmp/evil/npx", "python3", "sh"):
        form = ServerForm(data={**stdio, "command": command})
        assert not form.is_valid() and "not allowed here" in form.errors["command"][0]
    settings.PLAYGROUND_ALLOW_STDIO = False
    form = ServerForm(data=stdio)
    assert not form.is_valid() and "PLAYGROUND_ALLOW_STDIO=false" in form.errors["command"][0]


@pytest.mark.django_db
def test_import_skips_servers_the_policy_refuses(settings):
    settings.PLAYGROUND_ALLOW_STDIO = False
    parsed = interchange.parse(
        '{"mcpServers": {"local": {"command": "npx", "args": ["x"]}, "meta": {"url": "http://169.254.169.254/mcp"},'
        ' "fine": {"url": "http://127.0.0.1:9/mcp"}}}'
    )
    outcomes = {o.name: o for o in services.import_servers(parsed, replace=False)}
    assert outcomes["local"].status == "skipped" and "PLAYGROUND_ALLOW_STDIO" in outcomes["local"].reason
    assert outcomes["meta"].status == "skipped" and "metadata" in outcomes["meta"].reason
    assert outcomes["fine"].status == "created"
    assert list(Server.objects.values_list("name", flat=True)) == ["fine"]


# --- on connect ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_saved_server_the_policy_now_refuses_fails_at_connect(settings):
    """Settings (or DNS) may change after saving: the worker checks again and says why."""
    user = await database_sync_to_async(get_user_model().objects.create_user)("carol", password="pw")
    stdio = await database_sync_to_async(Server.objects.create)(
        name="py", transport="stdio", command=sys.executable, args=["-c", "pass"], owner=user
    )
    http = await database_sync_to_async(Server.objects.create)(
        name="lo", transport="http", url="http://localhost:9/mcp", owner=user
    )
    settings.PLAYGROUND_STDIO_COMMANDS = ["npx"]
    settings.PLAYGROUND_HTTP_ALLOW_LOOPBACK = False
    sessions = [await start_session(stdio, user), await start_session(http, user)]
    for worker in list(WORKERS.values()):
        await worker._task
    for session, words in zip(sessions, ["is not allowed here", "localhost (127.0.0.1) is a loopback address"]):
        session = await database_sync_to_async(Session.objects.get)(pk=session.pk)
        notes = await database_sync_to_async(
            lambda: [
                e["text"] for e in Event.objects.filter(session=session, dir="note").values_list("data", flat=True)
            ]
        )()
        assert session.status == "failed" and words in session.end_reason, session.end_reason
        assert any(words in n for n in notes), notes


# --- bind --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, warned",
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("[::1]", False),
        ("0.0.0.0", True),
        ("192.168.1.20", True),
        ("::", True),
    ],
)
def test_binding_beyond_loopback_is_a_system_check_warning(settings, host, warned):
    settings.PLAYGROUND_BIND = host
    found = check_bind()
    assert bool(found) == warned
    if warned:
        assert found[0].id == "playground.W001" and "start processes" in found[0].msg


@pytest.mark.django_db
def test_setup_prints_the_bind_warning(settings):
    settings.PLAYGROUND_BIND = "0.0.0.0"
    out, err = StringIO(), StringIO()
    call_command("playground_setup", no_link=True, stdout=out, stderr=err)
    assert "not on loopback" in err.getvalue()
    settings.PLAYGROUND_BIND = "127.0.0.1"
    err = StringIO()
    call_command("playground_setup", no_link=True, stdout=StringIO(), stderr=err)
    assert err.getvalue() == ""
