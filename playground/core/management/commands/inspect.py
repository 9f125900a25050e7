"""`manage.py inspect`: one command to inspect a server, as `npx @modelcontextprotocol/inspector
node build/index.js` does. It migrates, registers the server (or reuses the one with the same
settings), prints a one-time link that logs in and lands on a live session of it, and serves
the app (daphne, on 127.0.0.1 and a free port unless --port says which).

    manage.py inspect [options] -- COMMAND [ARG ...]     # stdio
    manage.py inspect [options] --url URL                # Streamable HTTP or HTTP+SSE

A relative command (`./server`, `build/server`) is found from where `inspect` is run, which is
also the server's working directory (so its relative arguments, `build/index.js`, work as
typed); a bare name (`node`, `uvx`) is looked up on PATH when the server starts.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from playground import security
from playground.registry import interchange
from playground.registry.models import LoginToken, Server
from playground.registry.services import register_or_reuse

from .playground_setup import Command as Setup


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_name(command: list[str], url: str) -> str:
    """What the server is called in the list: its URL, or its command line (paths shortened)."""
    if url:
        return url[: interchange.MAX_NAME]
    words = [Path(command[0]).name, *command[1:]]
    return " ".join(words)[:80]


class Command(BaseCommand):
    help = (
        "Inspect an MCP server: register it (or reuse the one with the same settings), print a one-time link "
        "to a live session of it, and serve the app. `inspect -- COMMAND [ARG ...]` or `inspect --url URL`."
    )
    requires_system_checks: list[str] = []  # migrations are run below
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="", help="the server's URL (Streamable HTTP or HTTP+SSE)")
        parser.add_argument(
            "--transport",
            choices=["auto", "http", "sse"],
            default="auto",
            help="for --url: Streamable HTTP, HTTP+SSE, or try one then the other (default)",
        )
        parser.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="'Name: value'",
            help="an HTTP header sent on every request (repeatable)",
        )
        parser.add_argument(
            "--env",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="an environment variable of a stdio server (repeatable)",
        )
        parser.add_argument(
            "--name", default="", help="the name to register it under (default: its command line or URL)"
        )
        parser.add_argument("--port", type=int, default=0, help="the port to serve on (default: a free one)")
        parser.add_argument("command", nargs="*", metavar="-- COMMAND [ARG ...]", help="a stdio server's command line")

    def handle(
        self,
        *args: Any,
        url: str,
        transport: str,
        header: list[str],
        env: list[str],
        name: str,
        port: int,
        command: list[str],
        **options: Any,
    ) -> None:
        if bool(url) == bool(command):
            raise CommandError("give either --url URL or -- COMMAND [ARG ...]")
        entry = self.entry(name or server_name(command, url), command, url, transport, env, header)
        call_command("migrate", verbosity=0, interactive=False)
        # (django-stubs type `stdout` as a TextIO; Django takes any stream with write() and wraps it
        # in an OutputWrapper, as our own already is)
        setup = Setup(stdout=self.stdout, stderr=self.stderr)  # type: ignore[arg-type]
        user = setup.ensure_user()
        try:
            server, created = register_or_reuse(entry, user)
        except security.PolicyError as exc:
            raise CommandError(str(exc)) from None
        port = port or free_port()
        link = f"http://127.0.0.1:{port}" + reverse("token_login", args=[LoginToken.issue(user, connect=server)])
        self.stdout.write(
            f"{'Registered' if created else 'Reusing'} the server {server.name!r} ({self.about(server)})."
        )
        self.stdout.write(f"Open this link to inspect it (it logs in once, valid for 1 hour):\n  {link}")
        self.stdout.flush()
        self.serve(port)

    def entry(
        self, name: str, command: list[str], url: str, transport: str, env: list[str], header: list[str]
    ) -> interchange.Entry:
        """The server as a host's `mcpServers` entry, read (and checked) as an import reads it."""
        try:
            if url:
                spec: dict[str, Any] = {"url": url, "headers": interchange.parse_header_lines("\n".join(header))}
                if transport != "auto":
                    spec["type"] = transport
            else:
                program = command[0]
                if os.sep in program and not os.path.isabs(program):
                    program = os.path.abspath(program)
                spec = {
                    "command": program,
                    "args": command[1:],
                    "cwd": os.getcwd(),
                    "env": interchange.parse_env_lines("\n".join(env)),
                }
            return interchange.parse_entry(name, spec)
        except (interchange.InterchangeError, ValueError) as exc:
            raise CommandError(str(exc)) from None

    @staticmethod
    def about(server: Server) -> str:
        if server.url:
            return f"{server.get_transport_display()} {server.url}"
        return " ".join([server.command, *server.args]) + f", in {server.cwd}"

    def serve(self, port: int) -> None:
        """daphne in place of this process, as `make run` starts it (from the project's folder:
        the server's own was recorded as its working directory)."""
        daphne = str(Path(sys.executable).parent / "daphne")
        os.environ["PLAYGROUND_PORT"] = str(port)
        os.chdir(settings.BASE_DIR)
        os.execv(daphne, [daphne, "-b", "127.0.0.1", "-p", str(port), "playground.asgi:application"])
