"""The stdio capture: a host starts it in place of a server (`manage.py mcp --capture BASE ...
-- COMMAND`); it starts the server, forwards the bytes both ways untouched and first, and sends a
copy of every line to the playground off the forwarding path (docs/capture.md).

Stdlib only, and light to import: the host waits for the server to start. `proxy` forwards,
`recorder` cuts lines into numbered records, `outbox` keeps them (memory, then a spill file),
`uploader` posts them, `command` is the command line.
"""

TOKEN_VAR = "PLAYGROUND_CAPTURE_TOKEN"
PREFIX = "[playground capture]"
