"""The process's channel layer (settings.CHANNEL_LAYERS["default"]), for the code that sends on it:
the worker, the views that reach a worker, the share sockets."""

from __future__ import annotations

from channels.layers import BaseChannelLayer, get_channel_layer
from django.core.exceptions import ImproperlyConfigured


def channel_layer() -> BaseChannelLayer:
    """Channels' `get_channel_layer()`, which says None when the setting names no default layer."""
    layer = get_channel_layer()
    if layer is None:
        raise ImproperlyConfigured("settings.CHANNEL_LAYERS has no default layer")
    return layer
