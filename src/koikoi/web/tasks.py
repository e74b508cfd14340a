"""Stopping a service's background tasks at a server's stop, without ever waiting on them for long.

On Python 3.11, ``asyncio.wait_for`` can swallow a cancellation that comes as the awaited call finishes
(CPython gh-86296, fixed in 3.12): a ``while True`` loop cancelled inside a database call then goes on
looping, "cancelling" forever, and a stop that awaited it hung (a server kept running 20 s after SIGTERM,
with its lobby loops and the bots' keeper still going). So the loops also look at a flag, and a stop
waits at most :data:`STOP_WAIT` seconds for them, then goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["STOP_WAIT", "cancel_all"]

log = logging.getLogger("koikoi.web")

STOP_WAIT = 5.0


async def cancel_all(tasks: Iterable[asyncio.Future[Any]], what: str, timeout: float = STOP_WAIT) -> None:
    """Cancel ``tasks`` and wait for them to end, at most ``timeout`` seconds (``what`` names them in the
    log line for those that did not)."""
    tasks = [t for t in tasks if not t.done()]
    for t in tasks:
        t.cancel()
    if not tasks:
        return
    _done, pending = await asyncio.wait(tasks, timeout=timeout)
    if pending:
        log.warning("%d of %s's tasks did not end within %.0f s of the stop; going on", len(pending), what, timeout)
