"""Schema lint, one frame: does it follow the MCP schema of the protocol version in use?

The official JSON Schema of each revision ships unmodified in `schemas/<version>/schema.json`
(a test pins their sha256). A frame is matched to its definition the way the protocol pairs
them: a request or a notification by its method, among those its sender may send
(`ClientRequest`, `ServerNotification`, …); a result by the request it answers (the tap pairs
them); an error response by the JSON-RPC error definition; anything else by `JSONRPCMessage`.
Each problem is what jsonschema reports — the JSON pointer into the frame, its message, and
where in the schema the failing keyword is (`schema_path`) — at most MAX_PROBLEMS a frame.

Pure and synchronous, Django-free: the CLI checks each frame as it prints it; a live session
checks off the event loop, within a budget (`linter`). Validators are built once per
(version, definitions). Formats (`uri`, `byte`) are annotations here, as JSON Schema's default
has them: whether they were checked would depend on which optional packages are installed.

Most frames are valid, and jsonschema takes ~0.1 ms of pure Python (under the interpreter lock)
to say so. Each frame is first screened by a compiled validator of the same definitions,
`jsonschema_rs` (same draft, formats not asserted, no remote `$ref`): only a frame it finds
invalid (or cannot take) goes to jsonschema, whose problems, paths and messages are the report.
The two must agree on every verdict: tests/mcp/lint/test_screen.py runs both over every
definition used here.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard

import jsonschema_rs
import referencing.exceptions

from playground import jsonpointer
from playground.mcp import jsontext
from playground.schema import SPECIFICATIONS, validator_class

from ..secrets import CUT
from . import spec_sections

SCHEMAS = Path(__file__).resolve().parent / "schemas"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
MAX_PROBLEMS = 20  # problems listed for one frame (a broken list of 1,000 tools would list 1,000)
# Instances nested deeper than this are not screened. 2026-07-28's JSONValue is recursive, and
# jsonschema gives up (RecursionError: "not checked") somewhere past ~100 levels of it, where the
# compiled screen would say "valid": the verdicts would differ. No real message nests this deep.
SCREEN_DEPTH = 64
MESSAGE_CHARS = 300  # jsonschema quotes the failing value: a megabyte of text is not a message

Direction = Literal["send", "recv"]  # the tap's directions: we are the client
SENDERS = {"send": "client", "recv": "server"}


class Unchecked(Exception):
    """The frame could not be checked (the report says why): not a problem of the frame's."""


@dataclass(frozen=True, slots=True)
class Request:
    """The request a response answers: what its result is checked against."""

    method: str
    task: bool = False  # task-augmented (2025-11-25 `params.task`): answered by a CreateTaskResult


@dataclass(slots=True)
class Report:
    """The outcome of checking one frame."""

    version: str
    definition: str  # what it was checked against, e.g. "ListToolsResult"
    section: Callable[[], str]  # the spec section for that message type (made when shown)
    problems: list[dict[str, str]] = field(default_factory=list)  # [{pointer, message, schema_path}]
    more: bool = False  # more than MAX_PROBLEMS were found
    unchecked: str = ""  # why it could not be checked, if it could not

    @property
    def spec(self) -> str:
        return self.section()

    def info(self) -> dict[str, Any]:
        """The row's `schema_lint`: what the problems are measured against."""
        out: dict[str, Any] = {"version": self.version, "definition": self.definition, "spec": self.spec}
        if self.more:
            out["more"] = True
        if self.unchecked:
            out["unchecked"] = self.unchecked
        return out


def check(message: Any, *, version: str, direction: Direction, request: Request | None = None) -> Report:
    """Check one parsed frame. `request`: for a response, the request it answers (if known)."""
    return schema(version).check(message, direction, request)


def known(version: Any) -> TypeGuard[str]:
    return isinstance(version, str) and version in VERSIONS


@functools.cache
def schema(version: str) -> Schema:
    if version not in VERSIONS:
        raise ValueError(f"no MCP schema for {version!r} (known: {', '.join(VERSIONS)})")
    return Schema(version)


class Schema:
    """One revision's schema: its definitions by method and direction, and their validators."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.document: dict[str, Any] = json.loads((SCHEMAS / version / "schema.json").read_bytes())
        self.key = "$defs" if "$defs" in self.document else "definitions"
        self.defs: dict[str, Any] = self.document[self.key]
        self.cls = validator_class(self.document)
        self.requests = {"send": self._members("ClientRequest"), "recv": self._members("ServerRequest")}
        self.notifications = {"send": self._members("ClientNotification"), "recv": self._members("ServerNotification")}
        self.results = {
            method: self._result_of(name) for by_method in self.requests.values() for method, name in by_method.items()
        }
        self.envelope = {
            "request": "JSONRPCRequest",
            "notification": "JSONRPCNotification",
            "result": "JSONRPCResultResponse" if "JSONRPCResultResponse" in self.defs else "JSONRPCResponse",
            "error": "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in self.defs else "JSONRPCError",
        }
        self._start_caches()

    def _start_caches(self) -> None:
        """What is built once per document and kept: its pointers, validators and screens (a
        subclass reading another document calls this after setting `document`)."""
        self._pointers = _pointers(self.document)
        self._validators: dict[tuple[str, ...], Any] = {}
        self._screens: dict[tuple[str, ...], Any] = {}
        self._lock = threading.Lock()

    # The definitions -----------------------------------------------------------------

    def _members(self, union: str) -> dict[str, str]:
        """method -> definition name, for the members of a union such as `ClientRequest`
        (an `anyOf` of references, one reference, or — 2026-07-28's ClientNotification — the one
        member written inline, named here by the definition of the same method)."""
        node = self.defs.get(union)
        if not isinstance(node, dict):
            return {}
        found: dict[str, str] = {}
        for branch in node.get("anyOf", [node]):
            name = _ref_name(branch)
            method = _method_of(self.defs.get(name) if name else branch)
            if method is None:
                continue
            if name is None or name == union:
                name = next(
                    (
                        n
                        for n, d in self.defs.items()
                        if n != union and not n.startswith(("Client", "Server")) and _method_of(d) == method
                    ),
                    union,
                )
            found[method] = name
        return found

    def _result_of(self, request: str) -> str:
        """`CallToolRequest` -> `CallToolResult`; requests without a result of their own (ping,
        logging/setLevel, resources/subscribe) are answered by an EmptyResult."""
        name = request.removesuffix("Request") + "Result"
        if name in self.defs:
            return name
        return "EmptyResult" if "EmptyResult" in self.defs else "Result"

    def root(self, *names: str) -> dict[str, Any]:
        """One schema of every definition in `names` at once, in the document's draft."""
        return {
            "$schema": self.document.get("$schema"),
            self.key: self.defs,
            "allOf": [{"$ref": f"#/{self.key}/{name}"} for name in names],
        }

    def validator(self, *names: str) -> Any:
        """A jsonschema validator of every definition in `names` at once (built once)."""
        validator = self._validators.get(names)
        if validator is None:
            validator = self.cls(self.root(*names), registry=SPECIFICATIONS)
            with self._lock:
                validator = self._validators.setdefault(names, validator)
        return validator

    def screen(self, *names: str) -> Any:
        """The compiled twin of `validator(*names)` (built once): same draft (jsonschema's class
        picks it), formats not asserted (jsonschema_rs asserts them by default up to draft 7),
        nothing fetched. None where jsonschema_rs has no such draft or cannot build it (it resolves
        every `$ref` up front; jsonschema only those an instance reaches): jsonschema decides alone."""
        screen = self._screens.get(names)
        if screen is None:
            cls = getattr(jsonschema_rs, self.cls.__name__, None)
            try:
                screen = cls(self.root(*names), validate_formats=False, offline=True) if cls is not None else False
            except Exception:  # (MCP Apps 2026-01-26: three definitions $ref a `#/$defs/__schema0` that is not there)
                screen = False
            with self._lock:
                screen = self._screens.setdefault(names, screen)
        return screen or None

    # Checking ------------------------------------------------------------------------

    def check(self, message: Any, direction: Direction, request: Request | None) -> Report:
        version = self.version
        unknown: tuple[str, str, str] | None = None  # (pointer, message, schema path)
        result_def: str | None = None
        spec: Callable[[], str]
        if not isinstance(message, dict) or not ("method" in message or "result" in message or "error" in message):
            names: tuple[str, ...] = ("JSONRPCMessage",)
            label, spec = "JSONRPCMessage", functools.partial(spec_sections.messages, version)
        elif "method" in message:
            kind = "request" if "id" in message else "notification"
            method = message["method"]
            members = (self.requests if kind == "request" else self.notifications)[direction]
            definition = members.get(method) if isinstance(method, str) else None
            if definition is not None:
                # (From 2025-11-25 on a definition spells out its JSON-RPC envelope: checked once.)
                names = (
                    (definition,)
                    if "jsonrpc" in self.defs[definition].get("properties", {})
                    else (self.envelope[kind], definition)
                )
                label, spec = definition, functools.partial(spec_sections.for_method, version, method)
            else:
                names = (self.envelope[kind],)
                label, spec = self.envelope[kind], functools.partial(spec_sections.messages, version)
                if isinstance(method, str):
                    unknown = self._unknown(method, kind, direction)
        elif "error" in message:
            names = (self.envelope["error"],)
            label, spec = self.envelope["error"], functools.partial(spec_sections.errors, version)
        else:
            names = (self.envelope["result"],)
            label, spec = self.envelope["result"], functools.partial(spec_sections.messages, version)
            if request is not None and request.method in self.results:
                result_def = self._result_for(request, message.get("result"))
                label = result_def
                spec = (
                    functools.partial(spec_sections.input_required, version)
                    if result_def == "InputRequiredResult"
                    else functools.partial(spec_sections.for_method, version, request.method, result=True)
                )
        report = Report(version, label, spec)
        found: list[dict[str, str]] = []
        shallow = not jsontext.nests_deeper(message, SCREEN_DEPTH)  # (once: a part of it is as shallow)
        try:
            # The result's own definition first: where both say the same, its schema path is the telling one.
            if result_def is not None and isinstance(message.get("result"), dict):
                found += self._problems((result_def,), message["result"], "/result", shallow)
            found += self._problems(names, message, "", shallow)
        except RecursionError:
            report.unchecked = "nested deeper than the checker goes"
        except Unchecked as exc:
            report.unchecked = str(exc)
        if unknown is not None:
            found.insert(0, {"pointer": unknown[0], "message": unknown[1], "schema_path": unknown[2]})
        seen: set[tuple[str, str]] = set()
        for problem in found:
            key = (problem["pointer"], problem["message"])
            if key not in seen:
                seen.add(key)
                report.problems.append(problem)
        if len(report.problems) > MAX_PROBLEMS:
            del report.problems[MAX_PROBLEMS:]
            report.more = True
        return report

    def _result_for(self, request: Request, result: Any) -> str:
        if isinstance(result, dict):
            if "InputRequiredResult" in self.defs and result.get("resultType") == "input_required":
                return "InputRequiredResult"
            if request.task and "CreateTaskResult" in self.defs:
                return "CreateTaskResult"
        return self.results[request.method]

    def _unknown(self, method: str, kind: str, direction: Direction) -> tuple[str, str, str]:
        sender = SENDERS[direction]
        union = f"{sender.capitalize()}{kind.capitalize()}"
        if union not in self.defs:
            return (
                "/method",
                f"{method!r}: a {sender} sends no {kind}s in MCP {self.version}"
                + (" (it asks through input_required results)" if kind == "request" else ""),
                f"#/{self.key}",
            )
        return (
            "/method",
            f"{method!r} is not a {kind} a {sender} sends in MCP {self.version}",
            f"#/{self.key}/{union}",
        )

    def _problems(
        self, names: tuple[str, ...], instance: Any, prefix: str, shallow: bool | None = None
    ) -> list[dict[str, str]]:
        """jsonschema's problems with `instance` against the definitions `names`; none, without
        asking it, when the compiled screen finds the instance valid. Unchecked: the published
        schema itself cannot be applied to it (a `$ref` to nowhere: MCP Apps' `__schema0`)."""
        if passes(self.screen(*names), instance, shallow):
            return []
        out: list[dict[str, str]] = []
        try:
            for error in self.validator(*names).iter_errors(instance):
                for leaf in _leaves(error):
                    out.append(self._problem(leaf, prefix))
                if len(out) > MAX_PROBLEMS:
                    break
        except referencing.exceptions.Unresolvable as exc:
            raise Unchecked(f"the published schema of {', '.join(names)} cannot be applied: {exc}"[:300]) from None
        return out

    def _problem(self, error: Any, prefix: str) -> dict[str, str]:
        if error.validator in ("anyOf", "oneOf"):
            names = [_ref_name(b) or f"option {i + 1}" for i, b in enumerate(error.validator_value or [])]
            text = f"{_brief(error.instance)} matches none of {' | '.join(names)}"
        else:
            text = error.message
        if len(text) > MESSAGE_CHARS:
            text = text[: MESSAGE_CHARS - 1] + CUT
        where = self._pointers.get(id(error.schema))
        return {
            "pointer": prefix + jsonpointer.join(error.absolute_path),
            "message": text,
            "schema_path": f"#{where}/{error.validator}" if where is not None else f"#/{error.validator}",
        }


def passes(screen: Any, instance: Any, shallow: bool | None = None) -> bool:
    """Whether the compiled screen finds `instance` valid. Anything it cannot take (a value it
    cannot convert) is not a pass, nor is an instance nested deeper than SCREEN_DEPTH: jsonschema
    decides, as it did before the screen. `shallow`: that depth, when the caller knows it already."""
    if screen is None:
        return False
    if shallow is None:
        shallow = not jsontext.nests_deeper(instance, SCREEN_DEPTH)
    if not shallow:
        return False
    try:
        return bool(screen.is_valid(instance))
    except Exception:
        return False


def _leaves(error: Any) -> Iterator[Any]:
    """The errors worth showing for `error`: for a failed union (content blocks, elicitation
    modes…), the errors of the one member the value was meant to be — the one whose
    discriminators (`type`, `method` constants, the value's own type) it matches, and of those
    the one it misses least — or the union itself when that is not clear."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        yield error
        return
    branches: dict[Any, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    mismatches = {b: sum(1 for s in subs if _mismatch(s)) for b, subs in branches.items()}
    fewest = min(mismatches.values())
    live = [b for b in branches if mismatches[b] == fewest]
    if len(live) > 1:
        sizes = sorted(len(branches[b]) for b in live)
        if sizes[0] == sizes[1]:
            yield error
            return
        live = [min(live, key=lambda b: len(branches[b]))]
    for sub in branches[live[0]]:
        yield from _leaves(sub)


def _mismatch(error: Any) -> bool:
    """Whether `error` says the value is not this member at all: of another type, or another
    kind (`"type": "image"` against TextContent's constant)."""
    depth = len(error.relative_path)
    return (error.validator == "type" and depth == 0) or (error.validator in ("const", "enum") and depth == 1)


def _brief(value: Any) -> str:
    """The value, shortly: what a union message names."""
    if isinstance(value, dict):
        kind = value.get("type")
        return f"an object of type {kind!r}" if isinstance(kind, str) else "the object"
    if isinstance(value, list):
        return "the array"
    text = (
        json.dumps(value, ensure_ascii=False)
        if value is None or isinstance(value, (bool, int, float, str))
        else repr(value)
    )
    return text if len(text) <= 60 else text[:59] + CUT


def _ref_name(node: Any) -> str | None:
    ref = node.get("$ref") if isinstance(node, dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _method_of(node: Any) -> str | None:
    method = ((node or {}).get("properties") or {}).get("method") if isinstance(node, dict) else None
    const = method.get("const") if isinstance(method, dict) else None
    return const if isinstance(const, str) else None


def _pointers(document: Any) -> dict[int, str]:
    """id of every object in the schema -> its JSON pointer: where a failing keyword is."""
    out: dict[int, str] = {}
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            out[id(node)] = at
            stack.extend((value, f"{at}/{jsonpointer.escape(key)}") for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, f"{at}/{i}") for i, value in enumerate(node))
    return out
