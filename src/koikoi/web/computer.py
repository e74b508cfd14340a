"""The computer's turns and hints. Exactly one server process thinks about each computer move: it claims
the turn in the database for a short lease (:data:`COMPUTER_LEASE`) and renews it while it thinks; if
it dies, the lease runs out and another process's sweep takes the move over. A move the workers cannot
make is tried a few times, then the game is marked broken with the reason.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .database import Unavailable
from .errors import GameError
from .livegame import LiveGame
from .tableowner import TableOwner
from .workers import JobError, PoolBusy

__all__ = ["ComputerPlayer", "HINT_PLAYOUTS", "COMPUTER_LEASE"]

log = logging.getLogger("koikoi.web")

HINT_PLAYOUTS = 1500
# With several server processes on one database (docs/web.md, "Scaling out"): a process thinking about
# a computer move holds its claim this long and renews it meanwhile; a dead process's claim runs out
# and another process takes the move over at its next sweep.
COMPUTER_LEASE = 6.0
# A computer move the worker refuses (JobError: the search failed on this position) is tried this many
# times; a worker that dies on it, or does not answer, a few more (a worker may die for other reasons).
# Then the game is marked broken with the reason, instead of being tried once a second for ever.
COMPUTER_TRIES = 3
COMPUTER_TRIES_CRASHED = 8


class ComputerPlayer:
    """The computer player of the games of one :class:`~koikoi.web.games.GameService`, and its hints."""

    def __init__(self, service: TableOwner) -> None:
        self.service = service

    def waiting(self, game: LiveGame) -> bool:
        ai = game.ai_seat
        return (
            ai is not None and game.status == "playing" and not game.match.is_over() and game.match.current_player == ai
        )

    def schedule(self, game: LiveGame) -> None:
        if self.service.closing or not self.waiting(game) or game.in_doubt is not None:
            return
        ai = game.ai_seat
        assert ai is not None
        if game.ai_task is not None and not game.ai_task.done():
            return
        game.ai_task = asyncio.get_running_loop().create_task(self._turns(game, ai))

    async def _turns(self, game: LiveGame, ai: int) -> None:
        self.service.thinking += 1
        try:
            await self._moves(game, ai)
        finally:
            self.service.thinking -= 1
            # A game stays in memory while its computer moves, so a burst of new games can hold the
            # cache above its bound; once the computer is done, it goes back (else it would wait for
            # the next game loaded, or the sweep).
            if not self.service.closing and len(self.service.live) > self.service.limits.live_games:
                self.service.evict(keep=game.stored.id)

    async def _moves(self, game: LiveGame, ai: int) -> None:
        gid = game.stored.id
        tries, tried_seq = 0, -1
        while not self.service.closing and not game.match.is_over() and game.match.current_player == ai:
            seq = game.moves
            if seq != tried_seq:
                tries, tried_seq = 0, seq
            # Exactly one server process thinks about each move: it claims the turn in the database
            # for a short lease and renews it while it thinks; if it dies, the lease runs out and
            # another process's sweep takes the move over (:meth:`sweep`).
            try:
                claimed = await self.service.db(
                    self.service.store.claim_computer_turn, gid, seq, self.service.process_id, COMPUTER_LEASE
                )
            except Unavailable:
                return  # the sweep starts it again once the database answers
            if not claimed:
                return
            self.service.computer_moves += 1
            renew = asyncio.get_running_loop().create_task(self._renew_claim(gid, seq))
            try:
                obs = game.match.observation(ai)
                if self.service.ai_delay:
                    await asyncio.sleep(self.service.ai_delay)
                action = await self.service.pool.choose(
                    game.stored.opponent,
                    (game.stored.ai_seed + seq) & ((1 << 62) - 1),
                    self.service.ai_options.get(game.stored.opponent, {}),
                    obs,
                )
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the server is stopping, a worker died, or the search failed
                self.release(gid)
                if self.service.closing:
                    return
                tries += 1
                if tries >= (COMPUTER_TRIES if isinstance(e, JobError) else COMPUTER_TRIES_CRASHED):
                    # Not for ever: a move that cannot be made leaves the game broken, and says why.
                    await self.service.broken(
                        gid,
                        f"game {gid}: the computer ({game.stored.opponent}) could not make move {seq} "
                        f"in {tries} tries: {e}",
                    )
                    await self.service.broadcast(game)
                    return
                log.error("the computer could not move in game %s (try %d): %s", gid, tries, e)
                await asyncio.sleep(min(30.0, 2.0 ** (tries - 1)))
                continue
            finally:
                renew.cancel()
            if not await self._commit(game, ai, seq, action):
                return
            await self.service.broadcast(game)

    async def _commit(self, game: LiveGame, ai: int, seq: int, action: int) -> bool:
        """Store the computer's move ``seq``; True if it was applied here. While the database does not
        answer, tries again every half second (the claim, held by this process, outlives a short stall;
        a write in doubt settles by itself)."""
        while not self.service.closing:
            async with game.lock:
                if game.moves != seq or game.in_doubt is not None:
                    if game.in_doubt is None:
                        self.release(game.stored.id)
                    return False
                try:
                    await self.service.commit(game, ai, action)  # clears the claim, or notes the computer's next turn
                    return True
                except Unavailable:
                    if game.in_doubt is not None:
                        return False  # :meth:`_settle` applies it and lets the computer go on
                except GameError:
                    return False
            await asyncio.sleep(0.5)
        return False

    async def _renew_claim(self, game_id: str, seq: int) -> None:
        while True:
            await asyncio.sleep(COMPUTER_LEASE / 3)
            try:
                await self.service.db(
                    self.service.store.claim_computer_turn, game_id, seq, self.service.process_id, COMPUTER_LEASE
                )
            except Exception as e:  # the database is away for a moment: the next renewal tries again
                log.warning("could not renew the claim on game %s: %s", game_id, e)

    def release(self, game_id: str) -> None:
        async def release() -> None:
            try:
                await self.service.db(self.service.store.release_computer_turn, game_id, self.service.process_id)
            except Exception as e:  # its lease runs out by itself
                log.warning("could not release the claim on game %s: %s", game_id, e)

        self.service.spawn(release())

    async def resume(self) -> int:
        """After a start: let the computer move in every game that waits for it. A game that cannot be
        rebuilt is marked broken (with the reason) and left; it never stops the server."""
        n = 0
        for game_id, opponent in await self.service.db(self.service.store.ids_with_status, "playing"):
            if opponent == "friend":
                continue
            try:
                game = await self.service.load(game_id)
            except Unavailable:
                raise  # the database itself: the server cannot start on it
            except GameError:
                continue
            except Exception:  # a bug this game brings out: the others still start
                log.exception("could not resume game %s", game_id)
                continue
            self.schedule(game)
            n += 1
        return n

    async def hint(self, token: Any, seq: Any) -> dict[str, Any]:
        seat, game = await self.service.seat_game(token)
        if game.ai_seat is None:
            raise GameError("no_hints", "hints are given in games against the computer only")
        if type(seq) is not int:
            raise GameError("bad_message", "a hint request needs the integer 'seq' of the state it is for")
        self.service.check_turn(game, seat.seat, seq)
        # One search per position: asking again (or many times at once) waits for the same answer.
        key = (seat.seat, seq)
        future = game.hints.get(key)
        if future is None:
            if any(not f.done() for k, f in game.hints.items() if k[0] == seat.seat):
                raise GameError("hint_pending", "a hint for this seat is still being worked out", 429)
            game.hints = {k: f for k, f in game.hints.items() if k[1] == seq}
            obs = game.match.observation(seat.seat)
            try:
                future = self.service.pool.rank(
                    (game.stored.ai_seed ^ 0x5A5A5A) + seq, {"playouts": HINT_PLAYOUTS, "time_limit": 1.0}, obs
                )
            except PoolBusy as e:
                raise GameError("busy", f"the server is busy ({e}): ask for a hint again in a moment", 429) from None
            game.hints[key] = future
        try:
            choices = await asyncio.shield(future)
        except RuntimeError as e:
            game.hints.pop(key, None)
            raise GameError("no_hint", f"no hint this time: {e}", 503) from None
        # Every legal choice, best first: {action, points, win, captures} (koikoi.ai.hints.HintLine).
        return {"type": "hint", "seq": seq, "choices": choices}
