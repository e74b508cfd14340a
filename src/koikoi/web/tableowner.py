"""What the jobs of a table (:mod:`.mover`, :mod:`.gameclocks`, :mod:`.finisher`, :mod:`.rematches`,
:mod:`.attendance`, :mod:`.computer`) ask of their owner, :class:`koikoi.web.games.GameService`: the
games in memory, the database, and each other's work, reached through the owner so that no unit imports
another or the owner (the type checker holds the owner to this).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from .database import Database
from .errors import GameError
from .fanout import Listener
from .limits import Limits
from .livegame import LiveGame
from .movewriter import MoveWriter
from .store import Store, StoredSeat
from .tablestore import TableStore
from .workers import ThinkPool

__all__ = ["TableOwner"]


class TableOwner(Protocol):
    store: Store
    table: TableStore
    limits: Limits
    db: Database
    clock_db: Database  # the clock's own thread on PostgreSQL (the same as db on SQLite)
    writer: MoveWriter
    pool: ThinkPool
    live: dict[str, LiveGame]
    listener: Listener | None
    process_id: str
    ai_options: dict[str, dict[str, Any]]
    ai_delay: float
    closing: bool
    # for /api/health
    actions: int
    flags: int
    thinking: int
    computer_moves: int

    # -- the games in memory
    async def seat_game(
        self, token: Any, game_id: Any = None, *, hello: bool = False
    ) -> tuple[StoredSeat, LiveGame]: ...

    async def load(self, game_id: str, *, hello: bool = False) -> LiveGame: ...

    async def sync(self, game: LiveGame) -> bool: ...

    def refresh_soon(self, game: LiveGame) -> None: ...

    async def broken(self, game_id: str, reason: str) -> GameError: ...

    def evict(self, *, keep: str | None = None, now: float | None = None) -> int: ...

    def spawn(self, work: Awaitable[Any]) -> None: ...

    def view(self, game: LiveGame, seat: int) -> dict[str, Any]: ...

    def spectator_view(self, game: LiveGame) -> dict[str, Any]: ...

    # -- the units' work, for each other
    async def broadcast(self, game: LiveGame) -> None: ...

    async def commit(self, game: LiveGame, seat: int, action: int) -> None: ...

    def check_turn(self, game: LiveGame, seat: int, seq: int) -> None: ...

    def arm(self, game: LiveGame) -> None: ...

    async def on_deadline(self, game: LiveGame) -> None: ...

    def schedule_ai(self, game: LiveGame) -> None: ...

    def ended(self, game: LiveGame, ending: str, winner: int | None, *, flagged: float | None = None) -> None: ...

    def rated_soon(self, game: LiveGame) -> None: ...
