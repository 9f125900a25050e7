from django.apps import AppConfig


class CaptureConfig(AppConfig):
    """Watch a real host: capture tokens, the upload a capture posts its records to, and the
    entries a host's config takes (the capture itself is `manage.py mcp --capture`)."""

    name = "playground.capture"
    label = "capture"
