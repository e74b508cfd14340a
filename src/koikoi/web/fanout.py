"""Moves made through one server process, told to every other process on the same PostgreSQL database.

After a move (or a friend's joining) commits, the database announces ``"<game id> <moves>"`` on
:data:`~koikoi.web.store.NOTIFY_CHANNEL` (``pg_notify`` in the same transaction, so nothing is announced
that did not commit). Each process keeps one connection that LISTENs, and for every game it holds
reloads what changed from the database (:meth:`GameService.refresh`) and pushes each seat its own view.
A notification carries no card and no state: the database stays the one source of truth. A lost
notification loses nothing: the listener reconnects, and the service also checks its games against the
database every few seconds and whenever a player asks for the table.

The public lobby (:mod:`koikoi.web.lobby`) listens on the same connection, on a channel of its own
(:data:`~koikoi.web.store.LOBBY_CHANNEL`), and so do the bots (:data:`~koikoi.web.store.BOT_CHANNEL`)
and the chat and the spectators' counts (:data:`~koikoi.web.store.CHAT_CHANNEL`): :meth:`Listener.listen`
adds a channel before the start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlalchemy.engine import make_url

from .store import BOT_CHANNEL, CHAT_CHANNEL, LOBBY_CHANNEL, NOTIFY_CHANNEL, TOURNAMENT_CHANNEL

__all__ = ["Listener", "libpq_url"]

log = logging.getLogger("koikoi.web")

_MAX_PAYLOAD = 100  # "<game id> <moves>", "owner <owner>": a few dozen characters; anything longer is not ours


def libpq_url(sqlalchemy_url: str) -> str:
    """The libpq form (``postgresql://...``) of a SQLAlchemy PostgreSQL URL, for psycopg itself."""
    return make_url(sqlalchemy_url).set(drivername="postgresql").render_as_string(hide_password=False)


class Listener:
    """LISTENs on the database's channel and calls ``on_change(game_id, moves)`` for each announcement,
    and ``on_connect()`` after each (re)connection (a catch-up: announcements may have been missed).
    Other channels are heard on the same connection (:meth:`listen`)."""

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
        self._channels: dict[str, tuple[Callable[[str], None], Callable[[], None]]] = {
            NOTIFY_CHANNEL: (self._dispatch, on_connect)
        }

    def listen(self, channel: str, on_note: Callable[[str], None], on_connect: Callable[[], None]) -> None:
        """Also hear ``channel`` (one of this module's known channels): ``on_note(payload)`` for each
        announcement, ``on_connect()`` after each (re)connection. Before :meth:`start`."""
        if channel not in (NOTIFY_CHANNEL, LOBBY_CHANNEL, BOT_CHANNEL, CHAT_CHANNEL, TOURNAMENT_CHANNEL):
            raise ValueError(f"unknown channel {channel!r}")
        self._channels[channel] = (on_note, on_connect)

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
                    for channel in self._channels:  # a name of this module's, never a client's text
                        await conn.execute(f"LISTEN {channel}")
                    self.connected = True
                    self.connections += 1
                    for _, connected in self._channels.values():
                        connected()
                    async for note in conn.notifies():
                        if len(note.payload) > _MAX_PAYLOAD or note.channel not in self._channels:
                            continue
                        on_note = self._channels[note.channel][0]
                        try:
                            on_note(note.payload)
                        except Exception:  # one handler's trouble must not stop the notifications
                            log.exception("could not handle a notification on %s", note.channel)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the database went away: keep trying, the periodic check covers the gap
                if self.connected:
                    log.warning("lost the database's notifications (%s); reconnecting", e)
            self.connected = False
            await asyncio.sleep(self.retry_seconds)

    def _dispatch(self, payload: str) -> None:
        game_id, _, moves = payload.partition(" ")
        try:
            n = int(moves)
        except ValueError:
            return
        try:
            self.on_change(game_id, n)
        except Exception:  # one game's trouble must not stop the others' notifications
            log.exception("could not handle the notification for game %s", game_id)
