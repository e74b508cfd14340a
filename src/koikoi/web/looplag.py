"""How late the event loop runs: a timer every 50 ms, and how much later than that it fired.

Every game of a process is served by one event loop, so anything that holds it (a slow step of ours, a
burst of connections, the interpreter's lock held by another thread) delays every player at once. The
figures over the last minute are in ``/api/health`` (``loop``), for the operator and the load benchmark.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

__all__ = ["LoopLag"]

TICK = 0.05
WINDOW = 60.0


class LoopLag:
    """Measures the loop's lateness while :meth:`run` runs (start it as a task of the loop)."""

    def __init__(self) -> None:
        self._late: deque[tuple[float, float]] = deque(maxlen=int(WINDOW / TICK) + 1)  # (when, seconds late)

    async def run(self) -> None:
        while True:
            t = time.monotonic()
            await asyncio.sleep(TICK)
            now = time.monotonic()
            self._late.append((now, max(0.0, now - t - TICK)))

    def state(self) -> dict[str, Any]:
        """``{"late_ms_p99", "late_ms_max"}`` over the last minute (0 before the first tick)."""
        since = time.monotonic() - WINDOW
        late = sorted(x for when, x in self._late if when >= since)
        if not late:
            return {"late_ms_p99": 0.0, "late_ms_max": 0.0}
        return {
            "late_ms_p99": round(late[min(len(late) - 1, int(0.99 * len(late)))] * 1000, 1),
            "late_ms_max": round(late[-1] * 1000, 1),
        }
