"""A tool result as each API's tool-result message carries it (playground/modelview/results.py),
checked against the shapes the APIs document:

- OpenAI Chat Completions: a message {"role": "tool", "tool_call_id", "content"} whose content is text;
- OpenAI Responses: an input item {"type": "function_call_output", "call_id", "output"}, text;
- Anthropic Messages: a {"type": "tool_result", "tool_use_id", "content", "is_error"} block whose
  content is text and image blocks (images base64, jpeg/png/gif/webp);
- Gemini: a {"functionResponse": {"name", "response"}} part whose response is a JSON object, "output"
  holding the output and "error" the error (a whole object is the output itself);

and the token estimate of a rendering is its documented rule, counted here again."""

from __future__ import annotations

import json
import math
from typing import Any

from playground.modelview import chatbot, results, tokens
from playground.modelview.view import model_view
from tests.modelview.peers import call_tools, model_view_peer

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def shapes(result: Any, tool: str = "lookup") -> dict[str, Any]:
    return {s["label"]: s["value"] for s in results.view(result, tool)["shapes"]}


def openai_texts(shaped: dict[str, Any]) -> tuple[str, str]:
    chat, responses = shaped["OpenAI Chat Completions"], shaped["OpenAI Responses"]
    assert set(chat) == {"role", "tool_call_id", "content"} and chat["role"] == "tool"
    assert set(responses) == {"type", "call_id", "output"} and responses["type"] == "function_call_output"
    return chat["content"], responses["output"]


def anthropic_block(shaped: dict[str, Any]) -> dict[str, Any]:
    block = shaped["Anthropic Messages"]
    assert (
        block["type"] == "tool_result"
        and block["tool_use_id"]
        and set(block) <= {"type", "tool_use_id", "content", "is_error"}
    )
    assert all(b["type"] in ("text", "image") for b in block["content"])
    return block


def gemini_response(shaped: dict[str, Any], tool: str = "lookup") -> Any:
    part = shaped["Google Gemini"]
    assert list(part) == ["functionResponse"] and part["functionResponse"]["name"] == tool
    response = part["functionResponse"]["response"]
    assert isinstance(response, dict)
    return response


def test_text_only():
    result = {"content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second, é"}]}
    view = results.view(result, "lookup")
    shaped = shapes(result)
    assert openai_texts(shaped) == ("first\nsecond, é",) * 2
    assert anthropic_block(shaped)["content"] == result["content"]  # block for block
    assert "is_error" not in anthropic_block(shaped)
    assert gemini_response(shaped) == {"output": "first\nsecond, é"}
    assert view["notes"] == [] and not view["structured"] and not view["is_error"]
    assert view["text_blocks"] == 2 and view["text_chars"] == len("first\nsecond, é")


def test_structured_only_falls_back_to_its_json():
    structured = {"temperature": 21.5, "city": "Zürich"}
    shaped = shapes({"content": [], "structuredContent": structured})
    as_json = json.dumps(structured, ensure_ascii=False)
    assert openai_texts(shaped) == (as_json, as_json)
    assert anthropic_block(shaped)["content"] == [{"type": "text", "text": as_json}]
    assert gemini_response(shaped) == structured  # an object: the response itself
    notes = results.view({"content": [], "structuredContent": structured}, "lookup")["notes"]
    assert len(notes) == 1 and "not repeated" in notes[0] and "falls back to it as JSON" in notes[0]


def test_structured_repeated_as_text_is_carried_by_every_shape():
    structured = {"temperature": 36, "humidity": 82}
    text = json.dumps(structured, separators=(",", ":"))  # another spelling of the same JSON
    result = {"content": [{"type": "text", "text": text}], "structuredContent": structured}
    shaped = shapes(result)
    assert openai_texts(shaped) == (text, text)
    assert anthropic_block(shaped)["content"] == [{"type": "text", "text": text}]
    assert gemini_response(shaped) == structured
    assert [n for n in results.view(result, "lookup")["notes"] if "repeated as text" in n and "not" not in n]
    # Other text beside it: a client forwarding the content sends that text only.
    other = {"content": [{"type": "text", "text": "called"}], "structuredContent": {"called": True}}
    assert openai_texts(shapes(other)) == ("called", "called")
    assert "sends only the other text" in results.view(other, "lookup")["notes"][0]


def test_images_go_where_a_tool_result_takes_them():
    long = PNG * 4
    result = {
        "content": [
            {"type": "text", "text": "the chart:"},
            {"type": "image", "mimeType": "image/png", "data": PNG},
            {"type": "image", "mimeType": "image/png", "data": long},
            {"type": "image", "mimeType": "image/svg+xml", "data": PNG},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "embedded text"}},
        ]
    }
    shaped = shapes(result)
    # OpenAI's tool messages take text: the images are not there.
    assert openai_texts(shaped) == ("the chart:\nembedded text",) * 2
    content = anthropic_block(shaped)["content"]
    assert [b["type"] for b in content] == ["text", "image", "image", "text"]  # no SVG: not a type it takes
    assert content[1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    shown = content[2]["source"]["data"]  # cut for showing, and said so
    assert shown == long[: results.DATA_SHOWN] + f"…({len(long)} characters)"
    assert gemini_response(shaped) == {"output": "the chart:\nembedded text"}
    notes = results.view(result, "lookup")["notes"]
    assert notes == ["Not text: image, image, image — dropped where a tool message takes text only."]


def test_an_error_result_is_marked_where_the_api_has_a_place_for_it():
    result = {"content": [{"type": "text", "text": "no such city"}], "isError": True}
    shaped = shapes(result)
    assert openai_texts(shaped) == ("no such city", "no such city")  # no error field: the text says it
    assert anthropic_block(shaped)["is_error"] is True
    assert gemini_response(shaped) == {"error": "no such city"}
    assert results.view(result, "lookup")["is_error"] is True
    chatbot_text = shaped["SDK simple chatbot"]
    assert chatbot_text.startswith(chatbot.RESULT_PREFIX) and "is_error=True" in chatbot_text  # the SDK model printed


def test_each_shape_counts_its_tokens_by_the_rule():
    result = {"content": [{"type": "text", "text": "Grüße, 世界"}], "structuredContent": {"n": 1}}
    for shape in results.view(result, "lookup")["shapes"]:
        value = shape["value"]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert shape["tokens"] == math.ceil(len(text) / tokens.CHARS_PER_TOKEN), shape["label"]


def test_a_tools_tokens_follow_the_rule():
    """Per tool and in total, for each rendering: the compact JSON's characters over four, rounded up."""
    peer = {t["name"]: t for t in model_view_peer()}
    tools = [peer["clean"], peer["referenced"], peer["no_description"]]
    for target in model_view(tools)["targets"]:
        one = target["json"][0]["functionDeclarations"] if target["id"] == "gemini" else target["json"]
        compact = [json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in one]
        assert target["tokens"]["per_tool"] == [math.ceil(len(c) / 4) for c in compact], target["id"]
        whole = json.dumps(target["json"], ensure_ascii=False, separators=(",", ":"))
        assert target["tokens"]["total"] == math.ceil(len(whole) / 4)


def test_results_from_server_everything(everything_cmd):
    """Its image tool (text and a PNG) and its structured tool (the JSON repeated as text)."""
    image, weather = call_tools(
        everything_cmd[0],
        everything_cmd[1:],
        [("get-tiny-image", {}), ("get-structured-content", {"location": "Chicago"})],
    )
    shaped = shapes(image, "get-tiny-image")
    png = next(b for b in image["content"] if b["type"] == "image")
    text = "\n".join(b["text"] for b in image["content"] if b["type"] == "text")
    assert openai_texts(shaped) == (text, text) and text
    sent = [b for b in anthropic_block(shaped)["content"] if b["type"] == "image"]
    assert [b["source"]["media_type"] for b in sent] == [png["mimeType"]] == ["image/png"]
    assert sent[0]["source"]["data"].startswith(png["data"][: results.DATA_SHOWN])
    assert any("Not text: image" in n for n in results.view(image, "get-tiny-image")["notes"])
    shaped = shapes(weather, "get-structured-content")
    assert gemini_response(shaped, "get-structured-content") == weather["structuredContent"]
    assert json.loads(openai_texts(shaped)[0]) == weather["structuredContent"]
    notes = results.view(weather, "get-structured-content")["notes"]
    assert len(notes) == 1 and "is repeated as text" in notes[0]
