"""The live side of a session: its worker (one asyncio task that owns the MCP connection), the
components it delegates to, the tabs' and share viewers' sockets, and the plumbing that keeps
them going (the channel layer, the throttle, the heartbeat, the sweep, the clean stop)."""
