"""The conformance adapter: the headless client the official conformance suite drives
(`conformance client --command ...`): `python -m playground.mcp.conformance_adapter URL`, or
`python manage.py mcp_conformance URL`. (Not the server check's `check/conformance.py`, which
checks a server's answers against the schema.)

It exercises OUR client core the way a person at the page would: connect (in the era the
suite asks for), list what the server offers, call each tool, read each resource, get each
prompt, and let a fixed responder answer the server's requests (elicitation: accept with
the requested schema's defaults; sampling: a fixed text; roots: none). The suite judges
the traffic; this command only fails (exit 1, reason on stderr) when the client itself
could not carry the session: a transport failure, a timeout, an unusable answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from playground.mcp.auth import AuthSettings, HeadlessAuthorizer, OAuth
from playground.mcp.config import Era, ServerConfig
from playground.mcp.connect import open_client
from playground.mcp.events import Tap, TranscriptEvent
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.responder import StaticResponder
from playground.mcp.transports.base import TransportError

MODERN_VERSION = "2026-07-28"
DEFAULT_LEGACY_VERSION = "2025-11-25"
SAMPLING_TEXT = "This is a fixed sampling answer from the MCP Playground conformance adapter."
REQUEST_TIMEOUT = 20.0  # the suite kills the adapter after 30 s
# The Client ID Metadata Document URL the suite's CIMD scenarios expect a client to present.
CIMD_URL = "https://conformance-test.local/client-metadata.json"

ArgumentsFn = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]


def example_value(schema: Any) -> Any:
    """A plausible value for one property: its default, const or first enum, else by type.
    `$ref`s are never followed (a network `$ref` must not be dereferenced, SEP-2106)."""
    if not isinstance(schema, dict):
        return "example"
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    return {
        "string": "example",
        "integer": 1,
        "number": 1.5,
        "boolean": True,
        "array": [],
        "object": example_arguments(schema),
        "null": None,
    }.get(kind if isinstance(kind, str) else "", "example")


def example_arguments(schema: Any) -> dict[str, Any]:
    """Arguments for a tool: every required property, plus any property that has a default."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    return {
        name: example_value(prop)
        for name, prop in props.items()
        if name in required or (isinstance(prop, dict) and "default" in prop)
    }


def echo_schema_of(tool_name: str) -> ArgumentsFn:
    """Arguments that hand back, verbatim, the inputSchema we received for another tool."""

    def build(_tool: dict[str, Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        focal = next((t for t in tools if t.get("name") == tool_name), None)
        if focal is None:
            raise RuntimeError(f"tool {tool_name!r} was not listed")
        return {"schema": focal.get("inputSchema")}

    return build


@dataclass
class Plan:
    """The little a scenario needs beyond "exercise everything": most need nothing."""

    call_tools: bool = True
    arguments: dict[str, ArgumentsFn] = field(default_factory=dict)


PLANS: dict[str, Plan] = {
    # Only listing is in question (its server has no tools/call handler).
    "json-schema-ref-no-deref": Plan(call_tools=False),
    # The scenario observes what the client kept of a schema by having it echoed back.
    "json-schema-2020-12-preservation": Plan(
        arguments={"json_schema_echo": echo_schema_of("json_schema_2020_12_tool")}
    ),
}


class AdapterFailure(Exception):
    """The client could not carry the scenario; the message says why."""


@dataclass
class Run:
    url: str
    scenario: str
    version: str
    context: dict[str, Any] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    @property
    def era(self) -> str:
        return "modern" if self.version == MODERN_VERSION else "legacy"

    def say(self, text: str) -> None:
        self.log.append(text)


def responder() -> StaticResponder:
    return StaticResponder(roots=[], elicitation="accept", sampling_text=SAMPLING_TEXT)


def oauth_for(run: Run, tap: Tap) -> OAuth:
    """Authorization as the page would do it, headless: pre-registered credentials when the
    suite gives them, our Client ID Metadata Document URL when the AS supports CIMD, else DCR."""
    ctx = run.context
    settings = AuthSettings(
        client_id=str(ctx.get("client_id") or ""),
        client_secret=str(ctx.get("client_secret") or ""),
        issuer=str(ctx.get("issuer") or ""),
        client_metadata_url=CIMD_URL,
    )
    return OAuth(tap, run.url, settings=settings, authorizer=HeadlessAuthorizer())


async def run_scenario(run: Run, tap: Tap) -> None:
    """Connect, exercise the server, close. Raises AdapterFailure when the client fails.

    A client that stops because the authorization spec says it must (a wrong `iss`, a
    foreign `resource`...) has done its job: that ends the run normally."""
    config = ServerConfig(transport="http", url=run.url, era=cast(Era, run.era), timeout=REQUEST_TIMEOUT)
    oauth = oauth_for(run, tap)
    try:
        client = await open_client(
            config,
            tap=tap,
            responder=responder(),
            auth=oauth,
            protocol_version=None if run.era == "modern" else run.version,
        )
    except Exception as exc:
        if oauth.refusal:
            run.say(f"authorization refused as the spec requires: {oauth.refusal}")
            return
        raise AdapterFailure(f"could not connect to {run.url}: {exc!r}") from exc
    try:
        run.say(f"connected: era={client.era} version={client.protocol_version} server={client.server_info}")
        await exercise(client, run)
    except (TransportError, AdapterFailure) as exc:
        if not oauth.refusal:
            raise
        run.say(f"stopped: {exc}; authorization refused as the spec requires: {oauth.refusal}")
    finally:
        await client.close()


async def exercise(client: Any, run: Run) -> None:
    plan = PLANS.get(run.scenario, Plan())
    caps = client.server_capabilities or {}
    tools = await _list(client.list_tools, "tools/list", advertised="tools" in caps, run=run)
    run.say(f"tools: {[t.get('name') for t in tools]}")
    calls = _context_calls(run.context)
    if calls is None and plan.call_tools:
        calls = []
        for tool in tools:
            name = str(tool.get("name") or "")
            build = plan.arguments.get(name)
            args = build(tool, tools) if build else example_arguments(tool.get("inputSchema"))
            calls.append((name, args))
    for name, args in calls or []:
        await _answered(client.call_tool(name, args), f"tools/call {name}", run)
    if "resources" in caps:
        for res in await _list(client.list_resources, "resources/list", advertised=True, run=run):
            if isinstance(res.get("uri"), str):
                await _answered(client.read_resource(res["uri"]), f"resources/read {res['uri']}", run)
    if "prompts" in caps:
        for prompt in await _list(client.list_prompts, "prompts/list", advertised=True, run=run):
            if isinstance(prompt.get("name"), str):
                args = {
                    a["name"]: "example"
                    for a in prompt.get("arguments") or []
                    if isinstance(a, dict) and a.get("required") and isinstance(a.get("name"), str)
                }
                await _answered(client.get_prompt(prompt["name"], args or None), f"prompts/get {prompt['name']}", run)


def _context_calls(context: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """Some scenarios say exactly which tools to call with which arguments."""
    calls = context.get("toolCalls")
    if not isinstance(calls, list):
        return None
    return [
        (c["name"], c.get("arguments") or {}) for c in calls if isinstance(c, dict) and isinstance(c.get("name"), str)
    ]


async def _list(fn: Callable[[], Any], what: str, *, advertised: bool, run: Run) -> list[dict[str, Any]]:
    """A list the server may not support when it did not advertise the capability."""
    try:
        return [item for item in await fn() if isinstance(item, dict)]
    except JsonRpcError as exc:
        if advertised:
            raise AdapterFailure(f"{what} failed although advertised: {exc}") from exc
        run.say(f"{what}: {exc} (capability not advertised)")
        return []


async def _answered(coro: Any, what: str, run: Run) -> None:
    """A JSON-RPC error is a legitimate answer (the suite judges it); anything else propagates."""
    try:
        result = await coro
        run.say(f"{what}: {json.dumps(result)[:200]}")
    except JsonRpcError as exc:
        run.say(f"{what}: error answer {exc}")


def describe(event: TranscriptEvent) -> str:
    """One transcript line for stderr when the run fails."""
    if event.dir in ("send", "recv"):
        http = event.http or {}
        status = f" HTTP {http.get('status')}" if http.get("status") else ""
        return f"{'→' if event.dir == 'send' else '←'}{status} {(event.raw or '')[:300]}"
    return f"[{event.dir}{':' + event.kind if event.kind else ''}] {event.text or ''}"


def main(argv: list[str] | None = None) -> int:
    """Run one scenario (the suite appends the server's URL and sets MCP_CONFORMANCE_*).
    The exit status: 0 done, 1 the client could not carry the scenario, 2 bad input.

    No Django here: the suite starts this once per scenario, about a hundred times in
    `make test`, and Django's start-up was two thirds of each start (1.2 s of CPU against 0.4)."""
    parser = argparse.ArgumentParser(prog="mcp_conformance", description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the scenario server's URL (appended by the suite)")
    parser.add_argument("--scenario", default=os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))
    parser.add_argument(
        "--protocol-version", default=os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", DEFAULT_LEGACY_VERSION)
    )
    parser.add_argument("--transcript", action="store_true", help="print the transcript even on success")
    opts = parser.parse_args(argv)
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except json.JSONDecodeError as exc:
        print(f"mcp_conformance: MCP_CONFORMANCE_CONTEXT is not JSON: {exc}", file=sys.stderr)
        return 2
    run = Run(
        url=opts.url,
        scenario=opts.scenario,
        version=opts.protocol_version,
        context=context if isinstance(context, dict) else {},
    )
    tap = Tap()
    transcript: list[str] = []
    tap.subscribe(lambda event: transcript.append(describe(event)))
    try:
        asyncio.run(asyncio.wait_for(run_scenario(run, tap), timeout=28))
        failure = None
    except AdapterFailure as exc:
        failure = str(exc)
    except TimeoutError:
        failure = "the scenario did not finish within 28 s"
    except Exception as exc:  # the client's own failure: say what and where
        failure = f"client error: {exc!r}"
    if failure or opts.transcript:
        print("\n".join(run.log + ["--- transcript ---"] + transcript[-60:]), file=sys.stderr)
    if failure:
        print(f"mcp_conformance: scenario {run.scenario or '?'} @ {run.version} FAILED: {failure}", file=sys.stderr)
        return 1
    print(f"mcp_conformance: scenario {run.scenario or '?'} @ {run.version} done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
