from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Management commands around the client core: the headless CLI and the conformance adapter."""

    name = "playground.core"
    label = "core"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            login,  # noqa: F401  (records failed log-ins)
        )
