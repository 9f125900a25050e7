"""A wrong transport says so: real servers answer a transport meant for the other kind of
endpoint with a status that gives it away, and the connection ends with a hint to try Auto
(with that evidence), in the transcript and on the ConnectError; Auto then connects."""

from __future__ import annotations

import pytest

from playground.mcp.config import ServerConfig
from playground.mcp.connect import ConnectError, open_client
from tests.http_peers import Recorder


async def failed_with_hint(config: ServerConfig) -> tuple[dict, Recorder]:
    rec = Recorder()
    with pytest.raises(ConnectError) as failure:
        await open_client(config, tap=rec.tap)
    hint = failure.value.hint
    assert hint is not None
    notes = rec.notes("hint")
    assert len(notes) == 1 and notes[0].text == hint["text"]
    assert notes[0].data == {k: v for k, v in hint.items() if k != "text"}
    return hint, rec


async def connects_with_auto(url: str) -> None:
    client = await open_client(ServerConfig(transport="auto", url=url, timeout=10), tap=Recorder().tap)
    try:
        assert any(t.get("name") == "echo" for t in await client.list_tools())
    finally:
        await client.close()


async def test_streamable_http_on_an_sse_endpoint_hints_at_auto(sdk_sse):
    hint, _ = await failed_with_hint(ServerConfig(transport="http", url=sdk_sse, timeout=10))
    assert hint["looks_like"] == "sse" and hint["suggest"] == "auto" and hint["status"] == 405
    assert hint["text"].startswith("This looks like an SSE endpoint (POST answered HTTP 405")
    assert hint["text"].endswith("try Auto, which tries Streamable HTTP, then HTTP+SSE.")
    await connects_with_auto(sdk_sse)


async def test_sse_on_a_streamable_http_endpoint_hints_at_auto(sdk_http):
    hint, _ = await failed_with_hint(ServerConfig(transport="sse", url=sdk_http, timeout=10))
    assert hint["looks_like"] == "http" and hint["status"] == 400
    assert hint["evidence"] == 'GET answered HTTP 400 "Bad Request: Missing session ID"'
    assert "This looks like a Streamable HTTP endpoint" in hint["text"]
    await connects_with_auto(sdk_http)


async def test_sse_on_server_everything_streamable_http_hints_at_auto(everything_http):
    hint, _ = await failed_with_hint(ServerConfig(transport="sse", url=everything_http, timeout=10))
    assert hint["looks_like"] == "http", hint


async def test_the_right_transport_failing_otherwise_gives_no_hint(sdk_http):
    rec = Recorder()
    with pytest.raises(ConnectError) as failure:  # nothing listens at this path: 404, not a transport mix-up
        await open_client(
            ServerConfig(transport="http", url=sdk_http.replace("/mcp", "/nothing"), timeout=10), tap=rec.tap
        )
    assert failure.value.hint is None and rec.notes("hint") == []


async def test_a_stored_command_line_that_cannot_start_says_what_it_looks_like():
    """A server saved before the form split command lines (or set in the admin) still fails, saying why."""
    with pytest.raises(
        ConnectError,
        match=r"command not found \(a whole command line\? The program and its "
        r"arguments go separately",
    ):
        await open_client(ServerConfig(transport="stdio", command="no-such-program-here -y pkg"), tap=Recorder().tap)


async def test_a_stored_header_name_that_is_no_token_is_refused_before_any_request():
    """A server imported before header names were checked (issue 30) still holds its hostile name:
    refused, saying which, before a request (and its recorded facts, which a curl command copies)
    could carry it."""
    rec = Recorder()
    config = ServerConfig(
        transport="auto",
        url="http://127.0.0.1:9/mcp",
        timeout=5,
        headers={"X-Api-Key\ntouch PWNED #": "k", "X-Ok": "a\r\nb"},
    )
    with pytest.raises(
        ConnectError,
        match=r"^the server's headers cannot be sent: 'X-Api-Key\\ntouch PWNED #' is "
        r"not a valid HTTP header name.*; the value of X-Ok holds a line break",
    ):
        await open_client(config, tap=rec.tap)
    assert [e.dir for e in rec.events] == ["note"] and rec.events[0].text.startswith("could not connect: ")
