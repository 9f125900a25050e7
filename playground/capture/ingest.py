"""A capture's records made the transcript events a live session's recorder writes.

Each upload is applied under a lock on its Capture row (one writer per session, whichever
process the request reached): the records are applied in `i` order from the next expected one;
those after a gap are held (CaptureRecord) until it is filled; a record seen before is ignored
(re-sending is safe). Frames go through the core's Tap, as a live session's do, so the events
have the same shape (parsed message, raw text, problems, request/response pairing and latency):
the transcript, lint, search, Model view, exports, shares and replay read them unchanged.
"""

from __future__ import annotations

import base64
import datetime
import shlex
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from playground.mcp import jsontext
from playground.mcp.events import EventRow, Tap, TranscriptEvent
from playground.mcp.lint import PROCESS_SHARE, FrameLinter, LintBudget, apply, check_all
from playground.registry.models import Server
from playground.sessions.live.durability import CAPTURE_SILENT
from playground.transcripts.models import Event, Session
from playground.transcripts.recorder import save_events
from playground.transcripts.storable import storable

from .models import Capture, CapturePart, CaptureRecord, CaptureToken
from .records import LIMITS, Malformed, Upload, frame_bytes

HOST_FACTS_CHARS = 20_000  # the host's declared capabilities kept (raw JSON) at most
LIST_METHODS = {"tools/list": "tools", "resources/list": "resources", "resources/templates/list": "templates"}
LIST_METHODS["prompts/list"] = "prompts"
CATALOGUE_ITEMS = 5_000  # items of one list kept for the catalogue (Model view)
# The schema lint of one upload (a frame costs ~50 us to 1 s to check): at most this many frames
# and this much CPU time, checked a few at a time, and within the capture session's LintBudget (its
# part of the process's PROCESS_SHARE, which live sessions share too); a note says how many were
# left unchecked.
LINT_FRAMES = 500
LINT_SECONDS = 0.02
LINT_STEP = 10
LINT_BUDGETS = 1_000  # capture sessions whose budget is remembered between uploads (the oldest go)
LINT_NOTE_EVERY = 10.0  # seconds of the session between two "not checked" notes (a flood's uploads)


class Forbidden(Exception):
    """The token's owner may not record this (403)."""


@dataclass
class Applied:
    session: Session
    acked: int  # the highest i stored with no gap before it (-1: none yet)
    rows: list[EventRow] = field(default_factory=list)
    state_changed: bool = False


def capture_secrets(server: Server, token: str) -> list[str]:
    """What a captured session masks wherever it is shown masked: the entry's env values, the token."""
    values = [str(v) for v in (server.env or {}).values() if str(v)]
    return [*values, token]


def ingest(token: CaptureToken, plain: str, upload: Upload, publish: Callable[[Applied], None]) -> Applied:
    """Store `upload` (Forbidden, Malformed: nothing stored). `publish` runs under the lock after
    the save, so the session's pages get its lines in the one order they were stored in."""
    server = Server.objects.filter(pk=upload.server, owner_id=token.owner_id).first()
    if server is None:
        raise Forbidden("the server is not one of the token owner's registered servers")
    with transaction.atomic():
        capture = _locked_capture(token, plain, server, upload)
        if capture.server_id != server.pk or capture.session.owner_id != token.owner_id:
            raise Forbidden("this capture belongs to another server or user")
        capture.requests += 1
        if capture.requests > LIMITS.requests:
            raise Malformed(f"more than {LIMITS.requests} uploads for one capture")
        applied = _apply(capture, upload)
        CaptureToken.objects.filter(pk=token.pk).update(last_used=timezone.now())
        publish(applied)
    return applied


def append(
    token: CaptureToken,
    plain: str,
    server: Server,
    capture_id: str,
    records: list[dict[str, Any]],
    publish: Callable[[Applied], None],
    key: str = "",
) -> Applied:
    """Records the playground makes itself (the HTTP capture), numbered here, under the lock, in
    the order they are appended; `key` names the capture's connection (its session id)."""
    with transaction.atomic():
        capture = _locked_capture(token, plain, server, Upload(capture_id, server.pk, []), transport=server.transport)
        if key and not capture.http_key:
            capture.http_key = key[:300]
        now = time.time()
        numbered = [
            {"t": now, **record, "capture": capture_id, "server": server.pk, "i": capture.next_i + n}
            for n, record in enumerate(records)
        ]
        applied = _apply(capture, Upload(capture_id, server.pk, numbered))
        publish(applied)
    return applied


def _locked_capture(
    token: CaptureToken, plain: str, server: Server, upload: Upload, transport: str = "stdio"
) -> Capture:
    """The capture's row, locked; made with its session by the first upload that names it."""
    found = Capture.objects.select_for_update().select_related("session").filter(uuid=upload.capture).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():  # a savepoint: another process may be creating the same capture
            now = timezone.now()
            session = Session.objects.create(
                server=server,
                server_name=server.name,
                transport=transport,
                owner_id=token.owner_id,
                status=Session.Status.CONNECTED,
                kind=Session.Kind.CAPTURED,
                started_at=now,
                heartbeat_at=now,
                secret_values=capture_secrets(server, plain),
                report={"host": {}, "dropped": 0},
            )
            Capture.objects.create(uuid=upload.capture, session=session, server=server, token=token)
    except IntegrityError:
        pass
    return Capture.objects.select_for_update().select_related("session").get(uuid=upload.capture)


def _apply(capture: Capture, upload: Upload) -> Applied:
    incoming = {r["i"]: r for r in upload.records if r["i"] >= capture.next_i}
    if any(i - capture.next_i > LIMITS.ahead for i in incoming):
        raise Malformed(f"a record more than {LIMITS.ahead} after the next one expected ({capture.next_i})")
    held: dict[int, dict[str, Any]] = {}
    if incoming and capture.held.exists():
        held = dict(capture.held.filter(i__gte=capture.next_i).values_list("i", "data"))
    pending = {**incoming, **held}  # held first come: a re-sent record changes nothing
    ready: list[dict[str, Any]] = []
    while capture.next_i in pending:
        ready.append(pending.pop(capture.next_i))
        capture.next_i += 1
    to_hold = [CaptureRecord(capture=capture, i=i, data=r) for i, r in pending.items() if i not in held]
    if to_hold:
        if len(held) + len(to_hold) > LIMITS.held:
            raise Malformed(f"more than {LIMITS.held} records waiting for a gap before them")
        CaptureRecord.objects.bulk_create(to_hold, ignore_conflicts=True)
    if held and ready:
        capture.held.filter(i__lt=capture.next_i).delete()
    session = capture.session
    applied = Applied(session=session, acked=capture.next_i - 1)
    if ready:
        applied.rows, applied.state_changed = _events(capture, session, ready)
        if applied.rows:
            save_events(session.pk, applied.rows)
    fields = ["heartbeat_at"]
    session.heartbeat_at = timezone.now()
    if session.status == Session.Status.ENDED and not capture.ended and session.end_reason == CAPTURE_SILENT:
        # Records after the silence sweep ended it (the playground was away, the capture kept them):
        # the capture lives on.
        session.status, session.ended_at, session.end_reason = Session.Status.CONNECTED, None, ""
        applied.state_changed = True
    if ready or applied.state_changed:
        fields += ["status", "ended_at", "end_reason", "server_info", "capabilities", "protocol_version", "era"]
        fields += ["instructions", "report", "clock_origin", "started_at", "catalogue"]
    if applied.rows:
        session.event_count = applied.rows[-1]["seq"]
    session.save(update_fields=fields)
    capture.save()
    return applied


def _events(capture: Capture, session: Session, records: list[dict[str, Any]]) -> tuple[list[EventRow], bool]:
    """The records' events (rows), numbered after the session's; whether the session's facts changed."""
    now = [0.0]
    tap = Tap(max_raw=settings.PLAYGROUND_MAX_FRAME_BYTES, clock=lambda: now[0])
    tap.start = 0.0
    tap.resume_from(capture.next_seq - 1, [tuple(o) for o in capture.open_requests])
    events: list[TranscriptEvent] = []
    tap.subscribe(events.append)
    facts = _Facts(capture, session)
    for record in records:
        if session.clock_origin is None:
            session.clock_origin = datetime.datetime.fromtimestamp(record["t"], tz=datetime.UTC)
            session.started_at = session.clock_origin
            facts.changed = True
        now[0] = max(0.0, record["t"] - session.clock_origin.timestamp())
        facts.record(tap, record)
    _lint(tap, events, session, [(int(o[2]), str(o[0])) for o in capture.open_requests])
    capture.next_seq = tap.seq + 1
    capture.open_requests = [list(o) for o in tap.open_requests()][-1000:]
    return [event.to_dict() for event in events], facts.changed


def _lint(tap: Tap, events: list[TranscriptEvent], session: Session, opened: list[tuple[int, str]]) -> None:
    """The schema lint of a live session, on the upload's frames (their rows carry its findings;
    saving counts them on the session): against the version the handshake chose, each response
    against the request it answers. An upload's frames are checked within LINT_FRAMES, LINT_SECONDS
    of CPU and the session's LintBudget; a note says how many were not."""
    report = session.report if isinstance(session.report, dict) else {}
    offered = (report.get("host") or {}).get("protocolVersion")
    budget = _budget((session.pk, session.started_at))
    linter = FrameLinter(
        version=session.protocol_version or (offered if isinstance(offered, str) else None), budget=budget
    )
    methods = dict(
        Event.objects.filter(session_id=session.pk, seq__in=[seq for seq, _dir in opened]).values_list("seq", "method")
    )
    for seq, method in sorted(methods.items()):
        if method:
            linter.expect(seq, method)
    picks = linter.pick(events)
    checked, spent = 0, 0.0
    secrets = session.share_redactor()
    while checked < min(len(picks), LINT_FRAMES) and spent < LINT_SECONDS and budget.seconds > 0:
        step = picks[checked : min(checked + LINT_STEP, LINT_FRAMES)]
        reports, seconds = check_all(step)
        budget.spend(seconds)
        for pick, found in zip(step, reports):
            apply(pick, found, secrets)
        checked, spent = checked + len(step), spent + seconds
    # Said at most every LINT_NOTE_EVERY seconds, with what went unchecked since (a flood's hundred
    # uploads made a hundred notes), and whatever is left when the capture ends.
    unchecked = int(report.get("lint_unchecked") or 0) + linter.skipped + len(picks) - checked
    if unchecked:
        now = tap.clock() - tap.start
        last = report.get("lint_noted_at")
        ended = session.status == Session.Status.ENDED
        if isinstance(last, (int, float)) and now - last < LINT_NOTE_EVERY and not ended:
            report["lint_unchecked"] = unchecked
            return
        report["lint_unchecked"], report["lint_noted_at"] = 0, now
        tap.note(
            "info",
            f"schema lint: {unchecked} frame(s) not checked (each upload's budget: {LINT_FRAMES} frames, "
            f"{LINT_SECONDS * 1000:g} ms, within the process's share of a core for checking; "
            f"said at most every {LINT_NOTE_EVERY:g} s)",
        )


_budgets: OrderedDict[tuple[int, datetime.datetime], LintBudget] = OrderedDict()
_budgets_lock = threading.Lock()


def _budget(session: tuple[int, datetime.datetime]) -> LintBudget:
    """The capture session's budget, kept between its uploads (a new one each upload would start
    full, and count as one more session in the process's share for a while). Known by its id and
    start (an id alone may come again: a test database's rolled back)."""
    with _budgets_lock:
        budget = _budgets.pop(session, None) or LintBudget(shared=PROCESS_SHARE)
        _budgets[session] = budget
        while len(_budgets) > LINT_BUDGETS:
            _budgets.popitem(last=False)
        return budget


class _Facts:
    """What the records tell about the session: the host (its initialize request), the server
    (its answer), the lists the host was given, dropped frames, the end."""

    def __init__(self, capture: Capture, session: Session) -> None:
        self.capture, self.session = capture, session
        if not isinstance(session.report, dict):
            session.report = {}
        self.report: dict[str, Any] = session.report
        self.changed = False

    def record(self, tap: Tap, record: dict[str, Any]) -> None:
        kind = record["kind"]
        if kind == "frame":
            facts = {k: record[k] for k in ("http", "sse_id", "sse_event") if record.get(k) is not None}
            raw, problems = self.joined(record)
            if problems:
                facts["problems"] = problems
            event, message = tap.frame(record["dir"], raw, **facts)
            self.frame(event, message)
        elif kind == "part":
            self.part(record)
        elif kind == "http_note":  # (the HTTP capture's own: not accepted from an upload)
            tap.note("http", record["text"], http=record.get("http"))
        elif kind == "stderr":
            tap.stderr(record["text"])
        elif kind == "start":
            argv, pid, cwd = record["argv"], record["pid"], record["cwd"]
            where = f" in {cwd}" if cwd else ""
            if pid is None:  # the capture could not start the server (its `end` record says why)
                text = f"captured: the host asked for {shlex.join(argv)}{where}, which could not be started"
            else:
                text = f"captured: the host started {shlex.join(argv)} (pid {pid}){where}"
            tap.note("started", text, pid=pid, cwd=cwd)
        elif kind == "dropped":
            self.report["dropped"] = int(self.report.get("dropped") or 0) + record["count"]
            tap.note("error", f"the capture dropped {record['count']} frame(s): they are not in this transcript")
            self.changed = True
        elif kind == "end":
            code, reason = record["code"], record["reason"]
            text = f"the capture ended: {reason or 'the server exited'}" + (
                f" (exit code {code})" if code is not None else ""
            )
            tap.note("closed", text, returncode=code)
            self.capture.ended = True
            self.capture.parts.all().delete()  # (a long line the capture never finished)
            self.capture.pending_parts = {}
            self.session.status = Session.Status.ENDED
            self.session.ended_at = timezone.now()
            self.session.end_reason = storable(text)
            self.changed = True

    def part(self, record: dict[str, Any]) -> None:
        """A piece of a long line, kept (within LIMITS.line_bytes a line) until its frame."""
        data = base64.b64decode(record["b64"])
        pending = self.capture.pending_parts = dict(self.capture.pending_parts or {})
        state = pending.setdefault(record["dir"], {"bytes": 0, "cut": False})
        if state["bytes"] + len(data) > LIMITS.line_bytes:
            state["cut"] = True
            return
        state["bytes"] += len(data)
        CapturePart.objects.create(capture=self.capture, i=record["i"], dir=record["dir"], data=data)

    def joined(self, record: dict[str, Any]) -> tuple[str | bytes, list[str]]:
        """The frame's line: the parts it says came before it joined to its own piece (parts it
        does not claim were a lost line's, and go), and what the transcript should say of it."""
        own = frame_bytes(record)
        state = (self.capture.pending_parts or {}).get(record["dir"])
        claimed, problems = int(record.get("parts") or 0), list[str]()
        if not state and not claimed:
            return own, problems
        parts = CapturePart.objects.filter(capture=self.capture, dir=record["dir"])
        pieces = [bytes(data) for data in parts.order_by("i").values_list("data", flat=True)] if claimed else []
        parts.delete()
        self.capture.pending_parts = {k: v for k, v in self.capture.pending_parts.items() if k != record["dir"]}
        kept = pieces[max(0, len(pieces) - claimed) :]
        if len(kept) < claimed or (state or {}).get("cut") or record.get("cut"):
            problems.append(
                f"line longer than {LIMITS.line_bytes} bytes (or some of its parts were lost): "
                "recorded cut, the rest was skipped"
            )
        return b"".join([*kept, own.encode("utf-8", "surrogatepass") if isinstance(own, str) else own]), problems

    def frame(self, event: TranscriptEvent, message: Any) -> None:
        if not isinstance(message, dict):
            return
        method = message.get("method")
        host = self.report.setdefault("host", {})
        if event.dir == "send" and method == "initialize" and isinstance(message.get("params"), dict):
            params = message["params"]
            host.update(
                clientInfo=_bounded(params.get("clientInfo")),
                capabilities=_bounded(params.get("capabilities")),
                protocolVersion=_bounded(params.get("protocolVersion")),
                initialize_seq=event.seq,
            )
            self.changed = True
        elif event.dir == "send" and method in LIST_METHODS and "id" in message:
            lists = self.report.setdefault("list_requests", {})
            if len(lists) < 100:
                params = message.get("params")
                paged = isinstance(params, dict) and params.get("cursor") is not None
                lists[str(event.seq)] = [LIST_METHODS[method], paged]
        elif event.dir == "recv" and event.reply_to is not None and isinstance(message.get("result"), dict):
            result = message["result"]
            if event.reply_to == host.get("initialize_seq"):
                self.server_answered(result)
            asked = self.report.get("list_requests", {}).pop(str(event.reply_to), None)
            if asked:
                self.listed(asked[0], bool(asked[1]), result)

    def server_answered(self, result: dict[str, Any]) -> None:
        session = self.session
        session.server_info = storable(_bounded(result.get("serverInfo")) or {})
        session.capabilities = storable(_bounded(result.get("capabilities")) or {})
        version = result.get("protocolVersion")
        session.protocol_version = version[:40] if isinstance(version, str) else ""
        instructions = result.get("instructions")
        session.instructions = storable(instructions[:20_000]) if isinstance(instructions, str) else ""
        session.era = "legacy"
        self.changed = True

    def listed(self, name: str, paged: bool, result: dict[str, Any]) -> None:
        key = {"templates": "resourceTemplates"}.get(name, name)
        items = result.get(key)
        if not isinstance(items, list):
            return
        catalogue = dict(self.session.catalogue or {})
        before = catalogue.get(name) if paged else []
        catalogue[name] = [*(before or []), *items][:CATALOGUE_ITEMS]
        self.session.catalogue = storable(catalogue)
        self.changed = True


def _bounded(value: Any) -> Any:
    """A value the host or server declared, kept if its JSON is small enough; else a note saying so."""
    if value is None:
        return None
    try:
        text = jsontext.dumps(value)
    except (ValueError, TypeError, RecursionError):
        return {"_not_kept": "could not be encoded"}
    if len(text) > HOST_FACTS_CHARS:
        return {"_not_kept": f"{len(text)} characters of JSON, more than {HOST_FACTS_CHARS} are kept"}
    return value
