"""Finished games written out: their records and replays, worked out once in a worker and kept.

A hundred-hand game's replay is a megabyte of JSON and a fifth of a second of pure Python. Built on the
event loop at every request, four clients asking for it in a loop slowed every game on the server; so
it is built in the records' worker process (:meth:`~koikoi.web.workers.ThinkPool.game_record`), once
per game however many ask at the same time, and kept in memory up to ``max_bytes`` (the least recently
asked for go first). A finished game never changes, so what is kept never goes stale.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

from .workers import ThinkPool

__all__ = ["Replays"]


class Replays:
    """Records and replays of finished games by game id: ``await replays.get(game_id, make_record)``."""

    def __init__(self, pool: ThinkPool, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.pool = pool
        self.max_bytes = max_bytes
        self._kept: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._bytes = 0
        self._building: dict[str, asyncio.Future[tuple[str, str]]] = {}

    def __len__(self) -> int:
        return len(self._kept)

    async def get(self, game_id: str, record: Any) -> tuple[str, str]:
        """(record JSON, replay JSON) of the finished game ``game_id``, whose
        :class:`~koikoi.records.GameRecord` ``record()`` returns (called only when it must be built)."""
        kept = self._kept.get(game_id)
        if kept is not None:
            self._kept.move_to_end(game_id)
            return kept
        building = self._building.get(game_id)
        if building is None:
            building = asyncio.get_running_loop().create_task(self._build(game_id, record()))
            self._building[game_id] = building
            building.add_done_callback(lambda _f: self._building.pop(game_id, None))
        return await asyncio.shield(building)

    async def _build(self, game_id: str, record: Any) -> tuple[str, str]:
        out = await self.pool.game_record(record)
        size = len(out[0]) + len(out[1])
        if size <= self.max_bytes:
            self._kept[game_id] = out
            self._bytes += size
            while self._bytes > self.max_bytes:
                _gid, (a, b) = self._kept.popitem(last=False)
                self._bytes -= len(a) + len(b)
        return out
