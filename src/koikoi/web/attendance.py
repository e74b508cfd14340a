"""Who is at the table, for games with a real-time clock (a claim of victory needs it): a seat's first
socket on a process notes its player there, its last one notes them gone (and whether the tab was
closed); both seats are told.
"""

from __future__ import annotations

import logging
import time

from .livegame import LiveGame
from .store import StoredSeat
from .tableowner import TableOwner

__all__ = ["Attendance"]

log = logging.getLogger("koikoi.web")


class Attendance:
    """Who is at the tables of one :class:`~koikoi.web.games.GameService` (games with a real-time clock)."""

    def __init__(self, service: TableOwner) -> None:
        self.service = service

    async def arrive(self, seat: StoredSeat, game: LiveGame) -> None:
        """The seat's first socket on this process opened: they are at the table (clocked games)."""
        if game.clock is None or not game.clock.control.real_time or game.status != "playing":
            return
        await self.service.db(self.service.table.arrive, seat.token, self.service.process_id)
        await self._changed(game)

    async def depart(self, seat: StoredSeat, game: LiveGame, *, closed: bool) -> None:
        """The seat's last socket on this process closed (``closed``: the tab was closed)."""
        if game.clock is None or not game.clock.control.real_time or game.status != "playing":
            return
        await self.service.db(
            self.service.table.leave, seat.token, self.service.process_id, closed=closed, now=time.time()
        )
        await self._changed(game)

    async def _changed(self, game: LiveGame) -> None:
        game.presence = await self.service.db(self.service.table.presence_of, game.stored.id, time.time())
        await self.service.broadcast(game)
