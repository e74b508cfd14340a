"""Group commit: the moves of many games stored in one transaction, each acknowledged only once that
transaction has committed.

A move is stored before anyone is told of it (acknowledged = stored). Stored one transaction each, a
busy process spends much of its time beginning and committing: on PostgreSQL each commit also waits
for its write-ahead log to reach the disk. Here a move that comes while earlier ones are being written
waits for them, and then goes with every other move that came meanwhile, in one transaction
(:meth:`Store.add_actions`): under load a commit carries many moves, and with no load a move goes at
once, alone. Where one move of a batch cannot be stored (another process stored that move first), the
store writes each on its own, and only that one fails.
"""

from __future__ import annotations

import asyncio

from .database import Database, Unavailable
from .store import Move, Store, StoreError

__all__ = ["MoveWriter", "MOST_AT_ONCE"]

# At most this many moves a transaction: a transaction that waits on one stuck row holds no more.
MOST_AT_ONCE = 64


class MoveWriter:
    """Stores moves for the event loop, batched; use from the event loop only."""

    def __init__(self, db: Database, store: Store, *, batches: int | None = None, most: int = MOST_AT_ONCE) -> None:
        self.db = db
        self.store = store
        self.most = most
        # Batches being written at once: SQLite has one writer; PostgreSQL one per database thread.
        self.batches = batches or db.threads
        self._waiting: list[tuple[Move, asyncio.Future[None]]] = []
        self._writing = 0
        self.commits = 0  # batches written, and the moves they stored (for /api/health: moves per commit)
        self.moves = 0

    def write(self, move: Move) -> asyncio.Future[None]:
        """Store ``move`` with the next batch: a future that is done once it is stored (or not: then the
        :class:`StoreError` that says why, or the database's error). :class:`Unavailable` at once, and
        nothing written, while the database is known to be away (as :meth:`Database.submit`)."""
        self.db.check()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((move, future))
        if self._writing < self.batches:
            self._next()
        return future

    def _next(self) -> None:
        batch, self._waiting = self._waiting[: self.most], self._waiting[self.most :]
        try:
            call = self.db.submit(self.store.add_actions, [m for m, _ in batch])
        except Unavailable as e:  # nothing of it was written
            for _, f in batch:
                if not f.done():
                    f.set_exception(e)
            return
        self._writing += 1
        call.add_done_callback(lambda done: self._written(batch, done))

    def _written(
        self, batch: list[tuple[Move, asyncio.Future[None]]], done: asyncio.Future[list[StoreError | None]]
    ) -> None:
        self._writing -= 1
        if done.cancelled():  # the server stops
            for _, f in batch:
                f.cancel()
        elif (e := done.exception()) is not None:
            for _, f in batch:
                if not f.done():
                    f.set_exception(e)
        else:
            outcomes = done.result()
            self.commits += 1
            self.moves += outcomes.count(None)
            for (_, f), problem in zip(batch, outcomes, strict=True):
                if f.done():
                    continue
                if problem is None:
                    f.set_result(None)
                else:
                    f.set_exception(problem)
        while self._waiting and self._writing < self.batches:
            self._next()
