"""The director of tournaments: the one process that runs each tournament's course at a time.

Every server process runs a :class:`Director`. Each :data:`TICK` it takes or renews the lease of every
tournament that needs directing and that no other live process holds (:meth:`TourneyStore.lease`), and for
each one it holds:

1. starts it when its time comes (or cancels it with fewer than two players);
2. counts every match that ended into the standings (:meth:`TourneyStore.count`, with :func:`points`);
3. an arena: pairs the players who wait (:func:`koikoi.web.arena.pair_arena`), until its countdown ends;
   then waits for the matches in progress (each counts if it ends within the grace time) and ends it;
   a Swiss event: once every match of the round is counted (and the interval between rounds, if any, has
   passed), pairs the next round (:func:`koikoi.web.swiss.pair_round`), or ends it after the last.

Everything a director writes goes with a renewal of its lease in the same transaction, refused if another
process has taken the lease (:class:`~koikoi.web.tourneystore.LostLease`): the pairings and the standings
are written before any match starts, by one director at a time. A director that dies (kill -9) leaves its
lease to run out: :data:`~koikoi.web.tourneystore.LEASE` seconds later another process's next tick takes
the tournament over, with nothing lost (its matches are games like any other, played and ended by
whichever process holds them), and nobody paired twice (a player is taken only while free).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from ..rules import RuleSet
from .arena import ArenaStanding, ArenaWaiting, pair_arena, performance, rank_standings, scored
from .database import Database, Unavailable
from .rematches import playable_seed
from .store import StoreError
from .swiss import SwissEntrant, SwissGame, pair_round
from .tasks import cancel_all
from .tourneystore import Entrant, LostLease, Paired, Played, Tournament, TourneyStore

__all__ = ["TICK", "Director", "arena_ranks", "points", "tournament_seeds"]

log = logging.getLogger("koikoi.web")

TICK = 0.5  # seconds between a director's looks at its tournaments (a match's end is counted within one)


def points(t: Tournament, streak: int, result: str, berserk: bool) -> tuple[int, int]:
    """What one player's result scores in ``t`` (points, their streak after): an arena's points and fire
    (:func:`koikoi.web.arena.scored`), or a Swiss event's half points (a win 2, a draw 1)."""
    if t.kind == "arena":
        return scored(result, streak, berserk=berserk and t.berserk)
    return {"won": 2, "draw": 1, "lost": 0}[result], 0


def arena_ranks(entrants: list[Entrant]) -> dict[str, int]:
    """Each arena player's place in its standings now (before anyone has played: by rating)."""
    rows = [
        ArenaStanding(
            id=e.account_id,
            score=e.score,
            games=e.games,
            wins=e.wins,
            draws=e.draws,
            losses=e.losses,
            streak=e.streak,
            performance=performance(e.opponent_ratings, e.games, e.wins, e.losses),
            rating=e.rating,
        )
        for e in entrants
    ]
    return {s.id: rank for rank, s in rank_standings(rows)}


def swiss_entrants(entrants: list[Entrant]) -> list[SwissEntrant]:
    return [SwissEntrant(e.account_id, e.rating, e.joined_round, withdrawn=e.paused) for e in entrants]


def swiss_games(played: list[Played]) -> list[SwissGame]:
    return [SwissGame(p.round, p.account0, p.account1, p.result0) for p in played]


def tournament_seeds(rules: RuleSet, first: int | None) -> tuple[int, int, int]:
    """A match's secret seed, its computer seed (unused: two people play) and the seat that moves first;
    ``first``: the seat that must deal, and so move, first (a Swiss pairing's "white")."""
    for _ in range(200):
        seed, mover = playable_seed(rules, None)
        if first is None or mover == first:
            return seed, random.SystemRandom().getrandbits(62), mover
    raise StoreError(f"no deal of these rules lets seat {first} deal first")


class Director:
    """Directs the tournaments this process holds the lease of. Use from the event loop: :meth:`start`,
    then :meth:`close` (which gives the leases back, so that another process takes over at once)."""

    def __init__(
        self,
        db: Database,
        tstore: TourneyStore,
        process: str,
        *,
        on_change: Callable[[str], None] = lambda _tid: None,
        on_paired: Callable[[str, list[Paired]], None] = lambda _tid, _paired: None,
        tick: float = TICK,
    ) -> None:
        self.db = db
        self.tstore = tstore
        self.process = process
        self.tick = tick
        self.on_change = on_change  # a tournament changed (here): its pages are pushed soon
        self.on_paired = on_paired  # players paired here: their pages and bots' streams here are told
        self.directing: list[str] = []  # the tournaments this process directs now, for health and tests
        self.takeovers = 0  # tournaments this process took over from another, for health and tests
        self.pairings = 0  # matches this process made, for health and tests
        self._leased_at = -math.inf  # when the leases were last taken or renewed (monotonic)
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Look again now (a player joined, a match ended)."""
        self._wake.set()

    async def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        self._closing = True
        if self._task is not None:
            await cancel_all([self._task], "the tournaments' director")
        if self.directing:
            try:
                await self.db(self.tstore.release, self.process)
            except Exception as e:  # the database is away: the leases run out on their own
                log.debug("could not give the tournaments' leases back: %s", e)

    async def _run(self) -> None:
        while not self._closing:
            try:
                await self.tick_once()
            except Exception as e:  # the database is away: the next tick tries again
                log.debug("the tournaments' director could not look: %s", e)
            try:
                await asyncio.wait_for(self._wake.wait(), self.tick)
            except TimeoutError:
                pass
            self._wake.clear()

    async def tick_once(self) -> None:
        """One look at every tournament that needs directing. The leases are taken or renewed once a tick: a
        look woken sooner (a match ended: every process hears it) directs the tournaments held, each write
        of which renews or loses its lease anyway, and costs the processes that direct nothing no query."""
        began = time.monotonic()
        if began - self._leased_at >= self.tick:
            held, taken = await self.db(self.tstore.lease, self.process)
            self._leased_at = began
            for tid in taken:
                log.info("tournament %s: its director's lease ran out; this process directs it now", tid)
            self.takeovers += len(taken)
            self.directing = held
        for tid in list(self.directing):
            try:
                await self.direct(tid)
            except LostLease:
                log.info("tournament %s is directed by another process now", tid)
                self.directing = [t for t in self.directing if t != tid]
            except StoreError as e:
                if not e.conflict:
                    raise
                log.info("tournament %s: %s; the next look does it again", tid, e)
            except Unavailable:
                raise  # the database is away: every tournament waits for the next tick
            except Exception:  # one tournament's trouble must not stop the others
                log.exception("tournament %s: the director could not go on with it this time", tid)

    async def direct(self, tid: str) -> None:
        t = await self.db(self.tstore.get, tid)
        if t is None:
            return
        now = datetime.now(UTC)
        if t.status == "upcoming":
            if now < t.starts:
                return
            t = await self.db(self.tstore.start, tid, self.process)
            self.on_change(tid)
            if t.status != "running":
                return
        if t.status != "running":
            return
        if await self.db(self.tstore.count, tid, self.process, points):
            self.on_change(tid)
        if t.kind == "arena":
            await self._arena(t, now)
        else:
            await self._swiss(t, now)

    async def _arena(self, t: Tournament, now: datetime) -> None:
        ends = t.ends
        assert ends is not None
        if now >= ends:
            # The countdown is over: no more pairings; the matches in progress count if they end within
            # the grace time, and the arena ends when they have (or when the grace time is up).
            if now >= ends + timedelta(seconds=t.grace) or await self.db(self.tstore.unfinished, t.id) == 0:
                await self.db(self.tstore.finish, t.id, self.process)
                self.on_change(t.id)
            return
        everyone, ready = await self.db(self.tstore.waiting, t.id)
        if len(ready) < 2:
            return
        ranks = arena_ranks(everyone)
        waiting = [
            ArenaWaiting(e.account_id, ranks[e.account_id], e.rating, e.last_opponent, e.waiting_since or 0.0)
            for e in everyone
            if e.account_id in ready
        ]
        pairs = pair_arena(waiting)
        if pairs:
            made = await self.db(self.tstore.pair, t.id, self.process, pairs, tournament_seeds)
            self.pairings += len(made) // 2
            self.on_change(t.id)
            self.on_paired(t.id, made)

    async def _swiss(self, t: Tournament, now: datetime) -> None:
        assert t.rounds is not None
        if t.round > 0:
            if await self.db(self.tstore.unfinished, t.id):
                return  # the round goes on
            if t.round_every and t.round_started is not None:
                if now < t.round_started + timedelta(seconds=t.round_every):
                    return
            if t.round >= t.rounds:
                await self.db(self.tstore.finish, t.id, self.process)
                self.on_change(t.id)
                return
        data = await self.db(self.tstore.standings_data, t.id)
        if data is None:
            return
        _, entrants, played = data
        number = t.round + 1
        active = [e for e in entrants if not e.paused and e.joined_round <= number]
        if len(active) < 2:
            await self.db(self.tstore.finish, t.id, self.process)  # nobody left to play
            self.on_change(t.id)
            return
        try:
            # Pairing a big round takes a while (seconds for hundreds): off the event loop.
            pairing = await asyncio.to_thread(
                pair_round, swiss_entrants(entrants), swiss_games(played or []), number, late_points=t.late
            )
        except Exception as e:  # SwissError: no legal pairing is left; anything else: the library's own trouble
            log.warning("Swiss tournament %s ends early: round %d cannot be paired (%s)", t.id, number, e)
            await self.db(self.tstore.finish, t.id, self.process)
            self.on_change(t.id)
            return
        pairs = [(a, b) for a, b in pairing if b is not None]
        bye = next((a for a, b in pairing if b is None), None)
        made = await self.db(
            self.tstore.pair,
            t.id,
            self.process,
            pairs,
            tournament_seeds,
            round_number=number,
            bye=bye,
            first_deals=True,
            new_round=True,
        )
        self.pairings += len(made) // 2
        self.on_change(t.id)
        self.on_paired(t.id, made)
