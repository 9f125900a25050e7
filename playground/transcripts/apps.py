from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TranscriptsConfig(AppConfig):
    """Saved sessions and their events: the truth a live page, a share link and an export read."""

    name = "playground.transcripts"
    label = "transcripts"

    def ready(self) -> None:
        from .search import checks  # noqa: F401  (registers the system check)

        post_migrate.connect(_search_trigger, sender=self)


def _search_trigger(using: str = "default", **kwargs: object) -> None:
    """SQLite drops a table's triggers when a migration rebuilds it: the search index's comes back."""
    from django.db import connections

    from .search import sqlite

    if connections[using].vendor == "sqlite":
        sqlite.ensure_delete_trigger(connections[using])
