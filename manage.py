#!/usr/bin/env python
"""Django's command-line utility for MCP Playground."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["mcp"]:
        from playground.mcp.capture import command as capture

        if capture.wanted(sys.argv[2:]):  # a host waits on this one: the capture imports only what it uses
            sys.exit(capture.main(sys.argv[2:]))
        # The headless CLI needs nothing of Django (playground/mcp imports none of it): started
        # directly it takes a third of the time, which a CI job running it per commit feels.
        from playground.mcp.cli import main as mcp

        sys.exit(mcp(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
