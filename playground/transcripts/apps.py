from django.apps import AppConfig


class TranscriptsConfig(AppConfig):
    """Saved sessions and their events: the truth a live page, a share link and an export read."""

    name = "playground.transcripts"
    label = "transcripts"
