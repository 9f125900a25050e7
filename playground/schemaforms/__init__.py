"""JSON Schema -> server-rendered form fields -> arguments: the Django side of the tool forms.

The field tree and the validation they are built on are Django-free, in `playground.schema`
(`validate_arguments` / `avalidate_arguments` check the arguments a form gives).

Public API (lazy imports keep `import playground.schemaforms` free of Django template loading):
`render_form(schema, *, prefix="args", values=None, errors=None) -> SafeString`,
`parse_form(schema, data, *, prefix="args") -> (arguments, errors)`,
`form_too_large(data, prefix) -> reason | None`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["render_form", "parse_form", "form_too_large"]


def render_form(*args: Any, **kwargs: Any):
    from .render import render_form as impl

    return impl(*args, **kwargs)


def parse_form(*args: Any, **kwargs: Any):
    from .parse import parse_form as impl

    return impl(*args, **kwargs)


def form_too_large(*args: Any, **kwargs: Any):
    from .parse import form_too_large as impl

    return impl(*args, **kwargs)
