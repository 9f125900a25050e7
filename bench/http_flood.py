"""An SSE flood over Streamable HTTP through the transport and the tap, without Django or a
database: a loopback server answers one POSTed `tools/call` with COUNT notifications on its SSE
stream, then the response; each event is encoded as the recorder saves it (`to_dict`, then
`jsontext.dumps`). For the HTTP facts the tap records with every event (bench/README.md, issue 18).

Prints, per round: messages per second, CPU a message, and bytes a saved row.

    cd <a checkout> && <its .venv>/bin/python <this file> [COUNT] [ROUNDS]

It imports `playground` from the current directory, so one copy of this file measures any
checkout (alternate runs: this branch and main).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

sys.path.insert(0, os.getcwd())

from playground.mcp import jsontext
from playground.mcp.events import Tap
from playground.mcp.transports.streamable_http import StreamableHttpTransport


def stream(count: int) -> bytes:
    note = b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}\n\n'
    events = b"".join(note % i for i in range(count))
    answer = b'data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}\n\n'
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        b"Mcp-Session-Id: bench\r\nConnection: close\r\n\r\n"
    )
    return head + events + answer


async def round_(count: int, body: bytes) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
        )
        await reader.readexactly(length)
        writer.write(body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    tap = Tap()
    size = 0

    def save(event: object) -> None:
        nonlocal size
        size += len(jsontext.dumps(event.to_dict()))  # type: ignore[attr-defined]

    tap.subscribe(save)
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    transport = StreamableHttpTransport(tap, f"http://127.0.0.1:{port}/mcp", {"X-Api-Key": "bench-key"}, timeout=60)
    transport.bind(
        lambda m: done.set_result(None) if isinstance(m, dict) and m.get("id") == 1 and not done.done() else None,
        lambda why: None,
        lambda rid, exc: done.set_exception(exc),
    )
    await transport.start()
    wall, cpu = time.perf_counter(), time.process_time()
    await transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "flood"}})
    await done
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await transport.close()
    server.close()
    await server.wait_closed()
    events = tap.seq
    print(
        f"{count / wall:8.0f} msg/s   cpu {cpu / count * 1e6:5.1f} us/msg   {size / events:6.1f} bytes a row "
        f"({events} events)"
    )


def main(count: int, rounds: int) -> None:
    body = stream(count)
    for _ in range(rounds):
        asyncio.run(round_(count, body))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
