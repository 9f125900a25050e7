"""The session page: the transcript's window, the catalogue, the state strip and every feature's
parts (head, panel, region, assets); the websocket (live/session_socket.py) keeps it live."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from playground.transcripts.access import own_session
from playground.transcripts.models import Session

from ..features import FEATURES
from ..fragments.lines import line
from ..fragments.regions import catalogue_html
from ..http import page
from ..live.connecting import with_hint
from ..live.durability import reap_dead_sessions
from ..protocol import Catalogue
from ..transcript_window import seq_param, transcript_window


@login_required
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    reap_dead_sessions()
    session = own_session(request.user, pk)
    # ?at=SEQ (a line opened from a search): the events around it, marked; the websocket
    # replays the same window (?around=SEQ).
    at = seq_param(request.GET.get("at"))
    window = transcript_window(session.pk, at)
    rows = session.owner_redactor().obj(window.rows)
    context: dict[str, Any] = {}
    for feature in FEATURES:
        context.update(feature.page_context(session))
    captured = session.kind == Session.Kind.CAPTURED
    # A captured session has no worker (the host is the client): only what reads the transcript.
    shown = [f for f in FEATURES if not captured or f.name in READ_ONLY_FEATURES]
    return page(
        request,
        "sessions/session.html",
        {
            **context,
            "session": session,
            "state": with_hint(session.state(), rows),
            "catalogue_html": catalogue_html(session.pk, session.catalogue or Catalogue()),
            "lines": [line(r, owner=True) for r in rows],
            "window": window,
            # (a socket opening while its lines are still that window does not send them again)
            "ws_url": f"/ws/sessions/{session.pk}/{window.socket_query}",
            "active_shares": session.shares.filter(revoked_at__isnull=True).order_by("created"),
            "keep_lines": settings.PLAYGROUND_PAGE_KEEP_LINES,
            "feature_heads": [f.head_template for f in shown if f.head_template],
            "feature_regions": [f.region_template for f in shown if f.region_template],
            **feature_assets(),
            "feature_panels": [f.panel_template for f in shown if f.panel_template],
            "captured": captured,
            "host": host_facts(session) if captured else None,
        },
    )


# The features a captured session shows: they read its transcript and send nothing to a worker.
READ_ONLY_FEATURES = frozenset({"replay", "schema_lint", "model_view", "counts", "feed"})


def host_facts(session: Session) -> dict[str, Any]:
    """What the host declared in its initialize request (a captured session's report): its
    clientInfo, protocol version and capabilities, plainly and as the raw JSON."""
    report = session.report if isinstance(session.report, dict) else {}
    found = report.get("host")
    host: dict[str, Any] = found if isinstance(found, dict) else {}
    declared = host.get("capabilities")
    capabilities: dict[str, Any] = declared if isinstance(declared, dict) else {}
    return {
        "client_info": host.get("clientInfo") if isinstance(host.get("clientInfo"), dict) else None,
        "protocol_version": host.get("protocolVersion") if isinstance(host.get("protocolVersion"), str) else "",
        "declared": [(name, name in capabilities) for name in ("elicitation", "roots", "sampling")],
        "capabilities_json": json.dumps(capabilities, indent=2, ensure_ascii=False) if host else "",
        "seen": bool(host),
        "dropped": int(report.get("dropped") or 0),
    }


def feature_assets() -> dict[str, list[str]]:
    """The stylesheets and scripts the features add to the session and share pages."""
    return {
        "feature_stylesheets": [css for f in FEATURES for css in f.stylesheets],
        "feature_scripts": [js for f in FEATURES for js in f.scripts],
    }
