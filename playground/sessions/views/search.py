"""The "Search sessions" page: the person's own sessions searched (transcripts/search), the newest
matches first, grouped by session, each a link to its line in the session page (`?at=SEQ`)."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from playground.transcripts import search as transcript_search

from ..fragments.lines import ARROWS
from ..transcript_window import seq_param

MAX_EVENT_ID = 2**63 - 1  # an event id is a BigAutoField


@login_required
async def search(request: HttpRequest) -> HttpResponse:
    """Async: what the background indexer has not indexed yet is indexed first, a chunk per
    call in the database thread (transcripts/search.acatch_up), never one long hold of it."""
    text = request.GET.get("q", "")
    results = await transcript_search.asearch(
        await request.auser(), text, before=seq_param(request.GET.get("before"), MAX_EVENT_ID)
    )
    groups = [(group, [(hit, ARROWS.get(hit.dir, "?")) for hit in group.hits]) for group in results.groups]
    return await sync_to_async(render)(
        request,
        "sessions/search.html",
        {"q": text[: transcript_search.MAX_QUERY], "results": results, "groups": groups},
    )
