"""A check's row and the report that collects them.

Statuses: `pass`, `warn` (a SHOULD the server misses, or something a person should look at),
`fail` (a MUST the server breaks, or an answer that breaks clients), and `skip` (the check
does not apply: a capability not advertised, an era the server does not speak), which never
counts against the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..secrets import CUT

Status = Literal["pass", "warn", "fail", "skip"]
PASS: Status = "pass"
WARN: Status = "warn"
FAIL: Status = "fail"
SKIP: Status = "skip"
_RANK = {SKIP: 0, PASS: 1, WARN: 2, FAIL: 3}

MAX_REASON = 2000  # a reason quotes the server (error messages, names): capped
MAX_SEQS = 200


def worst(*statuses: Status) -> Status:
    """The most severe of the statuses (`skip` when none are given)."""
    return max(statuses, key=_RANK.__getitem__, default=SKIP)


def clip(text: str, limit: int = 200) -> str:
    """A server's text quoted in a reason: one line, capped."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + CUT


@dataclass
class CheckResult:
    """One row: which check, how it went, why, and the transcript lines (seqs) it used."""

    name: str
    status: Status
    reason: str
    seqs: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.reason) > MAX_REASON:
            self.reason = self.reason[: MAX_REASON - 1] + CUT
        self.seqs = sorted(set(self.seqs))[:MAX_SEQS]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "reason": self.reason, "seqs": list(self.seqs)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        status = data.get("status")
        return cls(
            name=str(data.get("name", "")),
            status=status if status in _RANK else FAIL,
            reason=str(data.get("reason", "")),
            seqs=[s for s in data.get("seqs") or [] if isinstance(s, int) and not isinstance(s, bool)],
        )


@dataclass
class Report:
    """The rows so far; `finished` once the battery ran to its end (or was cut short, saying why).
    `tools_called`: the ticked tools the check called; `tools_not_called`: the ticked ones it did
    not call, each with why (name, why)."""

    rows: list[CheckResult] = field(default_factory=list)
    finished: bool = False
    tools_called: list[str] = field(default_factory=list)
    tools_not_called: list[tuple[str, str]] = field(default_factory=list)

    def add(self, row: CheckResult) -> CheckResult:
        self.rows.append(row)
        return row

    def not_called(self, name: str, why: str) -> None:
        self.tools_not_called.append((name, why))

    def tools_line(self) -> str:
        """Which ticked tools were called, and which were not and why (the report's own line)."""
        said = (
            f"Tools called: {', '.join(clip(n, 60) for n in self.tools_called)}."
            if self.tools_called
            else "No tool was called."
        )
        if self.tools_not_called:
            said += (
                " Ticked, not called: " + "; ".join(f"{clip(n, 60)} ({why})" for n, why in self.tools_not_called) + "."
            )
        return said

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {PASS: 0, WARN: 0, FAIL: 0, SKIP: 0}
        for row in self.rows:
            out[row.status] += 1
        return out

    @property
    def failed(self) -> bool:
        return any(row.status == FAIL for row in self.rows)

    def summary(self) -> str:
        c = self.counts()
        text = f"{c[PASS]} passed, {c[WARN]} warned, {c[FAIL]} failed, {c[SKIP]} skipped"
        return text if self.finished else text + " (so far)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "check",
            "rows": [r.to_dict() for r in self.rows],
            "counts": self.counts(),
            "finished": self.finished,
            "tools_called": list(self.tools_called),
            "tools_not_called": [{"name": name, "why": why} for name, why in self.tools_not_called],
        }

    @classmethod
    def from_dict(cls, data: Any) -> Report:
        if not isinstance(data, dict):
            return cls()
        rows = [CheckResult.from_dict(r) for r in data.get("rows") or [] if isinstance(r, dict)]
        called = [str(n) for n in data.get("tools_called") or [] if isinstance(n, str)]
        not_called = [
            (str(n.get("name", "")), str(n.get("why", "")))
            for n in data.get("tools_not_called") or []
            if isinstance(n, dict)
        ]
        return cls(rows=rows, finished=bool(data.get("finished")), tools_called=called, tools_not_called=not_called)
