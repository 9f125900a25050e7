"""Who may see a saved session: its owner (Session.visible_to). One helper for every view
that takes a session's id from the URL, so none can forget the check."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404

from .models import Session


def own_session(user: Any, pk: int) -> Session:
    """The session `pk` if `user` may see it; 404 otherwise (another user's session does not exist)."""
    session = get_object_or_404(Session, pk=pk)
    if not session.visible_to(user):
        raise Http404
    return session
