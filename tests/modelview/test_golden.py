"""The renderings of real servers' tools match the reviewed golden files (tests/modelview/golden/,
written by `.venv/bin/python -m tests.modelview.golden`), and are valid for their APIs' shapes."""

from __future__ import annotations

import json

import pytest

from tests.modelview.golden import GOLDEN, SERVERS, files


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_renderings_match_the_golden_files(server):
    tools = SERVERS[server]()
    got = files(tools)
    folder = GOLDEN / server
    assert sorted(p.name for p in folder.iterdir()) == sorted(got), "regenerate: python -m tests.modelview.golden"
    for name, text in got.items():
        assert (folder / name).read_text(encoding="utf-8") == text, (
            f"{server}/{name} differs from the golden file; review, then: .venv/bin/python -m tests.modelview.golden"
        )
    # Shapes the APIs' references give, whatever the tools.
    chat = json.loads(got["openai-chat.json"])
    assert [t["type"] for t in chat] == ["function"] * len(tools)
    assert [t["function"]["name"] for t in chat] == [t["name"] for t in tools]
    responses = json.loads(got["openai-responses.json"])
    assert all(t["type"] == "function" and t["strict"] is False and "function" not in t for t in responses)
    anthropic = json.loads(got["anthropic.json"])
    assert all(set(t) <= {"name", "description", "input_schema"} for t in anthropic)
    assert [t["input_schema"] for t in anthropic] == [t["inputSchema"] for t in tools]  # forwarded unchanged
    gemini = json.loads(got["gemini.json"])
    declarations = gemini[0]["functionDeclarations"]
    assert len(gemini) == 1 and len(declarations) == len(tools)
    text = json.dumps(gemini)
    assert "$ref" not in text and "$defs" not in text and "additionalProperties" not in text
    assert all(d["parameters"]["type"] == "OBJECT" for d in declarations if "parameters" in d)
