from django.apps import AppConfig


class SchemaformsConfig(AppConfig):
    """JSON Schema -> form fields -> arguments: the tool forms (the schema work itself: playground.schema)."""

    name = "playground.schemaforms"
    label = "schemaforms"
