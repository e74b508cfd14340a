"""The hot path of a table: a player's move checked, stored, applied and told, in that order.

:meth:`Mover.act` checks the seat, the turn, the sequence number the client saw and the action's
legality against the engine; :meth:`Mover.commit` previews the move (:meth:`koikoi.match.Match.after`),
stores it with the clock it leaves (through the group commit, :mod:`.movewriter`) and only then applies
it (:meth:`Mover.apply`); :meth:`Mover.broadcast` tells both seats and the spectators, each view encoded
once for all its sockets. A write the database has not answered for in time is in doubt until it does
(:meth:`Mover._settle`): applied and told if it landed, caught up with the database if not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ..actions import NUM_ACTIONS
from ..clocks import after_move
from ..hand import IllegalActionError
from ..match import Match
from . import wire
from .database import Unavailable
from .errors import GameError
from .livegame import LiveGame
from .store import Move, StoreError
from .tableowner import TableOwner
from .tablestore import StoredClock

__all__ = ["Mover"]

log = logging.getLogger("koikoi.web")


class Mover:
    """The moves of the games of one :class:`~koikoi.web.games.GameService` (its owner): the players', the
    computer's and those made for a player out of time all go through :meth:`commit`."""

    def __init__(self, service: TableOwner) -> None:
        self.service = service

    async def act(self, token: Any, action: Any, seq: Any) -> dict[str, Any]:
        seat, game = await self.service.seat_game(token)
        if type(action) is not int or type(seq) is not int:
            raise GameError(
                "bad_message",
                f"an action needs an integer 'action' (an action number 0.."
                f"{NUM_ACTIONS - 1}) and the integer 'seq' of the state it answers",
                422,
            )
        if not 0 <= action < NUM_ACTIONS:
            raise GameError(
                "bad_message", f"there is no action {action}: actions are numbered 0..{NUM_ACTIONS - 1}", 422
            )
        async with game.lock:
            if game.in_doubt is not None:
                raise Unavailable("the database has not yet answered for the last move: try again in a moment")
            if game.needs_sync or (seq > game.moves and self.service.listener is not None):
                await self.service.sync(game)  # the player saw a newer table, from another process: catch up first
            self.check_turn(game, seat.seat, seq)
            if not game.match.hand.is_legal(action):
                try:
                    game.match.hand.apply_action(action)  # raises, with the list of legal actions
                except (IllegalActionError, ValueError) as e:
                    raise GameError("illegal", str(e)) from None
                raise GameError("illegal", f"action {action} is not legal now")  # pragma: no cover
            await self.commit(game, seat.seat, action)
        await self.broadcast(game)
        self.service.schedule_ai(game)
        return {"type": "ack", "seq": game.moves}

    def check_turn(self, game: LiveGame, seat: int, seq: int) -> None:
        if game.status == "broken":
            raise GameError("broken", "this game cannot be played on", 409)
        if game.status == "waiting":
            raise GameError("waiting", "your friend has not joined yet: send them the invitation link")
        if game.match.is_over() or game.status == "finished":
            raise GameError("over", "the game is over")
        c = game.clock
        if c is not None and c.deadline is not None and time.time() > c.deadline:
            self.service.spawn(self.service.on_deadline(game))
            raise GameError("out_of_time", "your time has run out", 409)
        if seq != game.moves:
            raise GameError(
                "stale",
                f"the game has moved on (you answered move {seq}, it is at move "
                f"{game.moves}): here is the current table",
                409,
            )
        if game.match.current_player != seat:
            raise GameError("not_your_turn", "it is not your turn", 409)

    async def commit(self, game: LiveGame, seat: int, action: int) -> None:
        """Store the action, then apply it: if storing fails, nothing changes. The caller holds the
        game's lock. A database that does not answer in time raises :class:`Unavailable`; the write is
        then in doubt until it answers, and is applied (and both seats told) if it landed."""
        trial = game.match.after(action)  # what the move leads to; the match itself moves once it is stored
        status = "finished" if trial.is_over() else game.status
        scores = (trial.scores[0], trial.scores[1])
        ai = game.ai_seat
        computer_next = ai is not None and status == "playing" and trial.current_player == ai
        clock, after = self._clock_after(game, trial, seat, status)
        game.writing = game.moves + 1
        move = Move(game.stored.id, game.moves, seat, action, status, scores, computer_next, ai is not None, clock)
        # Unavailable at once, with nothing written, while the database is known to be away. A move that
        # ends the game rates it (locking both players' ratings): alone, never in a batch with others.
        if status == "finished":
            write = self.service.db.submit(self.service.store.add_move, move)
        else:
            write = self.service.writer.write(move)
        try:
            await self.service.db.wait_for(write)
        except Unavailable:
            if write.done():
                game.writing = None  # it failed to reach the database: whether it landed is for a sync to see
                game.needs_sync = True
            else:
                game.in_doubt = asyncio.get_running_loop().create_task(
                    self._settle(game, write, game.moves, action, status, after)
                )
            raise
        except StoreError as e:
            # Another server process wrote this move first: catch up with the database, and say so.
            game.writing = None
            await self.service.sync(game)
            raise GameError("stale", str(e), 409) from None
        self.apply(game, action, status, after)

    def _clock_after(
        self, game: LiveGame, trial: Match, seat: int, status: str
    ) -> tuple[tuple[float, float, float | None, float | None] | None, StoredClock | None]:
        """The clock to store with a move of ``seat`` that leads to ``trial``, and the clock it makes."""
        c = game.clock
        if c is None or c.turn_started is None:
            return None, c
        now = time.time()
        if status != "playing":
            banks = list(c.banks)
            new = StoredClock(c.control, c.on_time, c.banks, c.turn_started, None, None)
            return (banks[0], banks[1], c.turn_started, None), new
        new_hand = trial.hand_number != game.match.hand_number
        banks, started, deadline = after_move(
            c.control,
            list(c.banks),
            turn_started=c.turn_started,
            now=now,
            mover=seat,
            next_player=trial.current_player,
            new_hand=new_hand,
            # A player who has not moved yet has the first move's time: then the game is aborted.
            first_move=c.on_time == "lose" and trial.current_player not in game.movers | {seat},
        )
        new = StoredClock(c.control, c.on_time, (banks[0], banks[1]), started, deadline, None)
        return (banks[0], banks[1], started, deadline), new

    def apply(self, game: LiveGame, action: int, status: str, clock: StoredClock | None = None) -> None:
        game.writing = None
        game.movers.add(game.match.current_player)
        game.match.apply_action(action)
        game.moves += 1
        game.status = status
        game.last_used = time.monotonic()
        if clock is not None:
            game.clock = clock
        self.service.actions += 1
        self.service.arm(game)
        if status == "finished":
            self.service.rated_soon(game)

    async def _settle(
        self,
        game: LiveGame,
        write: asyncio.Future[None],
        at: int,
        action: int,
        status: str,
        clock: StoredClock | None = None,
    ) -> None:
        """A write whose caller stopped waiting: once the database answers, apply it if it landed."""
        try:
            try:
                await write  # no deadline: the database answers, or its connection fails, some day
                landed = True
            except Exception:
                landed = False
            async with game.lock:
                game.in_doubt = None
                game.writing = None
                if landed and game.moves == at:
                    self.apply(game, action, status, clock)
                else:  # refused (another process wrote first) or cut off: the database says what is
                    game.needs_sync = True
                    try:
                        await self.service.sync(game)
                    except Unavailable:
                        return  # the next sweep catches it up
            await self.broadcast(game)
            self.service.schedule_ai(game)
        finally:
            game.in_doubt = None

    async def broadcast(self, game: LiveGame) -> None:
        for seat in (0, 1):
            listeners = list(game.listeners[seat])
            if not listeners:
                continue
            msg = wire.text({"type": "state", "state": self.service.view(game, seat)})  # once for all its sockets
            for send in listeners:
                try:
                    await send(msg)
                except Exception:  # a closed socket: its handler removes it
                    game.listeners[seat].discard(send)
        if game.spectators:
            await self._tell_spectators(game)

    async def _tell_spectators(self, game: LiveGame) -> None:
        """The public table, to every spectator here: after the players, one text for all of them."""
        text = wire.text({"type": "state", "state": self.service.spectator_view(game)})
        for send in list(game.spectators):
            try:
                await send(text)
            except Exception:  # a closed socket: its handler removes it
                game.spectators.discard(send)
