"""`manage.py mcp`: the headless CLI (see playground/mcp/cli.py for the contract)."""

from __future__ import annotations

import asyncio
import sys

from django.core.management.base import BaseCommand

from playground.mcp import cli


class Command(BaseCommand):
    help = (
        "Connect to an MCP server (--url URL, or -- COMMAND [ARG ...] for stdio), run the steps in the "
        "order given and print the transcript; or --replay FILE. Exit: 0 ok, 1 a step failed, 2 usage, "
        "3 connect, 4 timeout, 5 the replay differs."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        cli.add_arguments(parser)

    def run_from_argv(self, argv: list[str]) -> None:
        # Our own exit codes (2 for usage, like argparse) instead of Django's CommandError handling.
        self._called_from_command_line = True
        parser = self.create_parser(argv[0], argv[1])
        try:
            ns = parser.parse_args(argv[2:])
        except SystemExit as exc:
            sys.exit(cli.EXIT_USAGE if exc.code else 0)
        try:
            code = asyncio.run(cli.run(ns, sys.stdout))
        except cli.UsageError as exc:
            parser.print_usage(sys.stderr)
            print(f"mcp: error: {exc}", file=sys.stderr)
            code = cli.EXIT_USAGE
        sys.exit(code)

    def handle(self, *args, **options) -> None:  # pragma: no cover - run_from_argv is the entry point
        raise NotImplementedError
