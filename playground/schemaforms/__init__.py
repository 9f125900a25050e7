"""JSON Schema -> server-rendered form fields -> arguments, validated with jsonschema.

Public API (lazy imports keep `import playground.schemaforms` free of Django template loading):
`render_form(schema, *, prefix="args", values=None, errors=None) -> SafeString`,
`parse_form(schema, data, *, prefix="args") -> (arguments, errors)`,
`validate_arguments(schema, arguments) -> [{path, pointer, message, keyword}]` (bounded, in a child
process: call it from a thread, never the event loop; see `sandbox`),
`avalidate_arguments(schema, arguments)` (the same, awaited from the event loop),
`form_too_large(data, prefix) -> reason | None`.
"""
from __future__ import annotations

from typing import Any

__all__ = ["render_form", "parse_form", "validate_arguments", "avalidate_arguments", "form_too_large"]


def render_form(*args: Any, **kwargs: Any):
    from .render import render_form as impl

    return impl(*args, **kwargs)


def parse_form(*args: Any, **kwargs: Any):
    from .parse import parse_form as impl

    return impl(*args, **kwargs)


def form_too_large(*args: Any, **kwargs: Any):
    from .parse import form_too_large as impl

    return impl(*args, **kwargs)


def validate_arguments(*args: Any, **kwargs: Any):
    from .sandbox import validate_arguments as impl

    return impl(*args, **kwargs)


async def avalidate_arguments(*args: Any, **kwargs: Any):
    from .sandbox import avalidate_arguments as impl

    return await impl(*args, **kwargs)
