from django.apps import AppConfig


class SessionsConfig(AppConfig):
    """The live side: the worker that owns an MCP connection and the websocket consumer."""

    name = "playground.sessions"
    label = "live_sessions"
