"""The HTTP capture records what the server sends before it passes it on to the host: a host's
next request (made once it has an answer, or its answer to a server's request on the stream) is
then always recorded after what it answers. The forwarding generators are driven here directly:
at each chunk the host would get, the recording must already hold every message in it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from playground.capture.http_proxy import _body, _sse


class Upstream:
    """What the forwarding reads of the server's answer (httpx's streamed response)."""

    def __init__(self, chunks: list[bytes], content_type: str) -> None:
        self.chunks, self.status_code = chunks, 200
        self.headers = {"content-type": content_type}

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


class Recording:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.key = ""

    def add(self, *records: dict[str, Any]) -> None:
        self.records.extend(records)

    def messages(self) -> list[Any]:
        return [json.loads(r["text"]) for r in self.records if r["kind"] == "frame"]


async def test_a_json_answer_is_recorded_before_its_last_chunk_goes_on() -> None:
    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}).encode()
    recording = Recording()
    forwarded = b""
    async for chunk in _body(
        Upstream([answer[:10], answer[10:]], "application/json"), recording, {}, "application/json"
    ):  # type: ignore[arg-type]
        forwarded += chunk
        if forwarded == answer:  # the host has the whole answer now
            assert recording.messages() == [json.loads(answer)]
    assert forwarded == answer


async def test_each_sse_event_is_recorded_before_it_goes_on() -> None:
    ask = {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {"message": "name?"}}
    done = {"jsonrpc": "2.0", "id": 5, "result": {"content": []}}
    stream = f"id: a\ndata: {json.dumps(ask)}\n\nid: b\ndata: {json.dumps(done)}\n\n".encode()
    recording = Recording()
    async for chunk in _sse(Upstream([stream[:40], stream[40:]], "text/event-stream"), recording, {}, None, ""):  # type: ignore[arg-type]
        for line in chunk.split(b"\n"):
            if line.startswith(b"data: "):  # an event the host gets: already recorded
                assert json.loads(line[6:]) in recording.messages()
    assert recording.messages() == [ask, done]
    assert [r.get("sse_id") for r in recording.records if r["kind"] == "frame"] == ["a", "b"]
