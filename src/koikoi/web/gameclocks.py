"""The games' clocks: each running clock's flag armed at its deadline (:meth:`GameClocks.arm`), the
player out of time losing the match, or the game aborted, or the computer moving for them
(:meth:`GameClocks.on_deadline`), and the clocks' sweep (:meth:`GameClocks.run`): a sign of life every
second (an outage moves the deadlines on), the games of any process whose deadline passed, and the
invitations and casual games nobody used (:meth:`GameClocks.expire`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime, timedelta

from .database import Unavailable
from .errors import GameError
from .livegame import LiveGame
from .tableowner import TableOwner
from .tablestore import BEAT

__all__ = ["GameClocks", "EXPIRY_SECONDS"]

log = logging.getLogger("koikoi.web")

EXPIRY_SECONDS = 60.0  # how often unused invitations and forgotten casual games are ended


class GameClocks:
    """The clocks of the games of one :class:`~koikoi.web.games.GameService`; :meth:`run` is its sweep."""

    def __init__(self, service: TableOwner) -> None:
        self.service = service

    def arm(self, game: LiveGame) -> None:
        """Set the flag of the player to move at their deadline (or none: no clock, or not running)."""
        if game.timer is not None:
            game.timer.cancel()
            game.timer = None
        c = game.clock
        if self.service.closing or c is None or c.deadline is None or game.status != "playing":
            return
        if self.service.live.get(game.stored.id) is not game:
            return  # a copy dropped from memory (see _forget), caught up by a task still running on it
        loop = asyncio.get_running_loop()
        delay = max(0.0, c.deadline - time.time())
        game.timer = loop.call_later(delay, lambda: self.service.spawn(self.on_deadline(game)))

    async def on_deadline(self, game: LiveGame) -> None:
        """The player to move may have run out of time: lose the match (decided once, in the database,
        whichever process gets there first), or, in a casual game that chose it, the computer moves for
        them. Early (the clock moved on) or not ended here (another process did, an outage is made good):
        caught up with the database, and the flag set again."""
        gid = game.stored.id
        try:
            async with game.lock:
                c = game.clock
                if game.status != "playing" or c is None or c.deadline is None or game.in_doubt is not None:
                    return
                now = time.time()
                if now < c.deadline:
                    self.arm(game)
                    return
                seat, seq = game.match.current_player, game.moves
                # A player who never made a first move did not come: no result, not a loss.
                ending, winner = ("abort", None) if seat not in game.movers else ("time", 1 - seat)
                if c.on_time == "computer":
                    await self._move_for(game, seat, seq)
                    ended = False
                else:
                    ended = await self.service.clock_db(
                        self.service.table.end,
                        gid,
                        seq,
                        ending,
                        winner,
                        now,
                        on_time=True,
                        aborted_by=seat if ending == "abort" else None,
                    )
                if ended:
                    self.service.flags += 1
                    self.service.ended(game, ending, winner, flagged=c.deadline)
                else:
                    game.extras_stale = True
                    await self.service.sync(game)
            await self.service.broadcast(game)
            self.service.schedule_ai(game)
        except Unavailable:  # the database is away: the clock's sweep tries again once it answers
            pass
        except Exception:
            log.exception("could not end game %s on time", gid)

    async def _move_for(self, game: LiveGame, seat: int, seq: int) -> None:
        """A casual game whose player chose "the computer plays my move": the easy level moves for them
        (the caller holds the game's lock). Stored as any move, so it is made once."""
        action = await self.service.pool.choose(
            "easy", (game.stored.ai_seed + seq) & ((1 << 62) - 1), {}, game.match.observation(seat)
        )
        try:
            await self.service.commit(game, seat, action)
        except GameError:
            pass  # another process moved first: _commit caught this copy up

    async def run(self) -> None:
        """Every second a sign of life (an outage moves the deadlines on), and twice a second the games of
        any process whose deadline has passed: a process that stops leaves its flags to the others."""
        last_beat = time.time()  # start() gave the first sign of life
        last_expiry = 0.0
        while not self.service.closing:
            await asyncio.sleep(0.5)
            try:
                now = time.time()
                if now - last_beat >= BEAT:
                    gap = await self.service.clock_db(self.service.table.beat, self.service.process_id, now)
                    if gap:
                        log.warning("no server process was alive for %.1f s: every running clock moved on by it", gap)
                    if now - last_beat > 2 * BEAT + 2 or gap:
                        for g in list(self.service.live.values()):  # deadlines may have moved: read them again
                            g.extras_stale = True
                            self.service.refresh_soon(g)
                    last_beat = now
                for gid in await self.service.clock_db(self.service.table.due, time.time()):
                    game = self.service.live.get(gid)
                    if game is None:
                        try:
                            game = await self.service.load(gid)
                        except GameError:
                            continue
                    if game.timer is None or game.clock is None or (game.clock.deadline or 0) <= time.time():
                        self.service.spawn(self.on_deadline(game))
                if now - last_expiry >= EXPIRY_SECONDS:
                    last_expiry = now
                    await self.expire()
            except Unavailable:
                pass
            except Exception:
                log.exception("the clocks' sweep failed")

    async def expire(self) -> list[str]:
        """End the invitations nobody took and the casual games nobody moves in (docs/web.md)."""
        now = datetime.now(UTC)
        ended = await self.service.db(
            self.service.table.expire,
            invitations_before=now - timedelta(seconds=self.service.limits.invitation_seconds),
            idle_before=now - timedelta(seconds=self.service.limits.idle_game_seconds),
        )
        for gid in ended:
            game = self.service.live.get(gid)
            if game is not None:
                game.extras_stale = True
                self.service.refresh_soon(game)
        return ended
