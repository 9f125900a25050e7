"""The check's pages without a browser: the form's tool list (the last session's catalogue,
read-only tools ticked), its owner-only access, and a check's report on its share page, redacted."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.registry.models import Server
from playground.transcripts.models import Session, ShareLink

pytestmark = pytest.mark.django_db(transaction=True)
SECRET = "sk-live-0123456789abcdef"
TOOLS = [
    {
        "name": "look",
        "description": "<b>reads</b>",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    },
    {"name": "write", "description": "changes things", "inputSchema": {"type": "object"}},
]


@pytest.fixture
def server(client):
    user = get_user_model().objects.create_user("ann", password="pw")
    server = Server.objects.create(
        name="s",
        transport="http",
        url="http://127.0.0.1:1/mcp",
        headers={"Authorization": f"Bearer {SECRET}"},
        owner=user,
    )
    Session.objects.create(server=server, server_name="s", owner=user, status="ended", catalogue={"tools": TOOLS})
    client.force_login(user)
    return server


def test_the_form_offers_the_last_catalogue_with_read_only_tools_ticked(client, server):
    page = client.get(reverse("sessions:check_form", args=[server.pk])).content.decode()
    assert 'value="look" checked' in page
    assert 'value="write">' in page
    assert "&lt;b&gt;reads&lt;/b&gt;" in page and "<b>reads</b>" not in page  # server text escaped
    assert "Calling a tool runs it, with its side effects" in page
    detail = client.get(reverse("registry:detail", args=[server.pk])).content.decode()
    assert reverse("sessions:check_form", args=[server.pk]) in detail and "Check server" in detail


def test_another_users_server_has_no_check_form(client, server):
    other = get_user_model().objects.create_user("eve", password="pw")
    client.force_login(other)
    assert client.get(reverse("sessions:check_form", args=[server.pk])).status_code == 404
    assert client.post(reverse("sessions:check_form", args=[server.pk])).status_code == 404
    assert not Session.objects.filter(kind="check").exists()


def test_the_share_page_of_a_check_shows_its_report_redacted(client, server):
    session = Session.objects.create(
        server=server,
        server_name="s",
        owner=server.owner,
        status="ended",
        kind="check",
        secret_values=server.to_config().secret_values(),
        report={
            "kind": "check",
            "finished": True,
            "tools_called": ["look"],
            "rows": [
                {
                    "name": "ping",
                    "status": "fail",
                    "reason": f"error -32603: token {SECRET} <script>x</script>",
                    "seqs": [3, 4],
                }
            ],
        },
    )
    link = ShareLink.objects.create(session=session, created_by=server.owner)
    client.logout()
    page = client.get(reverse("sessions:share_page", args=[link.token])).content.decode()
    assert 'aria-label="Server check"' in page and 'data-check="ping"' in page
    assert 'href="#ev-3"' in page and 'href="#ev-4"' in page
    assert "1 failed" in page and "Tools called: look" in page
    assert SECRET not in page and "&lt;script&gt;x&lt;/script&gt;" in page


def test_a_get_never_starts_the_server_fetching_the_tools_is_a_csrf_protected_post(tmp_path):
    """Listing the tools starts a stdio server: the form's GET (a link another site could open in
    a top-level navigation, which carries the session cookie) never does it; "Fetch the tool list"
    is a POST with the CSRF token, and the page then shows what the server lists."""
    import sys

    from django.test import Client

    from tests.conftest import PEERS

    marker = tmp_path / "started"
    # A stdio server that leaves a mark when it starts, then speaks MCP (the fault peer, no faults).
    script = (
        f"open({str(marker)!r}, 'w').close(); import runpy, sys; sys.argv = ['x', 'none']; "
        f"runpy.run_path({str(PEERS / 'check_faults.py')!r}, run_name='__main__')"
    )
    user = get_user_model().objects.create_user("bo", password="pw")
    server = Server.objects.create(
        name="fresh", transport="stdio", command=sys.executable, args=["-c", script], owner=user
    )
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    url = reverse("sessions:check_form", args=[server.pk])
    for query in ("", "?fetch=1"):
        page = browser.get(url + query).content.decode()
        assert not marker.exists()
        assert "No session of this server has listed its tools yet." in page and "Fetch the tool list" in page
        assert 'name="call_tools"' not in page
    assert browser.post(url, {"fetch": "1"}).status_code == 403  # no token: refused, nothing started
    assert not marker.exists() and not Session.objects.exists()
    token = browser.get(url).cookies["csrftoken"].value
    page = browser.post(url, {"fetch": "1", "csrfmiddlewaretoken": token}).content.decode()
    assert marker.exists()
    assert 'value="go" checked' in page and 'value="other">' in page and "The tools the server lists now." in page
    assert not Session.objects.exists()  # a quick listing, not a session


def test_fetching_the_tools_of_a_server_whose_listing_fails_says_why():
    """A server that answers tools/list with an error (what a debugger is pointed at) gets the
    form back with that error, not a server error."""
    import sys

    from django.test import Client

    from tests.conftest import PEERS

    user = get_user_model().objects.create_user("bo", password="pw")
    server = Server.objects.create(
        name="broken",
        transport="stdio",
        command=sys.executable,
        args=[str(PEERS / "check_faults.py"), "tools-list-fails"],
        owner=user,
    )
    browser = Client()
    browser.force_login(user)
    response = browser.post(reverse("sessions:check_form", args=[server.pk]), {"fetch": "1"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "the tool registry is down" in page and 'name="call_tools"' not in page
