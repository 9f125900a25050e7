"""The schema lint: frames checked against the official JSON Schema of the MCP revision in use.

- `definitions`: one frame matched to its definition (by method, by the request a result
  answers) and checked against it (`check`, `Request`, `Report`); the schemas ship unmodified
  in `schemas/<version>/schema.json`;
- `linter`: a session's frames in order — the version they negotiate, the request each response
  answers, the frames there is time to check (`FrameLinter`, `LintBudget`, the process's
  `PROCESS_SHARE`, `check_all`, `apply`);
- `cli_output`: the CLI's output, its frames checked off the event loop (`LintedOutput`);
- `spec_sections`: the section of the specification each message type is described in.

No Django: the CLI, the server check and the session page's schema lint feature use it alike.
"""

from __future__ import annotations

from . import spec_sections
from .cli_output import LintedOutput
from .definitions import VERSIONS, Report, Request, check, known
from .linter import PROCESS_SHARE, FrameLinter, LintBudget, ProcessShare, apply, check_all

__all__ = [
    "PROCESS_SHARE",
    "VERSIONS",
    "FrameLinter",
    "LintBudget",
    "LintedOutput",
    "ProcessShare",
    "Report",
    "Request",
    "apply",
    "check",
    "check_all",
    "known",
    "spec_sections",
]
