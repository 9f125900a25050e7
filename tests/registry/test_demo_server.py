"""The bundled demo server speaks MCP: started over stdio with the official SDK client."""

from __future__ import annotations

import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from playground.registry.models import Server
from tests.conftest import ROOT

EXPECTED_TOOLS = {"create_ticket", "area", "transpose", "echo", "swatch", "countdown", "log_messages", "divide"}


async def test_demo_server_lists_and_calls_over_stdio():
    params = StdioServerParameters(command=sys.executable, args=["-m", "playground.demo_server"], cwd=str(ROOT))
    progress: list[float] = []
    with anyio.fail_after(60):
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) >= EXPECTED_TOOLS

            ticket = tools["create_ticket"].input_schema
            assignees = ticket["properties"]["assignees"]
            assert assignees["type"] == "array" and "$ref" in assignees["items"]  # array of objects
            assert tools["create_ticket"].output_schema is not None  # structured output
            assert "oneOf" in tools["area"].input_schema["properties"]["shape"]  # discriminated union
            assert tools["swatch"].input_schema["properties"]["colour"]["enum"] == ["red", "green", "blue", "grey"]

            area = await client.call_tool("area", {"shape": {"kind": "rectangle", "width": 2, "height": 3}})
            assert area.structured_content == {"kind": "rectangle", "area": 6.0, "unit": "cm²"}

            image = await client.call_tool("swatch", {"colour": "red", "size": 4})
            assert image.content[0].type == "image" and image.content[0].mime_type == "image/png"

            error = await client.call_tool("divide", {"a": 1, "b": 0})
            assert error.is_error and "Cannot divide by zero." in error.content[0].text

            async def on_progress(value, total, message):
                progress.append(value)

            done = await client.call_tool("countdown", {"steps": 3, "delay_ms": 0}, progress_callback=on_progress)
            assert "Lift-off" in done.content[0].text

            assert {r.uri for r in (await client.list_resources()).resources} >= {"demo://readme", "demo://config.json"}
            templates = (await client.list_resource_templates()).resource_templates
            assert templates[0].uri_template == "demo://users/{user_id}/profile"
            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert [a.name for a in prompts["review_code"].arguments] == ["code", "language", "focus"]
    assert progress == [1, 2, 3]


@pytest.mark.django_db
def test_setup_registers_a_config_the_core_can_use():
    import io

    from django.core.management import call_command

    call_command("playground_setup", "--no-link", stdout=io.StringIO())
    config = Server.objects.get(name="Playground demo").to_config()
    assert config.transport == "stdio" and config.command == sys.executable
    assert config.args == ["-m", "playground.demo_server"] and config.cwd == str(ROOT)
