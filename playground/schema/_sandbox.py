"""Checks against a server's schemas run in a child process, killed at a deadline.

A tool's `outputSchema` and its `structuredContent` both come from the server, and jsonschema
is pure Python with no bound on its work: `uniqueItems` over 3,000 small objects compares them
pairwise (30 s), and a 2 KB chain of `$defs` in which each entry is `allOf` of the next one
twice doubles the work at every level. RE2 bounds the regexes (`_linear_regex`); everything else
is bounded here: the check runs in a child process (`serve` below, started by `_Child`)
that is killed when it overruns, and the caller is told "not checked", never "valid". A thread
could not be stopped, and would hold the GIL every request of the process needs.

Most checks are small: a schema and a value of at most `SMALL_BYTES` each, with no reference
to multiply the work, are bounded by their size (each subschema meets each value at most once;
`uniqueItems` over what fits in 4 KB is a few thousand comparisons) and are checked in the
calling thread, saving the round trip (~0.3 ms) on every tool call with an output schema.

The calls block their thread for up to `DEADLINE` seconds: call them from a thread (a sync
view, `asyncio.to_thread`), or `avalidate_arguments` from the event loop. Children (at most `CHILDREN`, started
when first needed) keep their compiled validators between calls; a killed one is replaced on
the next call.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from playground.budget import VALIDATION

from ._cache import SchemaCache

DEADLINE = VALIDATION.seconds  # seconds a check may take; the caller waits this long at most
START_DEADLINE = 20.0  # seconds a child may take to start (imports), on a loaded machine
CHILDREN = 2  # checks that may run at once in a process
MEMORY_BYTES = VALIDATION.memory  # address space a child may use (a value can be tens of megabytes)
SMALL_BYTES = 4096  # schema and value each at most this large, without references: checked here
_REFERENCES = (b'"$ref"', b'"$dynamicRef"', b'"$recursiveRef"')
_ROOT = str(Path(__file__).resolve().parents[2])


class NotChecked(Exception):
    """The check did not finish: over the deadline, out of memory, or the child died."""


def _encode(message: Any) -> bytes:
    """One line of JSON. orjson refuses lone surrogates and integers beyond 64 bits, both
    possible in a server's JSON; the standard library escapes the one and writes the other."""
    try:
        return orjson.dumps(message) + b"\n"
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(message, ensure_ascii=True).encode() + b"\n"


def _decode(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


class _Child:
    """One child process and the partial line read from it."""

    def __init__(self) -> None:
        code = f"import sys; sys.path.insert(0, {_ROOT!r}); from playground.schema._sandbox import serve; serve()"
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.buffer = b""
        if self.read(START_DEADLINE) != {"ready": True}:
            raise NotChecked("the checker did not start")

    def ask(self, request: dict[str, Any], deadline: float) -> Any:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(_encode(request))
        except OSError as exc:
            raise NotChecked(f"the checker stopped ({exc})") from None
        return self.read(deadline)

    def read(self, seconds: float) -> Any:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        until = time.monotonic() + seconds
        while b"\n" not in self.buffer:
            left = until - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise NotChecked(f"checking it took longer than {seconds:g} s")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise NotChecked("the checker stopped (out of memory?)")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return _decode(line)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class Sandbox:
    """At most `children` child processes, each running one check at a time."""

    def __init__(self, children: int = CHILDREN, deadline: float = DEADLINE) -> None:
        self.children, self.deadline = children, deadline
        self._idle: list[_Child] = []
        self._count = 0
        self._free = threading.Condition()

    def call(self, op: str, seconds: float | None = None, **args: Any) -> Any:
        """The child's answer to `op` within `seconds` (the deadline at most); NotChecked when
        it does not come in time."""
        seconds = self.deadline if seconds is None else min(seconds, self.deadline)
        if seconds <= 0:
            raise NotChecked("no time was left to check it")
        child = self._take()
        try:
            answer = child.ask({"op": op, **args}, seconds)
        except BaseException:
            child.kill()
            self._give(None)
            raise
        self._give(child)
        if isinstance(answer, dict) and "failed" in answer:
            raise NotChecked(str(answer["failed"]))
        return answer

    def _take(self) -> _Child:
        with self._free:
            while not self._idle and self._count >= self.children:
                self._free.wait()
            if self._idle:
                return self._idle.pop()
            self._count += 1
        try:
            return _Child()
        except BaseException:
            self._give(None)
            raise

    def _give(self, child: _Child | None) -> None:
        with self._free:
            if child is None:
                self._count -= 1
            else:
                self._idle.append(child)
            self._free.notify()


SANDBOX = Sandbox()


def not_checked_error(why: str) -> dict[str, Any]:
    """The one error a check that did not finish reports (never "valid")."""
    return {
        "path": "",
        "pointer": "",
        "keyword": "not-checked",
        "message": f"Not checked: {why}. Checks against a server's schema are stopped when "
        f"they run that long, so that no server can stall the playground.",
    }


def _small(schema: Any, *values: Any) -> bool:
    """Whether checking `values` against `schema` is bounded by their size (see above)."""
    if not _SMALL_SCHEMAS.get(schema, lambda: _small_schema(schema)):
        return False
    try:
        return all(len(orjson.dumps(value)) <= SMALL_BYTES for value in values)
    except (orjson.JSONEncodeError, TypeError):
        return False


_SMALL_SCHEMAS = SchemaCache()


def _small_schema(schema: Any) -> bool:
    try:
        text = orjson.dumps(schema)
    except (orjson.JSONEncodeError, TypeError):
        return False
    return len(text) <= SMALL_BYTES and not any(ref in text for ref in _REFERENCES)


def validate_arguments(schema: Any, arguments: Any) -> list[dict[str, Any]]:
    """`_validation.validate_arguments`, bounded: [not-checked error] when it does not finish."""
    if _small(schema, arguments):
        return _here(schema, arguments)
    return _in_child(schema, arguments)


async def avalidate_arguments(schema: Any, arguments: Any) -> list[dict[str, Any]]:
    """`validate_arguments` from the event loop: a small check here (bounded by its size, as
    the loop's other work is), the rest in a thread that waits on the sandbox."""
    if _small(schema, arguments):
        return _here(schema, arguments)
    return await asyncio.to_thread(_in_child, schema, arguments)


def _here(schema: Any, arguments: Any) -> list[dict[str, Any]]:
    from ._validation import validate_arguments as here

    return here(schema, arguments)


def _in_child(schema: Any, arguments: Any) -> list[dict[str, Any]]:
    try:
        return list(SANDBOX.call("validate", schema=schema, instance=arguments))
    except NotChecked as exc:
        return [not_checked_error(str(exc))]


def matches(root: Any, subschema: Any, instance: Any, seconds: float | None = None) -> bool:
    """`_validation.matches`, bounded: False when it does not finish (it only picks a form branch)."""
    if _small(root, instance):  # (the subschema is a part of the root)
        from ._validation import matches as here

        return here(root, subschema, instance)
    try:
        return bool(SANDBOX.call("matches", seconds, root=root, subschema=subschema, instance=instance))
    except NotChecked:
        return False


def serve() -> None:
    """The child: one JSON request a line on stdin, one answer a line on stdout."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    from . import _validation

    out = sys.stdout.buffer
    out.write(_encode({"ready": True}))
    out.flush()
    for line in sys.stdin.buffer:
        try:
            request = _decode(line)
            if request["op"] == "validate":
                answer: Any = _validation.validate_arguments(request["schema"], request["instance"])
            else:
                answer = _validation.matches(request["root"], request["subschema"], request["instance"])
        except MemoryError:
            answer = {"failed": "the check needed more memory than it may use"}
        except Exception as exc:
            answer = {"failed": f"the check failed ({type(exc).__name__})"}
        out.write(_encode(answer))
        out.flush()
