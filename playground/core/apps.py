from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Management commands around the client core: the headless CLI and the conformance adapter."""

    name = "playground.core"
    label = "core"
