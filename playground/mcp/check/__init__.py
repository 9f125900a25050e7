"""The server check: a battery of protocol checks run against one server, as rows of a report.

Django-free, like the rest of the client core: the CLI (`mcp --check`) and the session page's
check feature run the same battery. Each group of checks is a module (handshake, lists,
capabilities, tools, calls, resources, prompts, errors, utilities, wire, timing); `runner` runs them
in order on an open session and on the extra connections version negotiation needs, all on
one tap, so every row cites the transcript lines (seqs) it judged.
"""

from __future__ import annotations

from .context import CheckOptions
from .result import FAIL, PASS, SKIP, WARN, CheckResult, Report
from .runner import Runner

__all__ = ["FAIL", "PASS", "SKIP", "WARN", "CheckOptions", "CheckResult", "Report", "Runner"]
