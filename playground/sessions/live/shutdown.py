"""A clean stop of the process ends its live sessions.

On SIGTERM or SIGINT (a deploy, Ctrl-C on `make run`) daphne stops Twisted's reactor, and
the asyncio loop the workers run on stops with it: their sessions stayed "connected" until
another process's heartbeat sweep, the transcript events still buffered were lost, and stdio
servers (in sessions of their own, so Ctrl-C does not reach them) were left running.

Twisted runs the "before shutdown" triggers while the loop still runs, and waits for the
Deferreds they return. Ours ends every worker of the process as a disconnect does — calls
told why, the server stopped (stdin closed, then SIGTERM, then SIGKILL), the transcript
flushed, the session marked ended with PROCESS_STOPPED — all at once, for STOP_TIMEOUT
seconds at most. A worker still at it then is left to the heartbeat sweep of another process.
"""

from __future__ import annotations

import asyncio
import logging
import sys

from .workers import WORKERS

log = logging.getLogger(__name__)

PROCESS_STOPPED = "the playground process stopped"
# A stdio server that ignores EOF but honours SIGTERM takes 4 s to stop (2 s after its stdin
# closes, 2 s after SIGTERM); most take a moment, as does the final flush. A supervisor that
# kills sooner (docker waits 10 s by default) cuts the stop short: the sweep then ends the rest.
STOP_TIMEOUT = 15.0

_installed: asyncio.AbstractEventLoop | None = None


def install() -> None:
    """Add the trigger to daphne's reactor, once per process; only when the running loop is the
    reactor's (not in tests, the CLI or a runner without Twisted). Called as workers start."""
    global _installed
    loop = asyncio.get_running_loop()
    reactor = sys.modules.get("twisted.internet.reactor")  # never import it: that installs one
    if _installed is loop or reactor is None or getattr(reactor, "_asyncioEventloop", None) is not loop:
        return
    from twisted.internet import defer

    def before_shutdown() -> defer.Deferred:
        return defer.Deferred.fromFuture(loop.create_task(stop_workers(), name="stop-session-workers"))

    reactor.addSystemEventTrigger("before", "shutdown", before_shutdown)
    _installed = loop


async def stop_workers(reason: str = PROCESS_STOPPED, timeout: float = STOP_TIMEOUT) -> None:
    """End every live worker of this process, together, waiting `timeout` seconds at most."""
    workers = list(WORKERS.values())
    if not workers:
        return
    log.warning("ending %d live session(s): %s", len(workers), reason)
    stops = [asyncio.ensure_future(worker.stop(reason)) for worker in workers]
    _, pending = await asyncio.wait(stops, timeout=timeout)
    if pending:
        log.error("%d session(s) had not ended after %s s; left to the heartbeat sweep", len(pending), timeout)
