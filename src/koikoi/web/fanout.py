"""Moves made through one server process, told to every other process on the same PostgreSQL database.

After a move (or a friend's joining) commits, the database announces ``"<game id> <moves>"`` on
:data:`~koikoi.web.store.NOTIFY_CHANNEL` (``pg_notify`` in the same transaction, so nothing is announced
that did not commit). Each process keeps one connection that LISTENs, and for every game it holds
reloads what changed from the database (:meth:`GameService.refresh`) and pushes each seat its own view.
A notification carries no card and no state: the database stays the one source of truth. A lost
notification loses nothing: the listener reconnects, and the service also checks its games against the
database every few seconds and whenever a player asks for the table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlalchemy.engine import make_url

from .store import NOTIFY_CHANNEL

__all__ = ["Listener", "libpq_url"]

log = logging.getLogger("koikoi.web")

_MAX_PAYLOAD = 80  # "<game id> <moves>": a few dozen characters; anything longer is not ours


def libpq_url(sqlalchemy_url: str) -> str:
    """The libpq form (``postgresql://...``) of a SQLAlchemy PostgreSQL URL, for psycopg itself."""
    return make_url(sqlalchemy_url).set(drivername="postgresql").render_as_string(hide_password=False)


class Listener:
    """LISTENs on the database's channel and calls ``on_change(game_id, moves)`` for each announcement,
    and ``on_connect()`` after each (re)connection (a catch-up: announcements may have been missed)."""

    def __init__(
        self,
        url: str,
        on_change: Callable[[str, int], None],
        on_connect: Callable[[], None],
        *,
        retry_seconds: float = 1.0,
    ) -> None:
        self.url = libpq_url(url)
        self.on_change = on_change
        self.on_connect = on_connect
        self.retry_seconds = retry_seconds
        self.connected = False
        self.connections = 0  # how many times it has connected, for tests and health
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass

    async def _run(self) -> None:
        import psycopg

        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
                async with conn:
                    await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self.connected = True
                    self.connections += 1
                    self.on_connect()
                    async for note in conn.notifies():
                        self._dispatch(note.payload)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the database went away: keep trying, the periodic check covers the gap
                if self.connected:
                    log.warning("lost the database's notifications (%s); reconnecting", e)
            self.connected = False
            await asyncio.sleep(self.retry_seconds)

    def _dispatch(self, payload: str) -> None:
        if len(payload) > _MAX_PAYLOAD:
            return
        game_id, _, moves = payload.partition(" ")
        try:
            n = int(moves)
        except ValueError:
            return
        try:
            self.on_change(game_id, n)
        except Exception:  # one game's trouble must not stop the others' notifications
            log.exception("could not handle the notification for game %s", game_id)
