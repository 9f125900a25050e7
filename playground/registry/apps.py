from django.apps import AppConfig


class RegistryConfig(AppConfig):
    """Registered MCP servers: CRUD and the mcpServers JSON import/export hosts use."""

    name = "playground.registry"
    label = "registry"
