from django.apps import AppConfig


class SessionsConfig(AppConfig):
    """The live side: the worker that owns an MCP connection and the websocket consumer."""

    name = "playground.sessions"
    label = "live_sessions"

    def ready(self) -> None:
        # Not here directly (no queries while apps load): the first request of each process
        # sweeps sessions whose worker died with an earlier process.
        from django.core.signals import request_started

        from .live.durability import reap_once_at_start

        request_started.connect(reap_once_at_start, dispatch_uid="playground-reap-at-start")
