"""A stdio peer for the capture's tests: what no well-behaved server writes, with a copy of every
byte it wrote and read kept in COPY_DIR (stdout, stderr, stdin), its environment in COPY_DIR/env.json
and its working directory in COPY_DIR/cwd, so a test compares what the host got with what the
server wrote.

    python capture_peer.py COPY_DIR script [FLOOD]  garbage, CRLF, invalid UTF-8, an empty line, half
        a line (the rest once the host has written "go\\n"), FLOOD lines in large writes, stderr
        with and without newlines, a last line without a newline; then exit code 3
    python capture_peer.py COPY_DIR echo    every byte read written back; at stdin's end "eof\\n", exit 0
    python capture_peer.py COPY_DIR signals "ready\\n"; on SIGTERM "got SIGTERM\\n" and exit 7
    python capture_peer.py COPY_DIR plain   "ready\\n", then reads stdin; default signal handling
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

copy = Path(sys.argv[1])
mode = sys.argv[2]
copies = {name: open(copy / name, "wb", buffering=0) for name in ("stdout", "stderr", "stdin")}
(copy / "env.json").write_text(json.dumps(dict(os.environ)))
(copy / "cwd").write_text(os.getcwd())


def out(data: bytes, fd: int = 1) -> None:
    copies["stdout" if fd == 1 else "stderr"].write(data)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_line() -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            break
        copies["stdin"].write(byte)
        line += byte
    return line


if mode == "script":
    flood = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    out(b"this is not JSON at all\n")
    out(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"crlf"}}\r\n')
    out(b"bytes \xff\xfe\xc3( not UTF-8\n")
    out(b"\n")
    out(b"tab\tand \x00 nul and \xe2\x9c\x93 check\n")
    out(b"warning \xff on stderr\n", fd=2)
    out(b"stderr without its newline yet", fd=2)
    out(b"half a li")
    assert read_line() == b"go\n"
    out(b"ne, the rest\n")
    lines = [
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"i":%d}}}\n' % i
        for i in range(flood)
    ]
    for start in range(0, flood, 997):  # writes that end in the middle of lines
        block = b"".join(lines[start : start + 997])
        out(block[:100])
        out(block[100:])
    out(b", and its end\n", fd=2)
    out(b"no newline at the end")
    sys.exit(3)
elif mode == "echo":
    while data := os.read(0, 65536):
        copies["stdin"].write(data)
        out(data)
    out(b"eof\n")
elif mode == "signals":
    signal.signal(signal.SIGTERM, lambda *a: (out(b"got SIGTERM\n"), os._exit(7)))
    out(b"ready\n")
    while read_line():
        pass
    signal.pause()
elif mode == "plain":
    out(b"ready\n")
    while read_line():
        pass
    signal.pause()
