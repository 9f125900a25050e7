"""Conversion between the registry's server settings and the JSON that MCP hosts use.

Pure functions, no Django: the import page, the export views and tests share them.

Dialects read:
- `{"mcpServers": {name: {...}}}` — Claude Desktop, Claude Code (`.mcp.json`), Cursor, Windsurf,
  Cherry Studio. stdio entries have `command`, `args`, `env`, `cwd`; remote ones `url` (Windsurf:
  `serverUrl`, Cherry Studio: `baseUrl`), `headers` and an optional `type`
  (`stdio`, `http`, `streamable_http`, `streamableHttp`, `streamable-http`, `sse`).
  A URL without a type becomes transport "auto" (probe Streamable HTTP, fall back to SSE).
- `{"servers": {name: {"type": "stdio"|"http"|"sse", ...}}}` — VS Code's `.vscode/mcp.json`,
  and the same under `{"mcp": {...}}` in VS Code's settings.json. Comments and trailing commas
  (JSONC) are accepted since VS Code files often contain them.
- A bare `{name: {...}}` mapping whose values all look like servers.

Written: `mcpServers` (stdio: command/args/env/cwd; remote: `type` "http"/"sse" and url/headers,
no `type` for "auto") and VS Code `servers` (VS Code's "http" already falls back to SSE, so "auto"
is written as "http").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from playground.mcp.transports.http_common import header_problem, is_field_name
from playground.schema import json_type

from .command_line import CommandLineError, split_command_line

TRANSPORTS = ("stdio", "http", "sse", "auto")
MAX_NAME = 200

# Host spellings of a transport, compared after lower-casing and dropping "-" and "_".
_TYPE_ALIASES = {
    "stdio": "stdio",
    "http": "http",
    "streamablehttp": "http",
    "streamable": "http",
    "sse": "sse",
}
_URL_KEYS = ("url", "serverUrl", "baseUrl")
_KNOWN_KEYS = {
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "headers",
    *_URL_KEYS,
    # Host bookkeeping we read past without a note.
    "name",
    "description",
    "isActive",
    "disabled",
    "enabled",
    "autoApprove",
    "alwaysAllow",
    "timeout",
    "provider",
    "providerUrl",
    "logoUrl",
    "tags",
    "id",
    "installSource",
}


class InterchangeError(ValueError):
    """The pasted text cannot be read as any host's server list."""


@dataclass
class Entry:
    """One server's settings as hosts describe them (no era, roots or owner: hosts have none)."""

    name: str
    transport: str = "stdio"
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def settings(self) -> dict[str, Any]:
        """The fields the registry's Server model stores under the same names."""
        return {
            "transport": self.transport,
            "command": self.command,
            "args": list(self.args),
            "env": dict(self.env),
            "cwd": self.cwd,
            "url": self.url,
            "headers": dict(self.headers),
        }


@dataclass
class Rejected:
    """A server entry that could not be read, and why."""

    name: str
    reason: str


@dataclass
class ParseResult:
    dialect: str  # "mcpServers", "vscode" or "bare"
    entries: list[Entry] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- reading


def strip_jsonc(text: str) -> str:
    """Remove // and /* */ comments and trailing commas outside strings (VS Code's JSONC)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j == -1 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j == -1 else j + 2
        elif c == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "]}":
                i += 1  # trailing comma: drop it, keep the whitespace
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _loads(text: str, warnings: list[str]) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                warnings.append(f"The key {key!r} appears twice; the last one was used.")
            seen[key] = value
        return seen

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as strict_error:
        try:
            return json.loads(strip_jsonc(text), object_pairs_hook=pairs)
        except json.JSONDecodeError:
            raise InterchangeError(
                f"Not valid JSON: {strict_error.msg} at line {strict_error.lineno}, column {strict_error.colno}."
            ) from None


def _looks_like_server(value: Any) -> bool:
    return isinstance(value, dict) and any(k in value for k in ("command", "type", *_URL_KEYS))


def parse(text: str | dict[str, Any]) -> ParseResult:
    """Read a host's server list. Raises InterchangeError if it is not one at all; entries that
    cannot be read are reported in `rejected` so the others still import."""
    warnings: list[str] = []
    if isinstance(text, str):
        if not text.strip():
            raise InterchangeError('Nothing to import: paste a JSON object with "mcpServers" or "servers".')
        data = _loads(text, warnings)
    else:
        data = text
    if not isinstance(data, dict):
        raise InterchangeError(f'Expected a JSON object with "mcpServers" or "servers", got a JSON {json_type(data)}.')

    if "mcpServers" in data:
        dialect, servers = "mcpServers", data["mcpServers"]
    elif "servers" in data:
        dialect, servers = "vscode", data["servers"]
    elif isinstance(data.get("mcp"), dict) and "servers" in data["mcp"]:
        dialect, servers = "vscode", data["mcp"]["servers"]
    elif data and all(_looks_like_server(v) for v in data.values()):
        dialect, servers = "bare", data
    else:
        raise InterchangeError(
            'No servers found: expected a "mcpServers" object (Claude Desktop, Cursor, Cherry Studio) '
            'or a "servers" object (VS Code).'
        )
    key = {"mcpServers": "mcpServers", "vscode": "servers", "bare": "the top level"}[dialect]
    if not isinstance(servers, dict):
        raise InterchangeError(f'"{key}" must be an object mapping names to servers, got a JSON {json_type(servers)}.')
    if dialect == "vscode" and isinstance(data.get("inputs"), list) and data["inputs"]:
        warnings.append('VS Code "inputs" are not imported: replace ${input:…} references with values.')

    result = ParseResult(dialect=dialect, warnings=warnings)
    for name, spec in servers.items():
        try:
            result.entries.append(parse_entry(name, spec, dialect))
        except InterchangeError as exc:
            result.rejected.append(Rejected(name=name, reason=str(exc)))
    if not servers:
        result.warnings.append(f'"{key}" is empty: nothing to import.')
    return result


def parse_entry(name: str, spec: Any, dialect: str = "mcpServers") -> Entry:
    """One server entry; raises InterchangeError with a reason a person can act on."""
    name = name.strip()
    if not name:
        raise InterchangeError("A server needs a non-empty name.")
    if len(name) > MAX_NAME:
        raise InterchangeError(f"The name is longer than {MAX_NAME} characters.")
    if not isinstance(spec, dict):
        raise InterchangeError(f"Expected an object, got a JSON {json_type(spec)}.")

    entry = Entry(name=name)
    url_key = next((k for k in _URL_KEYS if spec.get(k)), None)
    url = spec.get(url_key) if url_key else ""
    command = spec.get("command") or ""
    raw_type = spec.get("type")

    if raw_type is not None:
        if not isinstance(raw_type, str):
            raise InterchangeError(f'"type" must be a string, got a JSON {json_type(raw_type)}.')
        transport = _TYPE_ALIASES.get(re.sub(r"[-_\s]", "", raw_type.lower()))
        if transport is None:
            raise InterchangeError(
                f'Unknown "type" {raw_type!r}: expected stdio, http, streamable_http, streamableHttp or sse.'
            )
    elif command and url:
        raise InterchangeError('Has both "command" and a URL but no "type" to choose between them.')
    elif command:
        transport = "stdio"
    elif url:
        transport = "auto"
        entry.notes.append('No "type" given with a URL: set to Auto (tries Streamable HTTP, then SSE).')
    else:
        raise InterchangeError('Needs a "command" (stdio) or a "url" (HTTP).')
    entry.transport = transport

    if transport == "stdio":
        if not isinstance(command, str) or not command.strip():
            raise InterchangeError('A stdio server needs a "command" string.')
        entry.command = command.strip()
        entry.args = _str_list(spec.get("args"), "args")
        entry.env = _str_dict(spec.get("env"), "env")
        try:
            split = split_command_line(entry.command, entry.args)
        except CommandLineError as exc:
            raise InterchangeError(str(exc)) from None
        if split is not None:
            entry.command, entry.args = split.command, split.args
            entry.env = {**entry.env, **split.assigned}
            entry.notes.append(split.message)
        cwd = spec.get("cwd") or ""
        if not isinstance(cwd, str):
            raise InterchangeError(f'"cwd" must be a string, got a JSON {json_type(cwd)}.')
        entry.cwd = cwd
        if url:
            entry.notes.append(f'Ignored "{url_key}": a stdio server has none.')
    else:
        if not url:
            raise InterchangeError(f'A {raw_type or transport} server needs a "url".')
        if not isinstance(url, str):
            raise InterchangeError(f'"{url_key}" must be a string, got a JSON {json_type(url)}.')
        check_http_url(url)
        entry.url = url.strip()
        entry.headers = _str_dict(spec.get("headers"), "headers")
        for header, value in entry.headers.items():
            problem = header_problem(header, value)
            if problem is not None:
                raise InterchangeError(f'"headers": {problem}.')
        if command:
            entry.notes.append('Ignored "command": an HTTP server has none.')

    if spec.get("disabled") is True or spec.get("isActive") is False or spec.get("enabled") is False:
        entry.notes.append("Disabled in the source file; imported anyway.")
    if "envFile" in spec:
        entry.notes.append('"envFile" is not supported: copy its variables into Environment.')
    unknown = sorted(k for k in spec if k not in _KNOWN_KEYS and k != "envFile")
    if unknown:
        entry.notes.append("Ignored: " + ", ".join(f'"{k}"' for k in unknown) + ".")
    if _has_variable(entry):
        entry.notes.append("Contains ${…} variables the host would substitute; edit them to real values.")
    return entry


def check_http_url(url: str) -> None:
    """Raise InterchangeError unless `url` is an absolute http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok:
        raise InterchangeError(f"{url!r} is not an http:// or https:// URL.")


def _has_variable(entry: Entry) -> bool:
    values = [entry.command, entry.cwd, entry.url, *entry.args, *entry.env.values(), *entry.headers.values()]
    return any("${" in v for v in values)


def _str_list(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InterchangeError(f'"{key}" must be a list of strings, got a JSON {json_type(value)}.')
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise InterchangeError(f'"{key}" must contain only strings, found a JSON {json_type(item)}.')
        out.append(item if isinstance(item, str) else json.dumps(item))
    return out


def _str_dict(value: Any, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InterchangeError(f'"{key}" must be an object of strings, got a JSON {json_type(value)}.')
    out = {}
    for k, v in value.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, (int, float)):
            v = json.dumps(v)
        elif v is None:
            v = ""
        elif not isinstance(v, str):
            raise InterchangeError(f'"{key}".{k} must be a string, got a JSON {json_type(v)}.')
        out[str(k)] = v
    return out


# ---------------------------------------------------------------- writing


def to_host_entry(entry: Entry, fmt: str = "mcpServers") -> dict[str, Any]:
    """One server in a host's shape: `fmt` is "mcpServers" or "vscode"."""
    if fmt not in ("mcpServers", "vscode"):
        raise ValueError(f"unknown export format {fmt!r}")
    out: dict[str, Any] = {}
    if entry.transport == "stdio":
        if fmt == "vscode":
            out["type"] = "stdio"
        out["command"] = entry.command
        out["args"] = list(entry.args)
        if entry.env:
            out["env"] = dict(entry.env)
        if entry.cwd:
            out["cwd"] = entry.cwd
        return out
    if entry.transport in ("http", "sse"):
        out["type"] = entry.transport
    elif fmt == "vscode":
        out["type"] = "http"  # VS Code's "http" tries Streamable HTTP, then SSE: that is "auto".
    out["url"] = entry.url
    if entry.headers:
        out["headers"] = dict(entry.headers)
    return out


def export(entries: list[Entry], fmt: str = "mcpServers") -> dict[str, Any]:
    """The whole document: `{"mcpServers": {...}}` or VS Code's `{"servers": {...}}`."""
    key = "servers" if fmt == "vscode" else "mcpServers"
    return {key: {e.name: to_host_entry(e, fmt) for e in entries}}


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- the registry's text fields

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


def parse_env_lines(text: str) -> dict[str, str]:
    """`NAME=value` per line (blank lines and `#` comments skipped); raises ValueError listing bad lines."""
    return _parse_pairs(text, "=", lambda name: _ENV_NAME.match(name) is not None, "NAME=value", "variable")


def parse_header_lines(text: str) -> dict[str, str]:
    """`Name: value` per line (blank lines and `#` comments skipped); raises ValueError listing bad lines."""
    return _parse_pairs(text, ":", is_field_name, "Name: value", "header")


def _parse_pairs(text: str, sep: str, valid_name: Callable[[str], bool], shape: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    lowered: dict[str, str] = {}
    errors: list[str] = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, found, value = line.partition(sep)
        name = name.strip()
        if not found:
            errors.append(f"Line {number}: expected {shape}, got {line.strip()!r}.")
            continue
        if not valid_name(name):
            errors.append(f"Line {number}: {name!r} is not a valid {what} name.")
            continue
        if what == "header" and (problem := header_problem(name, value.strip())) is not None:
            errors.append(f"Line {number}: {problem}.")  # a NUL (a line holds no CR or LF)
            continue
        key = name.lower() if what == "header" else name
        if key in lowered:
            errors.append(f"Line {number}: {name} is set twice.")
            continue
        lowered[key] = name
        out[name] = value.strip() if what == "header" else value.rstrip("\r")
    if errors:
        raise ValueError(errors)
    return out


def format_env_lines(env: dict[str, str]) -> str:
    return "\n".join(f"{k}={v}" for k, v in (env or {}).items())


def format_header_lines(headers: dict[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in (headers or {}).items())


def parse_arg_lines(text: str) -> list[str]:
    """One argument per line; blank lines dropped, surrounding spaces trimmed (a stray space is a bug)."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def format_arg_lines(args: list[str]) -> str:
    return "\n".join(args or [])


def parse_root_lines(text: str) -> list[dict[str, str]]:
    """`URI [name]` per line — the roots offered to the server; raises ValueError listing bad lines."""
    roots: list[dict[str, str]] = []
    errors: list[str] = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        uri, _, name = line.strip().partition(" ")
        if ":" not in uri:
            errors.append(f"Line {number}: {uri!r} is not a URI (e.g. file:///home/me/project).")
            continue
        roots.append({"uri": uri, **({"name": name.strip()} if name.strip() else {})})
    if errors:
        raise ValueError(errors)
    return roots


def format_root_lines(roots: list[dict[str, str]]) -> str:
    return "\n".join(f"{r.get('uri', '')} {r.get('name', '')}".rstrip() for r in roots or [] if isinstance(r, dict))
