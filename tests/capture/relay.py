"""A test-side stand-in for the capture (`manage.py mcp --capture`, built elsewhere): started by a
host in place of a server, it starts the server, forwards the lines both ways, and writes the
records the upload contract names (docs/watch-a-host.md) to a file, one JSON object a line.
The tests post those records to the playground as a capture would.

    relay.py RECORDS_FILE -- COMMAND [ARG...]
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
import uuid


def main() -> int:
    path, rest = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    capture = uuid.uuid4().hex
    lock = threading.Lock()
    counter = [0]
    out = open(path, "w", encoding="utf-8")

    def record(kind: str, **fields: object) -> None:
        # (called under `lock`: the index follows the order things happened)
        out.write(
            json.dumps({"capture": capture, "server": 0, "i": counter[0], "t": time.time(), "kind": kind, **fields})
            + "\n"
        )
        out.flush()
        counter[0] += 1

    def line_fields(line: bytes) -> dict[str, str]:
        body = line.rstrip(b"\n")
        try:
            return {"text": body.decode("utf-8")}
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(body).decode()}

    child = subprocess.Popen(rest, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with lock:
        record("start", argv=rest, pid=child.pid, cwd=os.getcwd())

    def downstream() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            with lock:
                record("frame", dir="recv", **line_fields(line))
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()

    def errors() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            with lock:
                record("stderr", text=line.rstrip(b"\n").decode("utf-8", "replace"))

    threads = [threading.Thread(target=downstream), threading.Thread(target=errors)]
    for thread in threads:
        thread.start()
    assert child.stdin is not None
    for line in sys.stdin.buffer:
        with lock:
            record("frame", dir="send", **line_fields(line))
            child.stdin.write(line)
            child.stdin.flush()
    child.stdin.close()
    code = child.wait()
    for thread in threads:
        thread.join()
    with lock:
        record("end", code=code, reason="the server exited")
    return code


if __name__ == "__main__":
    sys.exit(main())
