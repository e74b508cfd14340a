"""A game that ends before its last hand: a resignation or an abort, a claim of victory over a player
who left on their own turn, and what ending does to the copy in memory (:meth:`Finisher.ended`: the
clock stops, a rated game's result is read back). Each ending is decided once, in the database
(:meth:`koikoi.web.tablestore.TableStore.end`), whichever process gets there first.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from .database import Unavailable
from .errors import GameError
from .livegame import LiveGame
from .store import StoreError
from .tableowner import TableOwner
from .tablestore import StoredClock

__all__ = ["Finisher"]

log = logging.getLogger("koikoi.web")


class Finisher:
    """The endings before the last hand of the games of one :class:`~koikoi.web.games.GameService`."""

    def __init__(self, service: TableOwner) -> None:
        self.service = service

    def rated_soon(self, game: LiveGame) -> None:
        """A game that has just ended: what it did to the ratings is read (in the background) and sent, for
        its result (a rated game's transaction that ended it rated it)."""
        if game.rated is not None:
            game.extras_stale = True
            self.service.refresh_soon(game)

    def ended(self, game: LiveGame, ending: str, winner: int | None, *, flagged: float | None = None) -> None:
        """What this process decided in the database, in its copy of the game."""
        game.status = "finished"
        game.ending, game.winner = ending, winner
        c = game.clock
        if c is not None:
            game.clock = StoredClock(c.control, c.on_time, c.banks, c.turn_started, None, flagged)
        self.service.arm(game)
        self.rated_soon(game)

    async def leave_game(self, token: Any, how: Any) -> dict[str, Any]:
        """A player resigns (a loss) or aborts (before both have moved: no result; a resignation then is an
        abort too)."""
        seat, game = await self.service.seat_game(token)
        if how not in ("resign", "abort"):
            raise GameError("bad_message", "a player leaves a game by 'resign' or 'abort'", 422)
        async with game.lock:
            if game.in_doubt is not None:
                raise Unavailable("the database has not yet answered for the last move: try again in a moment")
            if game.status != "playing":
                raise GameError(
                    "over" if game.status == "finished" else game.status, "the game is not being played", 409
                )
            if how == "abort" and len(game.movers) == 2:
                raise GameError("no_abort", "both players have moved: the game can be resigned, not aborted", 409)
            if len(game.movers) < 2:
                # Nothing was played: a resignation now is an abort, with no result (a rating moves only for
                # a game both players played: else two accounts could trade rated wins without playing).
                how = "abort"
            winner = None if how == "abort" else 1 - seat.seat
            aborted_by = seat.seat if how == "abort" else None
            if not await self.service.db(
                self.service.table.end, game.stored.id, game.moves, how, winner, time.time(), aborted_by=aborted_by
            ):
                await self.service.sync(game)
                raise GameError("stale", "the game has moved on: here is the current table", 409)
            self.ended(game, how, winner)
        await self.service.broadcast(game)
        return {"type": "ended", "ending": how}

    def claim_wait(self, game: LiveGame, seat: int) -> tuple[float, bool] | None:
        """How long until ``seat`` may claim victory over their opponent, who is away on their own turn,
        and whether the opponent closed the tab (None: no claim is coming)."""
        c, p = game.clock, game.presence
        other = 1 - seat
        if (
            c is None
            or p is None
            or not c.control.real_time
            or game.status != "playing"
            or game.match.current_player != other
            or len(game.movers) < 2
            or game.seats[other].kind != "human"
            or p[other].here
        ):
            return None
        now = time.time()
        since = max(p[other].away_since or now, c.turn_started or now)
        wait = self.service.limits.claim_closed_seconds if p[other].closed else self.service.limits.claim_seconds
        return max(0.0, wait - (now - since)), p[other].closed

    async def claim(self, token: Any) -> dict[str, Any]:
        """Claim victory over an opponent who left on their own turn (docs/web.md, "Leaving a game")."""
        seat, game = await self.service.seat_game(token)
        async with game.lock:
            if game.status != "playing":
                raise GameError("over", "the game is over", 409)
            if self.claim_wait(game, seat.seat) is None:
                p, c, other = game.presence, game.clock, 1 - seat.seat
                if (
                    p is not None
                    and p[other].here
                    and c is not None
                    and c.control.real_time
                    and game.match.current_player == other
                    and len(game.movers) == 2
                    and game.seats[other].kind == "human"
                ):
                    # Back before the claim came (this process heard of it already): said as when the
                    # database finds them back, so the claimer reads one reason, whichever process knew.
                    raise GameError("no_claim", "your opponent is back at the table", 409)
                raise GameError(
                    "no_claim", "victory can be claimed only when your opponent has left on their turn", 409
                )
            try:
                left = await self.service.db(
                    self.service.table.claim,
                    game.stored.id,
                    game.moves,
                    seat.seat,
                    time.time(),
                    wait=self.service.limits.claim_seconds,
                    wait_closed=self.service.limits.claim_closed_seconds,
                )
            except StoreError:
                await self.service.sync(game)
                raise GameError("stale", "the game has moved on: here is the current table", 409) from None
            if left:
                game.extras_stale = True
                await self.service.sync(game)
                if left == float("inf"):
                    raise GameError("no_claim", "your opponent is back at the table", 409)
                raise GameError("too_soon", f"your opponent can still come back: {left:.0f} s more", 409)
            self.ended(game, "claim", seat.seat)
        await self.service.broadcast(game)
        return {"type": "ended", "ending": "claim"}
