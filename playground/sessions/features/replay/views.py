"""The Differences' ignore rules (the replay feature's own page, `Replay.get_urls`): saved on the
replayed server, and the rows compared again from the saved responses, off the database thread."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from playground.channel_layer import channel_layer
from playground.mcp.replay import diff
from playground.registry.models import Server
from playground.transcripts import replays
from playground.transcripts.models import Session

from ...http import computed, owned
from .region import region_html

READ_BATCH = 4  # saved responses read in one database call (each may be a megabyte)


async def _response_data(session_id: int, seqs: list[int]) -> dict[int, Any]:
    data: dict[int, Any] = {}
    for i in range(0, len(seqs), READ_BATCH):
        data |= await sync_to_async(replays.response_data)(session_id, seqs[i : i + READ_BATCH])
    return data


async def _compare_again(session: Session, rules: list[str]) -> dict[str, Any]:
    """`replays.compared_again`, its rows read a few at a time and the comparison (the two
    sessions' responses, diffed) made in a worker thread: not in the database thread every
    live session's saves wait on."""
    source = await sync_to_async(replays.source_of)(session)
    old: dict[int, Any] = {}
    new: dict[int, Any] = {}
    if source is not None:  # (deleted: nothing is compared again)
        old_seqs, new_seqs = replays.responses_to_read(session)
        old, new = await _response_data(source.pk, old_seqs), await _response_data(session.pk, new_seqs)
    report = await computed(replays.compared_again, session, source, rules, old, new)
    await sync_to_async(replays.save_report)(session.pk, report)
    return report


def _save_rules(server_id: int, rules: list[str]) -> None:
    server = Server.objects.filter(pk=server_id).first()
    if server is not None:
        server.replay_ignore = rules
        server.save(update_fields=["replay_ignore", "updated"])


@login_required
@require_POST
async def differences_ignore(request: HttpRequest, pk: int) -> HttpResponse:
    """Save the ignore rules on the replayed server and compare the rows again: the region."""
    session = await owned(request, pk)
    if session.kind != Session.Kind.REPLAY:
        raise Http404("not a replay")
    text = str(request.POST.get("ignore") or "")
    error = ""
    try:
        rules = diff.clean_rules(text.splitlines())
    except diff.RuleError as exc:
        error, rules = str(exc), None
    report = session.report or {}
    if rules is not None:
        if session.server_id is not None:
            await sync_to_async(_save_rules)(session.server_id, rules)
        report = await _compare_again(session, rules)
        if session.worker_channel:  # a live replay: its tabs show the new comparison too
            await channel_layer().send(session.worker_channel, {"command": "replay_compared", "report": report})

    def region() -> str:
        return region_html(
            session.owner_redactor().obj(report),
            session_id=session.pk,
            owner=True,
            live=False,
            error=error,
            rules_text=text if error else None,
        )

    return HttpResponse(await computed(region))
