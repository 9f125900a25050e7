"""The Model view panel: rendered from the catalogue on the owner's page and on share pages
(redacted), fetched again by a live session's tabs when the catalogue changes (a tool call
publishes nothing: the last result is shown when the person asks for it), and downloadable as
one JSON document."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from playground.registry.models import Server
from playground.transcripts.models import Session, ShareLink
from playground.transcripts.recorder import save_events
from tests.sessions.fakes import FakeSession

SECRET = "sk-live-model-view-0123456789"
TOOLS = [
    {
        "name": "lookup",
        "description": f"Looks things up with key {SECRET}.",
        "inputSchema": {
            "type": "object",
            "properties": {"q": {"type": "string", "description": "The query"}},
            "required": ["q"],
        },
    },
    {"name": "bad name", "inputSchema": {"type": "object", "properties": {"xs": {"type": "array"}}}},
]


@pytest.fixture
def saved(client):
    user = get_user_model().objects.create_user("mv", password="pw")
    server = Server.objects.create(
        name="s", transport="http", url="http://127.0.0.1:1/mcp", headers={"X-Key": SECRET}, owner=user
    )
    session = Session.objects.create(
        server=server,
        server_name="s",
        owner=user,
        status="ended",
        catalogue={"tools": TOOLS},
        secret_values=server.to_config().secret_values(),
    )
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "lookup", "arguments": {"q": "x"}}}
    answer = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": f"found {SECRET}"}], "structuredContent": {"found": 1}},
    }
    save_events(
        session.pk,
        [
            {"seq": 1, "t": 0.1, "dir": "send", "raw": json.dumps(call), "message": call},
            {"seq": 2, "t": 0.2, "dir": "recv", "raw": json.dumps(answer), "message": answer, "reply_to": 1},
        ],
    )
    client.force_login(user)
    return session


@pytest.mark.django_db
def test_owner_page_shows_each_provider_its_findings_and_the_last_result(client, saved):
    page = client.get(reverse("sessions:detail", args=[saved.pk])).content.decode()
    panel_url = reverse("sessions:model_view", args=[saved.pk])
    assert "Model view" in page and f'data-model-view-url="{panel_url}"' in page  # fetched by the page, once opened
    panel = client.get(panel_url).content.decode()
    assert panel.startswith('<div id="model-view"')  # replaces the loader (outerHTML)
    for label in (
        "OpenAI Chat Completions tools",
        "OpenAI Responses tools",
        "Anthropic Messages tools",
        "Google Gemini tools",
        "SDK simple chatbot text",
    ):
        assert f'aria-label="{label}"' in panel
    assert 'data-rule="openai.name"' in panel and 'data-rule="openai.array-items"' in panel
    assert 'data-rule="gemini.array-items"' in panel and "Tokens: ≈ 1 token per 4 characters" in panel
    assert SECRET in panel  # the owner sees what the server sent (no OAuth value here)
    result = client.get(reverse("sessions:model_view_result", args=[saved.pk])).content.decode()
    assert "Last tool result" in result and "Tool execution result: meta=None" in result  # the SDK chatbot's text
    assert "&quot;functionResponse&quot;" in result and "&quot;found&quot;: 1" in result


@pytest.mark.django_db
def test_share_page_and_its_download_mask_every_secret(client, saved):
    link = ShareLink.objects.create(session=saved, created_by=saved.owner)
    client.logout()
    page = client.get(reverse("sessions:share_page", args=[link.token])).content.decode()
    panel_url = reverse("sessions:share_model_view", args=[link.token])
    result_url = reverse("sessions:share_model_view_result", args=[link.token])
    assert "Model view" in page and f'data-model-view-url="{panel_url}"' in page and f'hx-get="{result_url}"' in page
    assert SECRET not in page
    panel = client.get(panel_url).content.decode()  # fetched, as the owner's page does
    assert 'aria-label="Anthropic Messages tools"' in panel and SECRET not in panel and "••••" in panel
    assert reverse("sessions:share_model_view_json", args=[link.token]) in panel
    result = client.get(result_url).content.decode()
    assert "Last tool result" in result and SECRET not in result and "found ••••" in result
    response = client.get(reverse("sessions:share_model_view_json", args=[link.token]))
    body = b"".join(response.streaming_content).decode()
    assert response["Content-Disposition"].startswith("attachment;") and SECRET not in body
    document = json.loads(body)
    assert {"openai-chat", "openai-responses", "anthropic", "gemini", "findings", "token_rule"} <= set(document)
    assert document["anthropic"]["tools"][1]["name"] == "bad name"
    assert document["findings"]["openai"]["bad name"][0]["rule"] == "openai.name"
    link.revoked_at = link.created
    link.save()
    for url in (panel_url, result_url):
        assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_owner_views_are_the_owners_only(client, saved):
    response = client.get(reverse("sessions:model_view_json", args=[saved.pk]))
    assert json.loads(b"".join(response.streaming_content))["openai-chat"]["tools"][0]["function"]["name"] == "lookup"
    get_user_model().objects.create_user("eve", password="pw")
    client.login(username="eve", password="pw")
    for name in ("model_view_json", "model_view", "model_view_result"):
        assert client.get(reverse(f"sessions:{name}", args=[saved.pk])).status_code == 404


@pytest.mark.django_db
def test_a_session_without_tool_calls_says_so(client, saved):
    saved.events.all().delete()
    result = client.get(reverse("sessions:model_view_result", args=[saved.pk])).content.decode()
    assert "No tool result in this session yet" in result and "Show the last tool result again" in result


@pytest.mark.django_db
def test_the_last_result_passes_over_newer_calls_that_have_none(client, saved):
    """A later call still running and one answered with an error leave the earlier result shown."""
    running = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "lookup", "arguments": {"q": "y"}}}
    failed = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "lookup", "arguments": {"q": "z"}}}
    refusal = {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "no"}}
    save_events(
        saved.pk,
        [
            {"seq": 3, "t": 0.3, "dir": "send", "raw": json.dumps(running), "message": running},
            {"seq": 4, "t": 0.4, "dir": "send", "raw": json.dumps(failed), "message": failed},
            {"seq": 5, "t": 0.5, "dir": "recv", "raw": json.dumps(refusal), "message": refusal, "reply_to": 4},
        ],
    )
    result = client.get(reverse("sessions:model_view_result", args=[saved.pk])).content.decode()
    assert "Last tool result" in result and "&quot;found&quot;: 1" in result
    assert "No tool result in this session yet" not in result


async def test_a_live_session_makes_its_tabs_fetch_the_panel_again():
    """The worker renders nothing: after a catalogue refresh (and for a reloading tab) it sends the
    loader, which the page fetches only while the panel is open (static/model_view.js)."""
    session = FakeSession(catalogue={"tools": TOOLS})
    feature = session.add("model_view")
    feature.on_catalogue()
    await session.settle()
    ((name, event),) = session.published
    html = event["html"]
    assert name == "model_view" and 'hx-swap-oob="outerHTML' in html and "hx-trigger" not in html
    assert f'data-model-view-url="{reverse("sessions:model_view", args=[1])}"' in html and len(html) < 400
    assert [e["event"] for e in feature.snapshot()] == [event]
    feature.on_call_end("c1", {"command": "call_tool", "name": "lookup", "result": {"content": []}})
    await session.settle()
    assert len(session.published) == 1  # nothing on the relay path


def test_megabytes_in_names_and_descriptions_keep_the_panel_small():
    """A server's text is capped on the page (the download has it whole)."""
    from playground.sessions.features.model_view.panel import body_html, result_html

    huge = "n" * 3_000_000
    catalogue = {
        "tools": [
            {
                "name": huge,
                "description": huge,
                "inputSchema": {"type": "object", "properties": {huge: {"type": "string"}}},
            }
        ]
    }
    html = body_html(catalogue, "/download")
    assert len(html) < 200_000 and "too large to show here" in html
    shown = result_html({"content": [{"type": "text", "text": huge}]}, huge)
    assert len(shown) < 600_000


def _catalogue(tools: int, width: int) -> dict:
    return {
        "tools": [
            {
                "name": f"t{i}",
                "description": "A tool.",
                "inputSchema": {
                    "type": "object",
                    "properties": {f"p{j}": {"type": "string", "description": "P."} for j in range(width)},
                },
            }
            for i in range(tools)
        ]
    }


@pytest.mark.django_db
def test_the_panel_is_computed_once_per_catalogue(client, saved):
    """Every tab fetches the panel after a catalogue change, and each share page view shows it:
    the computation is made once per catalogue (and the panel once per catalogue and page)."""
    from playground.modelview.cache import VIEWS

    catalogue = _catalogue(40, 20)
    Session.objects.filter(pk=saved.pk).update(catalogue=catalogue)
    other = Session.objects.create(
        server=saved.server, server_name="s", owner=saved.owner, status="ended", catalogue=catalogue
    )
    link = ShareLink.objects.create(session=saved, created_by=saved.owner)
    before = VIEWS.computed
    first = client.get(reverse("sessions:model_view", args=[saved.pk])).content.decode()
    assert VIEWS.computed == before + 1 and "The 40 tools of this server" in first
    assert client.get(reverse("sessions:model_view", args=[saved.pk])).content.decode() == first
    client.get(reverse("sessions:model_view", args=[other.pk]))  # same tools, another session
    client.get(reverse("sessions:share_model_view", args=[link.token]))
    client.get(reverse("sessions:model_view_json", args=[saved.pk]))
    assert VIEWS.computed == before + 1
    catalogue["tools"][0]["description"] = "Changed."
    Session.objects.filter(pk=saved.pk).update(catalogue=catalogue)
    assert "Changed." in client.get(reverse("sessions:model_view", args=[saved.pk])).content.decode()
    assert VIEWS.computed == before + 2


def test_the_memo_computes_once_for_concurrent_callers_and_stays_bounded():
    import threading

    from playground.modelview.cache import Memo

    memo: Memo[int] = Memo(entries=2, weight=100)
    gate, calls = threading.Event(), []

    def slow() -> int:
        calls.append(1)
        assert gate.wait(30)
        return 42

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(memo.get("k", 10, slow))) for _ in range(4)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(30)
    assert results == [42] * 4 and calls == [1]
    memo.get("a", 10, lambda: 1)
    memo.get("b", 10, lambda: 2)  # two entries at most: "k" goes
    assert memo.get("k", 10, lambda: 7) == 7
    assert memo.get("big", 101, lambda: 3) == 3 and memo.get("big", 101, lambda: 4) == 4  # too big to keep


def test_a_catalogue_of_thousands_of_tools_says_what_it_did_not_check():
    from playground.sessions.features.model_view.panel import body_html

    html = body_html(_catalogue(400, 49), "/download")  # 20,000 subschemas: past the validation budget
    assert 'data-rule="anthropic.draft-2020-12"' in html and "not checked" in html
    assert 'class="mv-unchecked"' in html


@pytest.mark.django_db(transaction=True)
async def test_the_panel_is_computed_off_the_database_thread():
    """While a catalogue's Model view is computed, the database thread (the one every live
    session's saves use) keeps working: the computation waits here until a query has run."""
    from asgiref.sync import sync_to_async
    from django.test import AsyncClient

    from playground.sessions.features.model_view import views as model_view_views
    from tests.sessions.offthread import computed_off_the_database_thread

    user = await sync_to_async(get_user_model().objects.create_user)("mv-async", password="pw")
    session = await sync_to_async(Session.objects.create)(
        server_name="s", owner=user, status="ended", catalogue={"tools": TOOLS}
    )
    browser = AsyncClient()
    await browser.aforce_login(user)
    response, count = await computed_off_the_database_thread(
        model_view_views, "body_html", browser.get(reverse("sessions:model_view", args=[session.pk]))
    )
    assert (
        count >= 1 and response.status_code == 200 and 'aria-label="Google Gemini tools"' in response.content.decode()
    )


def _inlining_bomb(name: str, depth: int = 20, words: int = 200) -> dict:
    """A tool whose inputSchema doubles at every `$defs` level and ends in an enum: a few KB here,
    2^depth copies of the enum once every `$ref` is inlined, as Gemini's rendering must."""
    defs = {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(depth)
    }
    defs[f"d{depth}"] = {"type": "string", "enum": [f"value-{i:05d}-{name}" for i in range(words)]}
    return {
        "name": name,
        "description": "bomb",
        "inputSchema": {"type": "object", "$defs": defs, "properties": {"root": {"$ref": "#/$defs/d0"}}},
    }


@pytest.mark.django_db
def test_a_catalogue_whose_gemini_rendering_inlines_to_gigabytes_stays_within_the_model_view_budget(client, saved):
    """Five tools of a doubling `$ref` chain ending in an enum (under 100 KB of catalogue): the
    Gemini rendering inlined every reference and a share link's download streamed hundreds of
    megabytes while the process grew by gigabytes. Now the renderings write at most the Model
    view's output budget, and the tools past it say their rendering is too large to show."""
    from playground.budget import MODEL_VIEW_TOOL

    tools = [_inlining_bomb(f"bomb{i}") for i in range(5)] + [TOOLS[0]]
    assert len(json.dumps(tools)) < 100_000
    saved.catalogue = {"tools": tools}
    saved.save()
    link = ShareLink.objects.create(session=saved, created_by=saved.owner)
    client.logout()
    response = client.get(reverse("sessions:share_model_view_json", args=[link.token]))
    body = b"".join(response.streaming_content)
    assert len(body) < 2 * 5 * MODEL_VIEW_TOOL.output  # each tool's part, plus the other renderings
    document = json.loads(body)
    details = {
        name: [d for f in findings for d in f["details"]] for name, findings in document["findings"]["gemini"].items()
    }
    for i in range(5):
        assert (
            "its rendering is too large to show: more than 1 MB of output: the rest is left empty"
            in details[f"bomb{i}"]
        )
    lookup = document["gemini"]["tools"][0]["functionDeclarations"][-1]
    assert (
        lookup["name"] == "lookup" and lookup["parameters"]["properties"]["q"]["type"] == "STRING"
    )  # the others whole


def test_a_missing_description_is_advice_not_a_change():
    """The API changes nothing of a tool without a description: the count said "changed" (issue 31)."""
    from playground.modelview.view import model_view
    from playground.sessions.features.model_view.panel import SEVERITY_WORDS

    view = model_view([{"name": "plain", "inputSchema": {"type": "object", "properties": {}}}])
    for provider in view["findings"]:
        found = [f for fs in provider["tools"] for f in fs if f["rule"] == "description"]
        assert [SEVERITY_WORDS[f["severity"]] for f in found] == ["advice"], provider["provider"]
