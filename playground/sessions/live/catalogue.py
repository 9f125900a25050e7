"""The server's lists — tools, resources, resource templates, prompts — as a live session shows
them: every page of each list the server declared a capability for, fetched, saved on the
session, shown to every tab, then handed to the features (`on_catalogue`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from channels.db import database_sync_to_async

from playground.mcp.client import RequestTimeout
from playground.mcp.jsonrpc import JsonRpcError
from playground.mcp.transports.base import TransportError
from playground.transcripts.models import Session
from playground.transcripts.storable import storable

from ..protocol import Catalogue, Command

if TYPE_CHECKING:
    from .worker import SessionWorker


class CatalogueRefresh:
    """Fetches a session's lists again (`refresh`), into `session.catalogue`."""

    def __init__(self, session: SessionWorker) -> None:
        self.session = session
        self._waiting = False
        self._show = False  # a refresh not announced by the server asked: the next one shows what it finds
        self._lock = asyncio.Lock()

    async def command(self, message: Command) -> None:
        """The page's Refresh (`refresh`): in a task of the session's, not in the command loop."""
        self.session.spawn("refresh", self.session.refresh_catalogue())

    async def refresh(self, announced: bool = False) -> None:
        """Refreshes run one at a time, and at most one waits: it will see every change announced
        so far. (Concurrent ones tripled the traffic on servers that announce list_changed at
        start, and the slowest — possibly stale — one overwrote the catalogue.)

        `announced`: the server said a list changed (`list_changed`). When the lists are then the
        same, nothing is saved, shown or handed to the features: every tab's catalogue would be
        swapped for the same one (its search box emptied as the person types), the features would
        redo their work (a server-everything announces three times as it starts). The session's
        start and the page's Refresh always show what they find."""
        if not announced:
            self._show = True
        if self._waiting:
            return
        self._waiting = True
        async with self._lock:
            self._waiting = False
            show, self._show = self._show, False
            await self._fetch(show)

    async def _fetch(self, show: bool) -> None:
        """Every list, all pages, for the capabilities the server declared; shown if `show` or changed."""
        session = self.session
        client = session.client
        if client is None:
            return
        caps = client.server_capabilities or {}
        catalogue: Catalogue = {"tools": [], "resources": [], "templates": [], "prompts": [], "errors": {}}
        for key, cap, fetch in (
            ("tools", "tools", client.list_tools),
            ("resources", "resources", client.list_resources),
            ("templates", "resources", client.list_resource_templates),
            ("prompts", "prompts", client.list_prompts),
        ):
            if cap not in caps:
                continue
            try:
                catalogue[key] = await fetch()  # type: ignore[literal-required]
            except (JsonRpcError, RequestTimeout, TransportError) as exc:
                catalogue["errors"][key] = str(exc)
        # Legacy per-resource subscriptions (modern ones go through subscriptions/listen).
        catalogue["subscribe"] = client.era == "legacy" and bool((caps.get("resources") or {}).get("subscribe"))
        if not show and catalogue == session.catalogue:
            return
        session.catalogue = catalogue
        await database_sync_to_async(
            lambda: Session.objects.filter(pk=session.session_id).update(catalogue=storable(catalogue))
        )()
        await session.audience.broadcast({"type": "session.catalogue", "catalogue": catalogue})
        session.features.catalogue_changed()
