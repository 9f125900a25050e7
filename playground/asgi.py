"""ASGI entry point: HTTP through Django, websockets through Channels (Host- and Origin-checked, authenticated);
requests to the MCP Apps sandbox origin only ever get the sandbox page (core/sandbox.py)."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs settings loaded)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from playground.chat.routing import websocket_urlpatterns as chat_websockets  # noqa: E402
from playground.core.sandbox import SandboxHost  # noqa: E402
from playground.security import WebsocketOriginValidator  # noqa: E402
from playground.sessions.routing import websocket_urlpatterns  # noqa: E402

application = SandboxHost(
    ProtocolTypeRouter(
        {
            "http": django_asgi_app,
            # (types-channels want routes typed as its own URLPattern subclass, which path() never returns)
            "websocket": WebsocketOriginValidator(
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns + chat_websockets))  # type: ignore[arg-type]
            ),
        }
    )
)


# What a session's first call needs is loaded now, not on that call (jsonschema took ~0.3 s),
# and frozen with the rest below.
import playground.schema  # noqa: E402
import playground.schemaforms.parse  # noqa: E402,F401

# The collector: what the server loaded (Django, the app, their modules) is frozen out of its
# scans, and the youngest generation is collected every 20,000 allocations rather than 2,000.
# A flood keeps thousands of parsed messages alive between saves; with the defaults the
# collector took ~9% of the process's time (bench/: flood +10-15% with this, relay unchanged).
gc.freeze()
gc.set_threshold(20_000, 20, 20)
