"""Spectators: who may watch a game, the spectators' sockets of one server process, and how many watch.

Any game may be watched by its address (``/watch/<game id>``) unless it was made private (a casual game
only); a game's own players may watch it only once it is over (they play it from their table meanwhile,
and the spectators' chat could carry advice). A spectator is sent the public table
(:meth:`~koikoi.web.games.GameService.spectator_view`: both hands as counts, no stock, no seed, no legal
moves) each time the game changes, as the seats are: the sockets are on the game's
:class:`~koikoi.web.games.LiveGame` (``spectators``), so a move stored by another process reaches them
through the same catching up (:meth:`~koikoi.web.games.GameService.refresh`) as it reaches the seats.

How many watch: on SQLite (one process) the sockets here; on PostgreSQL the sum of what every process
wrote in ``watchers`` (:class:`~koikoi.web.watchstore.WatchStore`), announced on
:data:`~koikoi.web.store.CHAT_CHANNEL` as ``watch <game id>``. Both seats and the spectators are told
``{"type": "watchers", "n": N}`` when it changes, a quarter of a second after the last change at most.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import weakref
from collections import OrderedDict
from collections.abc import Awaitable
from typing import Any

from .games import GameError, GameService, LiveGame, Unavailable
from .limits import Limits
from .livegame import Sender, TextSender
from .tasks import cancel_all
from .watchstore import KEEP_EVERY, WatchStore

__all__ = ["Spectators", "TELL_AFTER"]

log = logging.getLogger("koikoi.web")

TELL_AFTER = 0.25  # a change in who watches is told this long after (a crowd coming at once: once)
_GAME_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
_PRIVACY_KEPT = 20000  # games whose privacy this process remembers (it never changes)


class Spectators:
    """The spectators of one server process. Use from the event loop; :meth:`start` before, :meth:`close` after."""

    def __init__(self, service: GameService, limits: Limits) -> None:
        self.service = service
        self.db = service.db
        self.limits = limits
        self.store = WatchStore(service.store)
        self.open = 0  # spectators' sockets open here, all games together
        # The seats' sockets that asked for the chat and the count (``/ws/<token>?chat=1``, the table's
        # page): only they are sent them, so that a program playing over the socket is sent what it knows.
        self.listening: weakref.WeakSet[Sender] = weakref.WeakSet()
        self._private: OrderedDict[str, bool] = OrderedDict()
        self._soon: dict[str, asyncio.TimerHandle] = {}  # games whose count is to be written or told
        self._told: dict[str, int] = {}  # the count each game's sockets here were last told
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keeper: asyncio.Task[None] | None = None
        self._closing = False  # the loop ends (a cancellation can be lost: koikoi.web.tasks)

    @property
    def shared(self) -> bool:
        """Whether other server processes may share the database (PostgreSQL): counts go through it."""
        return self.service.listener is not None

    async def start(self) -> None:
        if self.shared:
            self._keeper = asyncio.get_running_loop().create_task(self._keep_forever())

    async def close(self) -> None:
        for handle in self._soon.values():
            handle.cancel()
        self._closing = True
        await cancel_all([t for t in (self._keeper, *self._tasks) if t is not None], "the spectators")

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- who may watch ----------------------------------------------------------------------------------

    async def is_private(self, game_id: str) -> bool:
        known = self._private.get(game_id)
        if known is None:
            known = await self.db(self.store.is_private, game_id)
            self._private[game_id] = known
            if len(self._private) > _PRIVACY_KEPT:
                self._private.popitem(last=False)
        else:
            self._private.move_to_end(game_id)
        return known

    async def game(self, game_id: Any) -> LiveGame:
        """The game ``game_id`` if anyone may watch it: 404 ``no_game``, 409 ``broken``, 403 ``private_game``."""
        if not isinstance(game_id, str) or not _GAME_ID.fullmatch(game_id):
            raise GameError("no_game", "no game has this address", 404)
        game = await self.service.load(game_id)  # no_game, broken, unavailable
        if await self.is_private(game.stored.id):
            raise GameError("private_game", "this game is private: its players play it without spectators", 403)
        return game

    async def watchable(self, game_id: Any, owners: set[str]) -> LiveGame:
        """The game for a spectator known as ``owners`` (their browser id, their account's owner key): one
        of its players may watch it only once it is over (409 ``playing_here``)."""
        game = await self.game(game_id)
        if not game.over and game.status != "broken" and owners & {s.owner for s in game.seats if s.owner}:
            raise GameError(
                "playing_here",
                "you play in this game: play it from your table (you may watch it once it is over)",
                409,
            )
        return game

    async def finished(self, game_id: Any) -> LiveGame:
        """A finished game anyone may watch, for its replay and record (what its players' replay shows)."""
        game = await self.game(game_id)
        if not game.over:
            # The record holds the deals and the seed: it would show both hands and the stock.
            raise GameError("not_finished", "a game's replay is public once it is over", 403)
        return game

    # -- the spectators here ----------------------------------------------------------------------------

    async def room_for(self, game: LiveGame) -> None:
        """Refuse (429 ``too_many_spectators``) a spectator more than ``spectators_per_game`` allows."""
        limit = self.limits.spectators_per_game
        n = len(game.spectators)
        if self.shared and n < limit:
            try:
                n = max(n, await self.db(self.store.count, game.stored.id))
            except Unavailable:
                pass  # the database is away: this process's own count holds the limit meanwhile
        if n >= limit:
            raise GameError("too_many_spectators", f"this game has {limit} spectators, the most it may have", 429)

    def join(self, game: LiveGame, send: TextSender) -> None:
        game.spectators.add(send)
        self.open += 1
        self._changed(game)

    def leave(self, game: LiveGame, send: TextSender) -> None:
        """A spectator's socket closed: off the game (wherever it is now, if it was read again meanwhile)."""
        found = False
        for g in (game, self.service.live.get(game.stored.id)):
            if g is not None and send in g.spectators:
                g.spectators.discard(send)
                found = True
        if found:
            self.open -= 1
            self._changed(game)
        self.service.forget_if_idle(game)

    def here(self, game_id: str) -> int:
        game = self.service.live.get(game_id)
        return 0 if game is None else len(game.spectators)

    async def count(self, game: LiveGame) -> int:
        """How many watch the game, on every process (this one's own count if the database is away)."""
        if not self.shared:
            return len(game.spectators)
        try:
            return max(len(game.spectators), await self.db(self.store.count, game.stored.id))
        except Unavailable:
            return len(game.spectators)

    # -- telling the count ------------------------------------------------------------------------------

    def _changed(self, game: LiveGame) -> None:
        """The spectators here changed: soon, write this process's count (PostgreSQL: every process is
        told through the database), or tell the sockets here (SQLite)."""
        gid = game.stored.id
        if gid in self._soon:
            return
        if len(self._told) > 2 * self.limits.live_games:  # games gone from memory: forget what they were told
            for gone in [g for g in self._told if g not in self.service.live]:
                del self._told[gone]
        loop = asyncio.get_running_loop()
        self._soon[gid] = loop.call_later(TELL_AFTER, lambda: self._spawn(self._write_or_tell(gid)))

    async def _write_or_tell(self, gid: str) -> None:
        self._soon.pop(gid, None)
        if not self.shared:
            await self.tell(gid)
            return
        try:
            await self.db(self.store.set_count, gid, self.service.process_id, self.here(gid))
        except Exception as e:  # the database is away: the next keeping writes it
            log.warning("could not write the spectators of game %s: %s", gid, e)

    def count_news(self, gid: str) -> None:
        """Another process (or this one, through the database) says the spectators of ``gid`` changed."""
        if gid in self.service.live:
            self._spawn(self.tell(gid))

    async def tell(self, gid: str) -> None:
        """Tell both seats and the spectators here of game ``gid`` how many watch, if that changed."""
        game = self.service.live.get(gid)
        if game is None or not (game.listeners[0] or game.listeners[1] or game.spectators):
            self._told.pop(gid, None)
            return
        n = await self.count(game)
        if self._told.get(gid) == n:
            return
        self._told[gid] = n
        msg = {"type": "watchers", "n": n}
        for seat in (0, 1):
            for send in list(game.listeners[seat]):
                if send not in self.listening:
                    continue
                try:
                    await send(msg)
                except Exception:  # a closed socket: its handler removes it
                    pass
        text = json.dumps(msg)
        for spectator in list(game.spectators):
            try:
                await spectator(text)
            except Exception:
                pass

    async def hello(self, game: LiveGame) -> dict[str, Any]:
        """What a socket that opens is told of the spectators: how many, and whether the game is private."""
        return {"type": "watchers", "n": await self.count(game), "private": await self.is_private(game.stored.id)}

    async def _keep_forever(self) -> None:
        """PostgreSQL: this process's counts written every few seconds (a row not written for a while is a
        dead process's), and what it remembers of games gone from memory forgotten."""
        while not self._closing:
            await asyncio.sleep(KEEP_EVERY)
            counts = {gid: len(g.spectators) for gid, g in self.service.live.items() if g.spectators}
            for gid in [g for g in self._told if g not in self.service.live]:
                del self._told[gid]
            try:
                await self.db(self.store.keep, self.service.process_id, counts)
                # A process that died stops counting once its row is old: its games' players are told.
                heard = [gid for gid, g in self.service.live.items() if gid in self._told or g.spectators]
                if heard:
                    now = await self.db(self.store.counts, heard)
                    for gid, n in now.items():
                        if self._told.get(gid, 0) != max(n, self.here(gid)):
                            self._spawn(self.tell(gid))
            except Exception as e:  # the database is away: the next round tries again
                log.warning("could not keep the spectators' counts: %s", e)
