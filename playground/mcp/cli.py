"""The headless CLI: connect, run steps in the order given, print the transcript.

A contract other tools rely on (see README): options, the JSONL line format shared
with exports, and the exit codes below.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from dataclasses import dataclass, field, replace
from typing import IO, Any, cast

from . import junit
from .auth import AuthSettings, HeadlessAuthorizer, OAuth
from .capture import command as capture
from .check import command as check
from .check.context import CHECK_DEADLINE
from .client import McpClient, RequestTimeout
from .config import ServerConfig
from .connect import ConnectError, open_client
from .events import ON_PURPOSE, Tap, TranscriptEvent
from .jsonrpc import JsonRpcError
from .lint import FrameLinter, LintedOutput
from .replay import Replayer
from .replay import cli as replay_cli
from .responder import Responder, StaticResponder
from .transports.base import TransportError
from .transports.http_common import header_problem

EXIT_OK = 0
EXIT_STEP_FAILED = 1  # a JSON-RPC error or a tool result with isError: true
EXIT_USAGE = 2
EXIT_CONNECT = 3  # could not connect or complete the handshake
EXIT_TIMEOUT = 4
EXIT_DIFFERENCES = 5  # --replay: a request's outcome differs from the recording's

LIST_KINDS = {
    "tools": "list_tools",
    "resources": "list_resources",
    "templates": "list_resource_templates",
    "prompts": "list_prompts",
}


class UsageError(Exception):
    pass


class _Step(argparse.Action):
    """Collects steps in the order they appear on the command line."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        steps = getattr(namespace, "steps", None) or []
        steps.append((self.dest, values))
        namespace.steps = steps


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="the server's URL (Streamable HTTP or HTTP+SSE)")
    parser.add_argument(
        "--transport",
        choices=["auto", "http", "sse"],
        default="auto",
        help="for --url: Streamable HTTP, HTTP+SSE, or try Streamable HTTP then SSE (default)",
    )
    parser.add_argument(
        "--protocol-version",
        default="",
        metavar="VERSION",
        help="the protocol version to offer (default: the latest of the era), e.g. 2025-03-26",
    )
    parser.add_argument(
        "--era",
        choices=["legacy", "auto", "modern"],
        default="legacy",
        help="protocol era: legacy handshake (default), auto-detect, or modern",
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'Name: value'",
        help="HTTP header sent on every request (repeatable)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment variable for a stdio server (repeatable)",
    )
    parser.add_argument("--cwd", help="working directory for a stdio server")
    parser.add_argument(
        "--inherit-env",
        action="store_true",
        help="start a stdio server with this process's whole environment (default: HOME, LOGNAME, "
        "PATH, SHELL, TERM, USER and the --env variables only)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="per-request timeout in seconds (default 60)")
    parser.add_argument("--jsonl", action="store_true", help="print the transcript as JSON lines")
    parser.add_argument("--transcript", metavar="FILE", help="also write the transcript as JSON lines to FILE")
    parser.add_argument(
        "--root", action="append", default=[], metavar="URI", help="answer roots/list with these roots (repeatable)"
    )
    parser.add_argument(
        "--elicit",
        choices=["accept", "decline", "cancel"],
        help="answer elicitation requests so (accept fills the schema's defaults)",
    )
    parser.add_argument("--elicit-content", metavar="JSON", help="content merged into accepted elicitations")
    parser.add_argument("--sample", metavar="TEXT", help="answer sampling requests with this text")
    oauth = parser.add_argument_group(
        "OAuth 2.1 (for --url; a 401 starts the flow, the redirect is followed headlessly)"
    )
    oauth.add_argument("--no-oauth", action="store_true", help="do not authorize on a 401")
    oauth.add_argument("--client-id", default="", help="pre-registered OAuth client id")
    oauth.add_argument("--client-secret", default="", help="its secret (masked in the transcript)")
    oauth.add_argument(
        "--client-auth",
        choices=["client_secret_basic", "client_secret_post", "none"],
        default="",
        help="token endpoint authentication method (default: from the server's metadata)",
    )
    oauth.add_argument("--issuer", default="", help="the authorization server the pre-registered client belongs to")
    oauth.add_argument(
        "--scope", action="append", default=[], help="scope to request on top of the server's (repeatable)"
    )
    oauth.add_argument(
        "--client-metadata-url", default="", help="a Client ID Metadata Document URL to use as client id"
    )
    checking = parser.add_argument_group("server check (instead of steps)")
    checking.add_argument(
        "--check", action="store_true", help="run the server check and print its report; exit 1 when a check fails"
    )
    checking.add_argument(
        "--call-tools",
        action="append",
        default=[],
        metavar="NAME,...",
        help="with --check: the tools to call (they run their side effects; none by default)",
    )
    checking.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"with --check: the most the whole check may take (default {CHECK_DEADLINE:g}); "
        "then it stops, cancelling the request in flight, and reports the rows so far "
        "and a failed 'deadline' row",
    )
    steps = parser.add_argument_group("steps (run in the order given, after connecting)")
    steps.add_argument("--list", dest="list", action=_Step, choices=sorted(LIST_KINDS))
    steps.add_argument("--call", dest="call", action=_Step, metavar="'NAME={json args}'")
    steps.add_argument("--read", dest="read", action=_Step, metavar="URI")
    steps.add_argument("--prompt", dest="prompt", action=_Step, metavar="'NAME={json args}'")
    steps.add_argument("--ping", dest="ping", action=_Step, nargs=0)
    steps.add_argument("--raw", dest="raw", action=_Step, metavar="'METHOD={json params}'")
    parser.add_argument(
        "--junit",
        metavar="FILE",
        help="with --check or --replay: also write the report as JUnit XML to FILE (a test case per "
        "check row or replayed request, failures with their reason and transcript events)",
    )
    replay = parser.add_argument_group("replay (a saved session as a regression test)")
    replay.add_argument(
        "--replay",
        metavar="FILE",
        help="replay a session's JSONL export (or a --transcript file) "
        "against the server and compare every response; exit 5 when any differs",
    )
    replay.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="POINTER",
        help="with --replay: a JSON pointer pattern to leave out of the comparison, * for any "
        "one segment, ** for any number (repeatable), e.g. /result/content/*/text",
    )
    capture.add_arguments(parser)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG ...] for a stdio server")


def _split_named_json(spec: str, what: str) -> tuple[str, Any]:
    """`NAME={json}` or a bare `NAME` (no arguments)."""
    name, sep, rest = spec.partition("=")
    if not name:
        raise UsageError(f"{what}: missing name in {spec!r}")
    if not sep:
        return name, None
    try:
        return name, json.loads(rest)
    except ValueError as exc:
        raise UsageError(f"{what} {name}: arguments are not valid JSON: {exc}") from exc


def _pairs(items: list[str], sep: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, found, value = item.partition(sep)
        if not found or not name.strip():
            raise UsageError(f"{what} {item!r} is not of the form NAME{sep}VALUE")
        if sep == ":" and (problem := header_problem(name.strip(), value.strip())) is not None:
            raise UsageError(f"{what} {item!r}: {problem}")
        out[name.strip()] = value.strip() if sep == ":" else value
    return out


def config_from_args(ns: argparse.Namespace) -> ServerConfig:
    command = list(ns.command or [])
    if command and command[0] == "--":
        command = command[1:]
    if ns.url and command:
        raise UsageError("give either --url or -- COMMAND, not both")
    if not ns.url and not command:
        raise UsageError("give --url URL or -- COMMAND [ARG ...]")
    if ns.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if ns.url:
        return ServerConfig(
            transport=ns.transport,
            url=ns.url,
            headers=_pairs(ns.header, ":", "--header"),
            era=ns.era,
            timeout=ns.timeout,
            protocol_version=ns.protocol_version,
        )
    return ServerConfig(
        transport="stdio",
        command=command[0],
        args=command[1:],
        env=_pairs(ns.env, "=", "--env"),
        cwd=ns.cwd,
        inherit_env=ns.inherit_env,
        era=ns.era,
        timeout=ns.timeout,
        protocol_version=ns.protocol_version,
    )


def responder_from_args(ns: argparse.Namespace) -> StaticResponder:
    content = None
    if ns.elicit_content:
        try:
            content = json.loads(ns.elicit_content)
        except ValueError as exc:
            raise UsageError(f"--elicit-content is not valid JSON: {exc}") from exc
    return StaticResponder(
        roots=[{"uri": uri} for uri in ns.root] or None,
        elicitation=ns.elicit,
        elicitation_content=content,
        sampling_text=ns.sample,
    )


def oauth_from_args(ns: argparse.Namespace, config: ServerConfig, tap: Tap) -> OAuth | None:
    if config.transport == "stdio" or ns.no_oauth:
        return None
    settings = AuthSettings(
        client_id=ns.client_id,
        client_secret=ns.client_secret,
        auth_method=ns.client_auth,
        issuer=ns.issuer,
        scopes=list(ns.scope),
        client_metadata_url=ns.client_metadata_url,
    )
    return OAuth(tap, config.url, settings=settings, authorizer=HeadlessAuthorizer(), timeout=config.timeout)


# The event fields a server's text can reach.
_SERVER_FIELDS = ("raw", "message", "parse_error", "problems", "text", "http", "data", "schema_problems")


def _masked(event: TranscriptEvent, auth: OAuth | None) -> TranscriptEvent:
    """What the OAuth flow obtained (tokens, codes, client secrets) masked in an event a server
    may have echoed it in, before it is printed or written (the transcript file is an export)."""
    redactor = auth.redactor() if auth is not None else None
    if not redactor:
        return event
    return replace(event, **{name: redactor.obj(getattr(event, name)) for name in _SERVER_FIELDS})


def describe_event(event: TranscriptEvent) -> str:
    """One readable line per event (the page's transcript, in text)."""
    arrow = {"send": "→", "recv": "←", "stderr": "!", "note": "•"}[event.dir]
    head = f"{event.t * 1000:10.1f} ms {arrow}"
    if event.dir == "note":
        return f"{head} [{event.kind}] {event.text}"
    if event.dir == "stderr":
        return f"{head} stderr: {event.text}"
    msg = event.message
    if not isinstance(msg, dict):
        why = event.parse_error or ("truncated" if event.truncated else "not an object")
        return f"{head} (unparsed: {why}) {(event.raw or '')[:200]}"
    label = msg.get("method") or ("error" if "error" in msg else "result")
    ident = f" #{msg['id']}" if "id" in msg else ""
    latency = f" ({event.latency_ms:.1f} ms)" if event.latency_ms is not None else ""
    body = json.dumps(msg.get("params", msg.get("result", msg.get("error"))), ensure_ascii=False)
    if len(body) > 300:
        body = body[:300] + "…"
    on_purpose = " (sent invalid on purpose)" if (event.schema_lint or {}).get(ON_PURPOSE) else ""
    schema = "".join(
        f"\n{'':16}schema problem{on_purpose} at {p['pointer'] or '(the message)'}: {p['message']}"
        for p in event.schema_problems or []
    )
    return f"{head} {label}{ident}{latency} {body}{schema}"


class Printable:
    """`out` as text any UTF-8 stream takes: a server's unpaired surrogates ("\\ud800" in its
    JSON, which parses into one) are written as that escape — in a JSON line, the very escape
    JSON has for it. Written as they are, they raised in the middle of the transport's reading,
    and the request waited out its timeout."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if not text.isascii():
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


@dataclass
class Outcome:
    code: int = EXIT_OK
    failures: list[str] = field(default_factory=list)


async def _run_step(client: McpClient, kind: str, value: Any, outcome: Outcome) -> None:
    if kind == "list":
        await getattr(client, LIST_KINDS[value])()
    elif kind == "call":
        name, args = _split_named_json(value, "--call")
        result = await client.call_tool(name, args if args is not None else {})
        if isinstance(result, dict) and result.get("isError") is True:
            outcome.code = max(outcome.code, EXIT_STEP_FAILED)
            outcome.failures.append(f"tool {name} returned isError: true")
    elif kind == "read":
        await client.read_resource(value)
    elif kind == "prompt":
        name, args = _split_named_json(value, "--prompt")
        await client.get_prompt(name, args)
    elif kind == "ping":
        await client.ping()
    elif kind == "raw":
        method, params = _split_named_json(value, "--raw")
        await client.request(method, params)


async def run(ns: argparse.Namespace, out: IO[str]) -> int:
    """Connect, run the steps, print/write the transcript; return the exit code."""
    steps = list(getattr(ns, "steps", None) or [])
    if ns.check and steps:
        raise UsageError("--check runs its own requests: give it no steps")
    if ns.call_tools and not ns.check:
        raise UsageError("--call-tools goes with --check")
    if ns.deadline is not None and not ns.check:
        raise UsageError("--deadline goes with --check")
    if ns.deadline is not None and not 0 < ns.deadline < math.inf:  # (not NaN either)
        raise UsageError("--deadline must be a positive number of seconds")
    if ns.check and ns.replay:
        raise UsageError("--check and --replay each run their own requests: give one")
    if ns.junit and not (ns.check or ns.replay):
        raise UsageError("--junit goes with --check or --replay")
    for kind, value in steps:  # reject malformed JSON before touching the server
        if kind in ("call", "prompt", "raw"):
            _split_named_json(value, "--" + kind)
    config = config_from_args(ns)
    responder: Responder = responder_from_args(ns)
    tap = Tap()
    replayer = _replayer(ns, steps, tap)
    if replayer is not None:
        responder = replayer.responder(responder)
    auth = oauth_from_args(ns, config, tap)
    file = open(ns.transcript, "w", encoding="utf-8", errors="backslashreplace") if ns.transcript else None
    stream = cast(IO[str], Printable(out))

    # Every frame, against the schema of the version in use: where the frames are shown or written
    # (the check prints only its report, a replay only its diffs without --jsonl; the check's
    # answers are checked against the schema anyway). Checked in a thread, written in order.
    shown = not ns.check and (ns.jsonl or replayer is None)
    linter = FrameLinter() if shown or ns.transcript else None

    def write(event: TranscriptEvent) -> None:
        event = _masked(event, auth)
        line = json.dumps(event.to_dict(), ensure_ascii=False)
        if file:
            file.write(line + "\n")
        if shown:
            stream.write((line if ns.jsonl else describe_event(event)) + "\n")
        elif event.kind == "diff":
            stream.write(replay_cli.describe(event) + "\n")

    def write_now(event: TranscriptEvent) -> None:
        write(event)
        stream.flush()

    output = LintedOutput(linter, tap, write, stream) if linter is not None else None
    tap.subscribe(output.event if output is not None else write_now)
    out = cast(IO[str], output.out) if output is not None else stream  # (behind the frames before it)
    runner = check.make_runner(ns, config, tap) if ns.check else None
    cited = junit.Events() if ns.junit else None
    if cited is not None:
        tap.subscribe(cited)
    outcome = Outcome()
    try:
        try:
            client = await open_client(config, tap=tap, responder=responder, auth=auth)
        except ConnectError as exc:
            print(f"mcp: could not connect: {exc}", file=sys.stderr)
            if exc.hint:
                print(f"mcp: hint: {exc.hint['text']} (--transport {exc.hint['suggest']})", file=sys.stderr)
            return EXIT_CONNECT
        try:
            if runner is not None:
                code = await check.run(runner, ns, client, config, auth, out)
                if cited is not None:
                    _write_junit(ns.junit, junit.check_report(runner.report.rows, cited, _named(config)))
                return code
            if replayer is not None:
                replayed = await replay_cli.run(client, replayer, None if ns.jsonl else out)
                outcome.code = EXIT_CONNECT if replayed.aborted else EXIT_DIFFERENCES if replayed.differs else EXIT_OK
                if cited is not None:
                    _write_junit(ns.junit, junit.replay_report(replayed.report, cited, ns.replay))
            for kind, value in steps:
                try:
                    await _run_step(client, kind, value, outcome)
                except JsonRpcError as exc:
                    outcome.code = max(outcome.code, EXIT_STEP_FAILED)
                    outcome.failures.append(f"--{kind} {value}: error {exc.code}: {exc.message}")
                except RequestTimeout as exc:
                    outcome.failures.append(f"--{kind} {value}: {exc}")
                    outcome.code = EXIT_TIMEOUT
                    break
                except TransportError as exc:
                    outcome.failures.append(f"--{kind} {value}: connection lost: {exc}")
                    outcome.code = EXIT_CONNECT
                    break
        finally:
            await client.close()
    finally:
        try:
            if output is not None:
                await output.close()
        finally:
            if file:
                file.close()
    for failure in outcome.failures:
        print(f"mcp: {failure}", file=sys.stderr)
    return outcome.code


def _named(config: ServerConfig) -> str:
    return config.url or " ".join([config.command or "", *config.args])


def _write_junit(path: str, xml: str) -> None:
    with open(path, "w", encoding="utf-8") as file:
        file.write(xml)


def _replayer(ns: argparse.Namespace, steps: list[Any], tap: Tap) -> Replayer | None:
    if not ns.replay:
        if ns.ignore:
            raise UsageError("--ignore goes with --replay")
        return None
    if steps:
        raise UsageError("--replay runs the recorded requests: give no steps with it")
    try:
        return replay_cli.prepare(ns, tap)
    except ValueError as exc:  # RecordingError, RuleError
        raise UsageError(f"--replay: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if capture.wanted(argv):  # (manage.py comes straight here: docs/capture.md)
        return capture.main(argv)
    parser = argparse.ArgumentParser(prog="mcp", description="Talk to an MCP server and print the transcript.")
    add_arguments(parser)
    try:
        ns = parser.parse_args(argv)
        return asyncio.run(run(ns, sys.stdout))
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"mcp: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
