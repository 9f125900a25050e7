"""What the pages of the live side share, the core's (views/) and the features' own
(`Feature.get_urls()`): the session a request may read (its owner's, a share link's), work
kept off the database thread, streamed downloads, surrogate-safe pages."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.loader import render_to_string

from playground.mcp.secrets import Redactor
from playground.transcripts.access import own_session
from playground.transcripts.models import Session, ShareLink
from playground.transcripts.storable import without_surrogates

T = TypeVar("T")


def computed(function: Callable[..., T], *args: Any) -> Awaitable[T]:
    """`function(*args)` in a worker thread: CPU work that touches no database. Under daphne a
    sync view runs in the one thread-sensitive thread the recorder's database saves use too, so
    every live session would stop saving meanwhile: a view with server-sized work is async,
    reads its rows in that thread (short queries) and computes here."""
    return sync_to_async(function, thread_sensitive=False)(*args)


async def owned(request: HttpRequest, pk: int) -> Session:
    """The user's session `pk` (404 for anyone else's), from an async view."""
    return await sync_to_async(own_session)(await request.auser(), pk)


def shared(token: str) -> tuple[Session, Redactor]:
    """The session of share link `token` and the redactor its pages mask with (404 when the link
    does not exist or was revoked)."""
    link = ShareLink.objects.select_related("session").filter(token=token, revoked_at__isnull=True).first()
    if link is None:
        raise Http404("this share link does not exist or was revoked")
    return link.session, link.session.share_redactor()


async def in_batches(chunks: Iterator[str], lines: int = 1000) -> AsyncIterator[str]:
    """A sync iterator served under ASGI a batch at a time. Django's ASGI handler turns a sync
    iterator into a list before sending a byte (`sync_to_async(list)`): a 50,000-event export
    took 1.4 s to its first byte and ~100 MB. The database cursor is advanced in Channels' one
    database thread (thread-sensitive), batch by batch."""
    take = sync_to_async(lambda: "".join(itertools.islice(chunks, lines)), thread_sensitive=True)
    while batch := await take():
        yield batch


def stream(request: HttpRequest, chunks: Iterator[str], content_type: str, filename: str) -> StreamingHttpResponse:
    """Streamed: in batches under ASGI (daphne), as is under WSGI (the test client)."""
    content = in_batches(chunks) if isinstance(request, ASGIRequest) else chunks
    response = StreamingHttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def page(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    """A page showing what a server sent (the session page, a share page), as Django's `render`
    makes it, but an unpaired surrogate in it ("\\ud800" in the server's JSON: a transcript
    line, a name) becomes U+FFFD rather than a 500 (the text is walked again only then)."""
    text = render_to_string(template, context, request)
    try:
        content = text.encode("utf-8")
    except UnicodeEncodeError:
        content = without_surrogates(text).encode("utf-8")
    return HttpResponse(content)
