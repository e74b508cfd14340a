"""Who may watch a game, and how many do, in the database (the tables ``private_games`` and ``watchers`` of
:mod:`koikoi.web.store`); every method runs on a database thread (:class:`~koikoi.web.database.Database`).

A game is private when it was made so (a casual game only): nobody watches it. The spectators of a game
may be spread over several server processes on one PostgreSQL database; each process writes how many it
holds (its row in ``watchers``) when that changes and every :data:`KEEP_EVERY` seconds, and the count of a
game is the sum of the rows written in the last :data:`FRESH` seconds (a process that died stops counting
once its row is that old, and its row is removed later).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite

from .schema import private_games, watchers
from .store import CHAT_CHANNEL, Store

__all__ = ["FRESH", "KEEP_EVERY", "WatchStore"]

KEEP_EVERY = 10.0  # seconds between a process's rewrites of its rows
FRESH = timedelta(seconds=35)  # a row older than this is a dead process's: not counted
_FORGET = timedelta(minutes=10)  # ... and removed once it is this old


class WatchStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def is_private(self, game_id: str) -> bool:
        q = select(private_games.c.game_id).where(private_games.c.game_id == game_id)
        with self.engine.connect() as conn:
            return conn.execute(q).first() is not None

    def _upsert(self, conn: Any, game_id: str, process: str, spectators: int, now: datetime) -> None:
        dialect = sqlite if self.store.is_sqlite else postgresql
        row = {"game_id": game_id, "process": process, "spectators": spectators, "seen": now}
        conn.execute(
            dialect.insert(watchers)
            .values(**row)
            .on_conflict_do_update(index_elements=["game_id", "process"], set_={"spectators": spectators, "seen": now})
        )

    def set_count(self, game_id: str, process: str, spectators: int) -> None:
        """This process holds ``spectators`` on the game now (0 removes its row); announced on PostgreSQL."""
        now = datetime.now(UTC)
        with self.engine.begin() as conn:
            if spectators <= 0:
                conn.execute(delete(watchers).where((watchers.c.game_id == game_id) & (watchers.c.process == process)))
            else:
                self._upsert(conn, game_id, process, spectators, now)
            if not self.store.is_sqlite:
                conn.execute(select(func.pg_notify(CHAT_CHANNEL, f"watch {game_id}")))

    def keep(self, process: str, counts: dict[str, int]) -> None:
        """This process is alive and holds ``counts`` spectators on these games: its rows say so (and only
        these); rows of processes gone for long are removed."""
        now = datetime.now(UTC)
        with self.engine.begin() as conn:
            mine = watchers.c.process == process
            if counts:
                conn.execute(delete(watchers).where(mine & watchers.c.game_id.not_in(list(counts))))
            else:
                conn.execute(delete(watchers).where(mine))
            for game_id, n in counts.items():
                self._upsert(conn, game_id, process, n, now)
            conn.execute(delete(watchers).where(watchers.c.seen < now - _FORGET))

    def count(self, game_id: str) -> int:
        """The spectators of a game on every process that is alive."""
        since = datetime.now(UTC) - FRESH
        with self.engine.connect() as conn:
            n = conn.execute(
                select(func.coalesce(func.sum(watchers.c.spectators), 0)).where(
                    (watchers.c.game_id == game_id) & (watchers.c.seen >= since)
                )
            ).scalar_one()
        return max(0, int(n))

    def counts(self, game_ids: list[str]) -> dict[str, int]:
        """The spectators of each of ``game_ids`` on every process that is alive (games none watch: 0)."""
        since = datetime.now(UTC) - FRESH
        out = dict.fromkeys(game_ids, 0)
        with self.engine.connect() as conn:
            for i in range(0, len(game_ids), 500):
                chunk = game_ids[i : i + 500]
                for r in conn.execute(
                    select(watchers.c.game_id, func.sum(watchers.c.spectators))
                    .where(watchers.c.game_id.in_(chunk) & (watchers.c.seen >= since))
                    .group_by(watchers.c.game_id)
                ).all():
                    out[r[0]] = max(0, int(r[1] or 0))
        return out
