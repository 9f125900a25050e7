"""The transcript beyond the page's window, for the owner's session page and a share page alike:
chunks of lines by event seq (`lines/?before=SEQ`, `?after=SEQ`, `?around=SEQ`, `&limit=N`; none:
the latest) as the page is scrolled, and the filter's matches over the whole session (`find/?q=`),
each opened in place with `?around=` (a share's filter indexes the owner's backlog first at most
every few seconds: search.SHARE_CATCH_UPS). Who may read is checked as the pages check it (the owner;
a share link's token, its session only, masked as its page is); lines are rendered by the code
that renders the page's (fragments/lines.py). Async: the rows are read in the database thread
(short range reads of the (session, seq) index), rendered and masked outside it (http.computed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse

from playground.mcp.secrets import Redactor
from playground.transcripts import search as transcript_search
from playground.transcripts.models import Session

from ..fragments.lines import ARROWS, bounded_lines
from ..http import computed, owned, shared
from ..transcript_window import CHUNK, REPLAY_WINDOW, seq_param, transcript_chunk
from .search import MAX_EVENT_ID


@login_required
async def owner_lines(request: HttpRequest, pk: int) -> JsonResponse:
    session = await owned(request, pk)
    return await _lines(request, session, session.owner_redactor(), owner=True)


async def share_lines(request: HttpRequest, token: str) -> JsonResponse:
    session, redact = await sync_to_async(shared)(token)
    return await _lines(request, session, redact, owner=False)


@login_required
async def owner_find(request: HttpRequest, pk: int) -> JsonResponse:
    session = await owned(request, pk)
    return await _find(request, session, None)


async def share_find(request: HttpRequest, token: str) -> JsonResponse:
    session, redact = await sync_to_async(shared)(token)
    return await _find(request, session, redact, catch_up=transcript_search.SHARE_CATCH_UPS.due(token))


async def _lines(request: HttpRequest, session: Session, redact: Redactor, *, owner: bool) -> JsonResponse:
    """{html, first, last, more_before, more_after}: the lines, oldest first; `first`/`last` are
    their seqs (null: none); `more_*` whether the session has events beyond them."""
    query = request.GET
    before, after, around = (seq_param(query.get(key)) for key in ("before", "after", "around"))
    limit = min(seq_param(query.get("limit")) or CHUNK, REPLAY_WINDOW)
    chunk = await sync_to_async(transcript_chunk)(session.pk, before=before, after=after, around=around, limit=limit)
    # Scrolling up, the rows nearest the page are the last ones: a cut (too many characters) drops
    # the oldest; around an event, the cut keeps that event and what is nearest it.
    from_end = before is not None or (after is None and around is None)
    centre = (
        None
        if around is None
        else next((i for i, r in enumerate(chunk.rows) if r["seq"] >= around), len(chunk.rows) - 1)
    )
    html, start, stop = await computed(_render, chunk.rows, redact, owner, from_end, centre)
    kept = chunk.rows[start:stop]
    return JsonResponse(
        {
            "html": html,
            "first": kept[0]["seq"] if kept else None,
            "last": kept[-1]["seq"] if kept else None,
            "more_before": chunk.more_before or start > 0,
            "more_after": chunk.more_after or stop < len(chunk.rows),
        }
    )


def _render(
    rows: Sequence[Mapping[str, Any]], redact: Redactor, owner: bool, from_end: bool, centre: int | None
) -> tuple[str, int, int]:
    return bounded_lines(rows, owner, from_end=from_end, centre=centre, prepare=redact.obj)


async def _find(
    request: HttpRequest, session: Session, redact: Redactor | None, *, catch_up: bool = True
) -> JsonResponse:
    """{hits: [{seq, dir, arrow, label, excerpt}], more_before, pending, available}: the session's
    events matching `q`, the newest first, a page at a time (`before`: an event id from
    `more_before`). Each excerpt is HTML, escaped, its matches in <mark> (transcripts/search)."""
    before = seq_param(request.GET.get("before"), MAX_EVENT_ID)
    results = await transcript_search.asearch_session(
        session, request.GET.get("q", ""), before, redact, catch_up=catch_up
    )
    hits = [hit for group in results.groups for hit in group.hits]
    return JsonResponse(
        {
            "hits": [
                {
                    "seq": hit.seq,
                    "dir": hit.dir,
                    "arrow": ARROWS.get(hit.dir, "?"),
                    "label": hit.label,
                    "excerpt": str(hit.excerpt),
                }
                for hit in hits
            ],
            "more_before": results.more_before,
            "pending": results.pending > 0,
            "available": results.available,
        }
    )
