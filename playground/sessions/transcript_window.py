"""Which of a session's events a page shows: the latest REPLAY_WINDOW, or as many around one
event (a line opened from a search, `?at=SEQ`), older than the latest or not; and the chunks
the page loads as the person scrolls or opens a filter's match (`transcript_chunk`: before, after
or around an event), so every line of a session of any length can be reached from the page.

The page and its websocket show the same window: the page's first render, and the replay on
every (re)connect (the page tells the consumer `?around=SEQ`), so a reconnect does not swap an
old window for the latest lines. The page's first connect also says what its lines hold
(`?shown=`, the window's `mark`): while no event has come since, the replay leaves them as they
are. Live lines follow a window only when it reaches the latest event; otherwise they would read
as coming right after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from playground.transcripts.models import Event

REPLAY_WINDOW = 1000  # events sent on (re)connect; older ones the page loads as it is scrolled
CHUNK = 250  # events a chunk has unless the page asks for another count (at most REPLAY_WINDOW)


@dataclass(frozen=True)
class TranscriptWindow:
    session_id: int
    rows: list[dict[str, Any]]  # the events' data, oldest first
    total: int  # events in the session
    around: int | None  # the event it is centred on (None: the latest events)
    latest: bool  # it reaches the session's last event: live lines may follow

    @property
    def first_seq(self) -> int | None:
        return self.rows[0]["seq"] if self.rows else None

    @property
    def last_seq(self) -> int | None:
        return self.rows[-1]["seq"] if self.rows else None

    @property
    def mark(self) -> str:
        """What its lines hold, as a page tells its socket (`?shown=`): the session's count of
        events and the last line's number. Events are only added, each with the next number:
        the same mark (and `around`) is the same window."""
        return f"{self.total}.{self.last_seq or 0}"

    @property
    def socket_query(self) -> str:
        """The query its page's socket opens with: what its lines hold (`shown`, read back by
        `shown_param`), and the window it shows (`around`)."""
        return f"?shown={self.mark}" + (f"&around={self.around}" if self.around else "")


def shown_param(query: dict[str, list[str]]) -> str:
    """A socket's `?shown=` (parse_qs of its query string): the mark of the lines its page holds."""
    return (query.get("shown") or [""])[0][:40]


def seq_param(value: Any, maximum: int = 2**31 - 1) -> int | None:
    """A sequence number from a query string (`?at=`, `?around=`; an event id, `?before=`, with
    its own `maximum`), or None."""
    try:
        seq = int(str(value))
    except ValueError:
        return None
    return seq if 0 < seq <= maximum else None


def transcript_window(session_id: int, around: int | None = None, size: int = REPLAY_WINDOW) -> TranscriptWindow:
    """The latest `size` events, or the `size` events around `around` (`transcript_chunk`'s: half
    before it, with it, the rest after; more on one side when the other has fewer: near the end
    the window shows the latest events and says so), and the session's count of events."""
    chunk = transcript_chunk(session_id, around=around, limit=size)
    total = Event.objects.filter(session_id=session_id).count()
    return TranscriptWindow(session_id, chunk.rows, total, around, latest=not chunk.more_after)


@dataclass(frozen=True)
class TranscriptChunk:
    rows: list[dict[str, Any]]  # oldest first
    more_before: bool  # the session has events before the first row
    more_after: bool  # ... and after the last (False: the chunk reaches the latest event)


def transcript_chunk(
    session_id: int,
    *,
    before: int | None = None,
    after: int | None = None,
    around: int | None = None,
    limit: int = CHUNK,
) -> TranscriptChunk:
    """`limit` events: the last before event `before`, the first after `after`, those around
    `around` (half before it, with it, the rest after; fewer on one side, more on the other), or
    the latest. Each is a range read of the unique (session, seq) index (around: one each side,
    a second after when there are few before), plus a look for one event beyond each end."""
    events = Event.objects.filter(session_id=session_id)
    if around is not None:
        return _around(events, around, limit)
    if after is not None:
        rows = list(events.filter(seq__gt=after).order_by("seq").values_list("data", flat=True)[: limit + 1])
        more_before = events.filter(seq__lte=after).exists()
        return TranscriptChunk(rows[:limit], more_before, len(rows) > limit)
    newest = events.filter(seq__lt=before) if before is not None else events
    rows = list(newest.order_by("-seq").values_list("data", flat=True)[: limit + 1])
    more_after = before is not None and events.filter(seq__gte=before).exists()
    return TranscriptChunk(rows[:limit][::-1], len(rows) > limit, more_after)


def _around(events: QuerySet[Event], around: int, limit: int) -> TranscriptChunk:
    """Half of `limit` before `around` (with it), the rest after; fewer on one side, more on the
    other. Rows are read only as far as they may be kept (and one beyond, to tell there are more)."""
    later_q = events.filter(seq__gt=around).order_by("seq").values_list("data", flat=True)
    later = list(later_q[: limit // 2 + 1])
    room_before = limit - min(len(later), limit // 2)
    earlier = list(events.filter(seq__lte=around).order_by("-seq").values_list("data", flat=True)[: room_before + 1])
    keep_before = min(len(earlier), room_before)
    if len(later) > limit // 2 and keep_before < room_before:  # few before: more after
        later = list(later_q[: limit - keep_before + 1])
    keep_after = min(len(later), limit - keep_before)
    rows = earlier[:keep_before][::-1] + later[:keep_after]
    return TranscriptChunk(rows, len(earlier) > keep_before, len(later) > keep_after)
