"""The stdio capture: a host starts it in place of a server (`manage.py mcp --capture BASE ...
-- COMMAND`); it starts the server, forwards the bytes both ways untouched and first, and sends a
copy of every line to the playground off the forwarding path (docs/capture.md).

Stdlib only, and light to import: the host waits for the server to start. `proxy` forwards,
`recorder` cuts lines into numbered records, `outbox` keeps them (memory, then a spill file),
`uploader` posts them, `command` is the command line.
"""

import os

TOKEN_VAR = "PLAYGROUND_CAPTURE_TOKEN"
PREFIX = "[playground capture]"


def say(text: str, fd: int = 2) -> None:
    """One line of the capture's own on its stderr (the host shows it as the server's)."""
    try:
        os.write(fd, f"{PREFIX} {text}\n".encode(errors="replace"))
    except OSError:
        pass
