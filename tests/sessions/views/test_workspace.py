"""The workspace's two views (sessions/workspace.py): a resource opened in the workspace, and a
tool's fields rendered for given values. Only the session's owner; server text escaped; the
fields hold exactly the values (what the JSON editor relies on to switch back to the form)."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.registry.models import Server
from playground.schemaforms import parse_form
from playground.sessions.views.workspace import MAX_VALUES
from playground.transcripts.models import Session
from tests.schemaforms.formsim import submitted
from tests.sessions.helpers import VARIANT, a_stranger, events, logged_in, make_user_and_server, record_session

pytestmark = pytest.mark.django_db
HOSTILE = '<img src=x onerror="alert(1)">'
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "kind": {"enum": ["a", "b"]},
    },
    "required": ["name"],
}


@pytest.fixture
def session(client):
    user = get_user_model().objects.create_user("ann", password="pw")
    server = Server.objects.create(name="s", transport="stdio", command="x", owner=user)
    catalogue = {
        "tools": [{"name": "t", "inputSchema": SCHEMA}],
        "resources": [{"uri": "demo://a", "name": HOSTILE, "description": "about a", "mimeType": "text/plain"}],
    }
    session = Session.objects.create(
        server=server, server_name="s", owner=user, status="connected", catalogue=catalogue
    )
    client.force_login(user)
    return session


def test_a_listed_resource_shows_what_the_list_says_and_reads_on_opening(client, session):
    page = client.get(reverse("sessions:resource_view", args=[session.pk]), {"uri": "demo://a"}).content.decode()
    assert 'data-item="resource:demo://a"' in page and "data-read-on-open" in page
    assert "about a" in page and "text/plain" in page and "Not in the server" not in page
    assert HOSTILE not in page and "&lt;img src=x" in page


def test_any_uri_opens_as_not_listed(client, session):
    uri = 'demo://dynamic/7?x="1"'
    page = client.get(reverse("sessions:resource_view", args=[session.pk]), {"uri": uri}).content.decode()
    assert "Not in the server's resources list" in page
    assert 'value="demo://dynamic/7?x=&quot;1&quot;"' in page
    assert client.get(reverse("sessions:resource_view", args=[session.pk])).status_code == 400


def test_fields_for_values_give_back_exactly_those_values(client, session):
    values = {"name": "n", "address": {"city": "Paris", "zip": 75001}, "tags": ["x", "y"], "kind": "b"}
    response = client.post(
        reverse("sessions:tool_fields", args=[session.pk]), {"name": "t", "arguments": json.dumps(values)}
    )
    assert response.status_code == 200
    arguments, problems = parse_form(SCHEMA, submitted(response.content.decode()), prefix="args")
    assert problems == [] and arguments == values


def test_fields_refuse_broken_json_unknown_tools_and_too_much(client, session):
    url = reverse("sessions:tool_fields", args=[session.pk])
    broken = client.post(url, {"name": "t", "arguments": '{"name": '})
    assert broken.status_code == 400 and "not valid JSON" in broken.content.decode()
    assert client.post(url, {"name": "nope", "arguments": "{}"}).status_code == 400
    assert client.post(url, {"name": "t", "arguments": " " * (MAX_VALUES + 1)}).status_code == 413
    assert client.get(url).status_code == 405


def test_another_users_session_is_not_found(client, session):
    other = get_user_model().objects.create_user("eve", password="pw")
    client.force_login(other)
    assert client.get(reverse("sessions:resource_view", args=[session.pk]), {"uri": "demo://a"}).status_code == 404
    assert (
        client.post(reverse("sessions:tool_fields", args=[session.pk]), {"name": "t", "arguments": "{}"}).status_code
        == 404
    )


@pytest.mark.parametrize("seq", ["100000000000000000000", "-1", "0", "x", ""])
def test_edit_and_resend_of_no_such_event_is_a_404(client, session, seq):
    """?from_seq= is read as every other sequence number in a query string (window.seq_param,
    bounded). (A number no column holds is no 500 here either way: Django answers an
    out-of-range integer lookup with no rows.)"""
    assert client.get(reverse("sessions:raw_form", args=[session.pk]), {"from_seq": seq}).status_code == 404


@pytest.mark.django_db(transaction=True)
async def test_edit_and_resend_prefills_the_tool_form_or_the_composer():
    user, build_a = await make_user_and_server(name="build a", args=[VARIANT, "stdio", "a"])
    original = await record_session(user, build_a)
    rows = await events(original.pk)
    call = next(r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "tools/call")
    listing = next(r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "tools/list")
    prompt = next(r for r in rows if r["dir"] == "send" and (r["message"] or {}).get("method") == "prompts/get")
    answer = next(r for r in rows if r["dir"] == "recv")
    client = await logged_in(user)

    form = (await client.get(f"/sessions/{original.pk}/raw/?from_seq={call['seq']}")).content.decode()
    assert 'data-tool="echo"' in form and re.search(r'<input[^>]*name="args\.text"[^>]*value="hi"', form)
    assert f'From event <a href="#ev-{call["seq"]}">{call["seq"]}</a>' in form
    composer = (await client.get(f"/sessions/{original.pk}/raw/?from_seq={listing['seq']}")).content.decode()
    assert 'id="raw-method"' in composer and 'value="tools/list"' in composer
    # A request with params: the composer holds them (what the client adds itself left out).
    composer = (await client.get(f"/sessions/{original.pk}/raw/?from_seq={prompt['seq']}")).content.decode()
    assert 'value="prompts/get"' in composer
    params = re.search(r'<textarea id="raw-params"[^>]*>(.*?)</textarea>', composer, re.S).group(1)
    assert json.loads(html.unescape(params)) == {"name": "greeting", "arguments": {"name": "Ada"}}
    assert (await client.get(f"/sessions/{original.pk}/raw/?from_seq={answer['seq']}")).status_code == 404
    assert (await client.get(f"/sessions/{original.pk}/raw/?from_seq=x")).status_code == 404
    stranger = await a_stranger(user)
    assert (
        await (await logged_in(stranger)).get(f"/sessions/{original.pk}/raw/?from_seq={call['seq']}")
    ).status_code == 404
