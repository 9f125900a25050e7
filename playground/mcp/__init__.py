"""A small asyncio MCP client core: JSON-RPC, transports, the session and the tap.

No Django import here: the CLI, the session worker, the conformance adapter and the
tests all use this package directly.
"""
