from django.apps import AppConfig


class SchemaformsConfig(AppConfig):
    """JSON Schema -> form fields -> arguments, validated with jsonschema."""

    name = "playground.schemaforms"
    label = "schemaforms"
