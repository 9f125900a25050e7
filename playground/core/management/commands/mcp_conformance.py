"""`python manage.py mcp_conformance URL`: the conformance suite's headless client
(playground/mcp/conformance_adapter.py, which the suite runs without Django:
`python -m playground.mcp.conformance_adapter`)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from playground.mcp.conformance_adapter import main


class Command(BaseCommand):
    help = "Headless MCP client for the official conformance suite (reads MCP_CONFORMANCE_* env)."

    def run_from_argv(self, argv: list[str]) -> None:
        sys.exit(main(argv[2:]))
