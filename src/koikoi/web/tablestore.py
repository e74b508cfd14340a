"""What happens at a table besides the moves, in the database: clocks, games that end early, who is at the
table, rematches. Every method runs on a database thread (:class:`~koikoi.web.database.Database`).

Each ending is decided once, whichever server process decides it: the game's row is finished with
``UPDATE ... WHERE moves = <the move the decider saw> AND status = 'playing'``, so that of a flag, a
resignation, a claim and a move arriving at the same moment (in one process or several) exactly one
changes the game and the others change nothing. The players' ratings are updated in that transaction.

A player is never flagged for the server's own outage: each process notes a sign of life in
``server_beats`` every second, and the first to find that none was noted for a while (every process,
or the database, was down) moves every running deadline on by the gap before anyone is flagged. A
process that starts knows it was not serving: if no other process noted a sign of life since
:data:`STARTING_SILENCE` ago (on SQLite, which one process uses, at all), nobody was serving since the
last sign of life, and the whole gap is made good however short it was (a restart of a second or two).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, exists, func, insert, select, update
from sqlalchemy.engine import Connection

from .. import glicko2
from ..clocks import ClockError, TimeControl, time_control
from .schema import ai_turns, clocks, games, invitations, rated_games, rating_history, seats, server_beats
from .store import NO_RESULT, Store, StoreError, add_clock, insert_game, rate

__all__ = ["TableStore", "StoredClock", "Presence", "ON_TIME", "BEAT", "OUTAGE", "STARTING_SILENCE", "DEAD"]

ON_TIME = ("lose", "computer")  # what running out of time does: lose the match, or the computer moves
BEAT = 1.0  # each process notes a sign of life this often (seconds)
OUTAGE = 4.0  # no sign of life from any process for this long: an outage, for which nobody is flagged
# A process that starts and finds no sign of life from any other for this long: nobody was serving
# (a live process notes one every BEAT; this leaves it half a beat late).
STARTING_SILENCE = 1.5 * BEAT
DEAD = 6.0  # a process silent this long holds no socket any more: its seats' players are away
# The advisory lock (PostgreSQL) that outage checks take alone and endings on time take shared.
_CLOCK_LOCK = 0x6B6F696B0105
_FORGET_BEATS = 86400.0  # a process silent for a day is forgotten


@dataclass(frozen=True, slots=True)
class StoredClock:
    control: TimeControl
    on_time: str
    banks: tuple[float, float]
    turn_started: float | None  # when the decision being made started using its time (Unix seconds)
    deadline: float | None  # when the player to move runs out; None while the clock is not running
    flagged: float | None  # the deadline that ran out, once one did


@dataclass(frozen=True, slots=True)
class Presence:
    here: bool
    away_since: float | None  # when the player was last at the table (None: never left, or here)
    closed: bool  # they closed the tab (or left the page), rather than losing their connection


def _clock_from(gid: str, row: Any) -> StoredClock:
    try:
        control = time_control(row.control)
        if row.on_time not in ON_TIME:
            raise ValueError(f"its stored action on time {row.on_time!r} is not one of {', '.join(ON_TIME)}")
        numbers = (row.bank0, row.bank1, row.turn_started, row.deadline, row.flagged)
        if not all(v is None or (isinstance(v, float | int) and not isinstance(v, bool)) for v in numbers):
            raise ValueError("its stored clock holds a value that is not a number")
        if row.bank0 is None or row.bank1 is None or min(row.bank0, row.bank1) < 0:
            raise ValueError("its stored banks are not two times of at least zero")
    except (ClockError, ValueError) as e:
        raise StoreError(f"game {gid}: {e}", game_id=gid) from None
    return StoredClock(
        control,
        row.on_time,
        (float(row.bank0), float(row.bank1)),
        None if row.turn_started is None else float(row.turn_started),
        None if row.deadline is None else float(row.deadline),
        None if row.flagged is None else float(row.flagged),
    )


class TableStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    # -- clocks -------------------------------------------------------------------------------------------

    def clock_of(self, game_id: str) -> StoredClock | None:
        with self.store.reading() as conn:
            row = conn.execute(select(clocks).where(clocks.c.game_id == game_id)).first()
        return None if row is None else _clock_from(game_id, row)

    def due(self, now: float, limit: int = 200) -> list[str]:
        """Games being played whose player to move has run out of time by ``now``, soonest first."""
        q = (
            select(clocks.c.game_id)
            .join(games, games.c.id == clocks.c.game_id)
            .where(clocks.c.deadline <= now, games.c.status == "playing")
            .order_by(clocks.c.deadline)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return list(conn.execute(q).scalars())

    def beat(self, process: str, now: float, *, starting: bool = False) -> float:
        """Note that ``process`` is alive at ``now``. If no process had been for :data:`OUTAGE` seconds,
        move every running deadline on by the gap first (once, whichever process finds it) and return it.
        ``starting``: the process's first sign of life, when it knows it was not serving before: then no
        other process's being silent for :data:`STARTING_SILENCE` (on SQLite: at all) is enough, and the
        whole time since the last sign of life is made good."""
        gap = 0.0
        with self.engine.begin() as conn:
            if not self.store.is_sqlite:
                conn.execute(select(func.pg_advisory_xact_lock(_CLOCK_LOCK)))
            last = conn.execute(select(func.max(server_beats.c.seen))).scalar()
            silent = 0.0 if last is None else now - last
            if starting and (self.store.is_sqlite or silent > STARTING_SILENCE) and silent > 0:
                gap = silent  # nobody served since ``last``: a restart, however short
            elif silent > OUTAGE:
                gap = silent - BEAT  # the processes were alive for a beat after their last sign of life
            if gap > 0:
                conn.execute(
                    update(clocks)
                    .where(clocks.c.deadline.is_not(None))
                    .values(deadline=clocks.c.deadline + gap, turn_started=clocks.c.turn_started + gap)
                )
            if (
                conn.execute(update(server_beats).where(server_beats.c.process == process).values(seen=now)).rowcount
                == 0
            ):
                conn.execute(insert(server_beats).values(process=process, seen=now))
            conn.execute(delete(server_beats).where(server_beats.c.seen < now - _FORGET_BEATS))
        return gap

    # -- ending a game early ------------------------------------------------------------------------------

    def end(
        self,
        game_id: str,
        moves: int,
        ending: str,
        winner: int | None,
        now: float,
        *,
        on_time: bool = False,
        aborted_by: int | None = None,
    ) -> bool:
        """End game ``game_id``, still at move ``moves``, by ``ending`` with ``winner`` (None: no result);
        True if this call ended it. ``on_time``: only if its deadline has passed by ``now`` (by the
        database's stored deadline, which an outage moves on) and no outage is being made good.
        ``aborted_by``: the seat that aborted it, for an abort."""
        with self.engine.begin() as conn:
            if on_time:
                if not self.store.is_sqlite:
                    conn.execute(select(func.pg_advisory_xact_lock_shared(_CLOCK_LOCK)))
                last = conn.execute(select(func.max(server_beats.c.seen))).scalar()
                if last is None or now - last > OUTAGE:
                    return False  # the beat that finds the outage moves the deadlines on first
                # Stamped when it is written, not when the caller looked: the game's ``updated`` minus the
                # clock's ``flagged`` (the deadline that ran out) is then how late the flag really came.
                now = max(now, time.time())
            return self._finish(conn, game_id, moves, ending, winner, now, on_time=on_time, aborted_by=aborted_by)

    def _finish(
        self,
        conn: Connection,
        game_id: str,
        moves: int,
        ending: str,
        winner: int | None,
        now: float,
        *,
        on_time: bool,
        aborted_by: int | None = None,
    ) -> bool:
        """In the transaction ``conn``: the game, still at move ``moves`` and being played, is finished by
        ``ending`` (at most once, whoever else tries), its clock stopped and its ratings updated."""
        stamp = datetime.fromtimestamp(now, UTC)
        q = update(games).where(games.c.id == game_id, games.c.moves == moves, games.c.status == "playing")
        if on_time:
            q = q.where(exists().where(clocks.c.game_id == game_id, clocks.c.deadline <= now))
        row = conn.execute(
            q.values(status="finished", ending=ending, winner=winner, updated=stamp, aborted_by=aborted_by).returning(
                games.c.scores
            )
        ).first()
        if row is None:
            return False
        conn.execute(
            update(clocks)
            .where(clocks.c.game_id == game_id)
            .values(flagged=clocks.c.deadline if on_time else None, deadline=None)
        )
        if ending in NO_RESULT:
            conn.execute(delete(rated_games).where(rated_games.c.game_id == game_id))
        else:
            s0, s1 = (int(x) for x in row.scores.split(","))
            rate(conn, game_id, (s0, s1), stamp, lock=not self.store.is_sqlite, winner=winner)
        self.store.tournament_ended(conn, game_id)
        self.store.announce(conn, game_id, -1)
        return True

    def rated_category(self, game_id: str) -> str | None:
        """The rating category of a rated game (``short``, ``long``); None for a casual one (or an aborted
        rated one, which rates nobody)."""
        with self.store.reading() as conn:
            category = conn.execute(select(rated_games.c.category).where(rated_games.c.game_id == game_id)).scalar()
        return None if category is None else str(category)

    def rating_change(self, game_id: str) -> dict[str, Any] | None:
        """What a finished rated game did to its players' ratings, for its result: None for a casual game,
        or one not rated (yet); ``{"counted": False}`` for one past the pair's daily count
        (:data:`~koikoi.web.store.RATED_GAMES_A_PAIR`); else ``{"counted": True, "players": [{"before",
        "after"}, ...]}`` by seat, in whole points."""
        with self.store.reading() as conn:
            game = conn.execute(select(rated_games).where(rated_games.c.game_id == game_id)).first()
            if game is None or game.rated is None:
                return None
            after = {
                r.account_id: r for r in conn.execute(select(rating_history).where(rating_history.c.game_id == game_id))
            }
            players = []
            for account in (game.account0, game.account1):
                row = after.get(account)
                if row is None:
                    return {"counted": False}
                before = conn.execute(
                    select(rating_history.c.rating)
                    .where(
                        (rating_history.c.account_id == account)
                        & (rating_history.c.category == game.category)
                        & (rating_history.c.at < row.at)
                    )
                    .order_by(rating_history.c.at.desc())
                    .limit(1)
                ).scalar()
                start = glicko2.new_player().rating if before is None else float(before)
                players.append({"before": round(start), "after": round(float(row.rating))})
        return {"counted": True, "players": players}

    # -- who is at the table ------------------------------------------------------------------------------

    def arrive(self, token: str, process: str) -> None:
        """The seat's player is at the table, on ``process``."""
        with self.engine.begin() as conn:
            row = conn.execute(
                update(seats)
                .where(seats.c.token == token)
                .values(present_on=process, away_since=None, away_closed=None)
                .returning(seats.c.game_id)
            ).first()
            if row is not None:
                self.store.announce(conn, row.game_id, -1)

    def leave(self, token: str, process: str, *, closed: bool, now: float) -> None:
        """The seat's player left ``process``'s table (their last socket there closed), unless they are at
        the table on another process by now."""
        with self.engine.begin() as conn:
            row = conn.execute(
                update(seats)
                .where(seats.c.token == token, seats.c.present_on == process)
                .values(present_on=None, away_since=now, away_closed=closed)
                .returning(seats.c.game_id)
            ).first()
            if row is not None:
                self.store.announce(conn, row.game_id, -1)

    def _presence(self, conn: Connection, game_id: str, now: float, *, lock: bool) -> list[Presence]:
        if lock:
            # The seat rows are locked first, on their own, and read in the next statement, which sees what
            # was committed while this waited for the lock. Locked within the join instead, a player who
            # came back meanwhile would be read with their new process but without its sign of life (the
            # join is not made again for a row updated under the lock): away, since now.
            conn.execute(
                select(seats.c.seat).where(seats.c.game_id == game_id).order_by(seats.c.seat).with_for_update()
            ).all()
        q = (
            select(seats.c.seat, seats.c.present_on, seats.c.away_since, seats.c.away_closed, server_beats.c.seen)
            .outerjoin(server_beats, server_beats.c.process == seats.c.present_on)
            .where(seats.c.game_id == game_id)
            .order_by(seats.c.seat)
        )
        out = []
        for r in conn.execute(q):
            if r.present_on is not None and r.seen is not None and now - r.seen <= DEAD:
                out.append(Presence(True, None, False))
            elif r.present_on is not None:  # its process stopped beating: away since it last did
                out.append(Presence(False, r.seen, False))
            else:
                out.append(Presence(False, r.away_since, bool(r.away_closed)))
        return out

    def presence_of(self, game_id: str, now: float) -> list[Presence]:
        with self.store.reading() as conn:
            return self._presence(conn, game_id, now, lock=False)

    def claim(self, game_id: str, moves: int, claimer: int, now: float, *, wait: float, wait_closed: float) -> float:
        """Claim victory in ``game_id`` (at move ``moves``) for ``claimer``, whose opponent is away on
        their own turn: 0 if the game is now won, else the seconds left before it can be claimed
        (``inf``: the opponent is at the table). The opponent's seat row is locked while this decides,
        so a player coming back at the same moment, on any process, is either in time or not."""
        with self.engine.begin() as conn:
            presence = self._presence(conn, game_id, now, lock=not self.store.is_sqlite)
            away = presence[1 - claimer]
            clock = conn.execute(select(clocks).where(clocks.c.game_id == game_id)).first()
            if away.here or clock is None:
                return float("inf")
            since = max(away.away_since or now, clock.turn_started or now)
            left = (wait_closed if away.closed else wait) - (now - since)
            if left > 0:
                return left
            if not self._finish(conn, game_id, moves, "claim", claimer, now, on_time=False):
                raise StoreError(f"game {game_id} has moved on", conflict=True)
        return 0.0

    # -- rematches ----------------------------------------------------------------------------------------

    def offer_rematch(self, game_id: str, seat: int) -> bool:
        """``seat`` offers a rematch of the finished game; False if an offer (or the rematch) is there."""
        with self.engine.begin() as conn:
            got = conn.execute(
                update(games)
                .where(
                    games.c.id == game_id,
                    games.c.status == "finished",
                    games.c.rematch_offer.is_(None),
                    games.c.rematch.is_(None),
                )
                .values(rematch_offer=seat)
            ).rowcount
            if got:
                self.store.announce(conn, game_id, -1)
        return bool(got)

    def decline_rematch(self, game_id: str) -> None:
        with self.engine.begin() as conn:
            got = conn.execute(
                update(games).where(games.c.id == game_id, games.c.rematch.is_(None)).values(rematch_offer=None)
            ).rowcount
            if got:
                self.store.announce(conn, game_id, -1)

    def accept_rematch(
        self, game_id: str, seat: int, *, rules: dict[str, Any], seed: int, ai_seed: int, first: int, now: float
    ) -> str:
        """``seat`` accepts the other's offer: the rematch is made, the seats swapped (the same players,
        names, clock and ratedness), and its id returned. Raises :class:`StoreError` when there is no
        offer of the other seat to accept (withdrawn, or accepted already)."""
        with self.engine.begin() as conn:
            got = conn.execute(
                update(games)
                .where(
                    games.c.id == game_id,
                    games.c.status == "finished",
                    games.c.rematch_offer == 1 - seat,
                    games.c.rematch.is_(None),
                )
                .values(rematch="pending")
            ).rowcount
            if got != 1:
                raise StoreError("there is no rematch offer to accept", conflict=True)
            old = conn.execute(select(games).where(games.c.id == game_id)).one()
            held = conn.execute(select(seats).where(seats.c.game_id == game_id).order_by(seats.c.seat)).all()
            specs = [(0, held[1].kind, held[1].name, held[1].owner), (1, held[0].kind, held[0].name, held[0].owner)]
            new_id, _tokens, _invite = insert_game(
                conn,
                rules=rules,
                seed=seed,
                opponent=old.opponent,
                ai_seed=ai_seed,
                status="playing",
                seat_specs=specs,
                computer_first=old.opponent != "friend" and specs[first][1] == "ai",
            )
            clock = conn.execute(select(clocks).where(clocks.c.game_id == game_id)).first()
            if clock is not None:
                add_clock(conn, new_id, time_control(clock.control), clock.on_time, first=first, start=now)
            was_rated = conn.execute(select(rated_games).where(rated_games.c.game_id == game_id)).first()
            if was_rated is not None:
                conn.execute(
                    insert(rated_games).values(
                        game_id=new_id,
                        category=was_rated.category,
                        account0=was_rated.account1,
                        account1=was_rated.account0,
                        rated=None,
                    )
                )
            conn.execute(update(games).where(games.c.id == game_id).values(rematch=new_id))
            self.store.announce(conn, game_id, -1)
        return new_id

    def seat_in(self, game_id: str, seat: int) -> str | None:
        """The token of seat ``seat`` of game ``game_id`` (the rematch's seat of a player of the old game)."""
        with self.engine.connect() as conn:
            return conn.execute(select(seats.c.token).where(seats.c.game_id == game_id, seats.c.seat == seat)).scalar()

    # -- games nobody finishes ------------------------------------------------------------------------

    def expire(self, *, invitations_before: datetime, idle_before: datetime, limit: int = 500) -> list[str]:
        """End friend games whose invitation nobody took before ``invitations_before`` ("expired"), and
        casual games without a move since ``idle_before`` ("closed"); their ids."""
        ended = []
        with self.engine.begin() as conn:
            waiting = select(invitations.c.game_id).where(
                invitations.c.spent.is_(None), invitations.c.created < invitations_before
            )
            unused = games.c.id.in_(waiting)
            idle = games.c.updated < idle_before
            unrated = ~exists().where(rated_games.c.game_id == games.c.id)
            for ending, which in (
                ("expired", (games.c.status == "waiting") & unused),
                ("closed", (games.c.status == "playing") & idle & unrated),
            ):
                ids = list(conn.execute(select(games.c.id).where(which).limit(limit)).scalars())
                if not ids:
                    continue
                conn.execute(
                    update(games)
                    .where(games.c.id.in_(ids), which)
                    .values(status="finished", ending=ending, updated=datetime.now(UTC))
                )
                conn.execute(update(clocks).where(clocks.c.game_id.in_(ids)).values(deadline=None))
                conn.execute(delete(ai_turns).where(ai_turns.c.game_id.in_(ids)))
                for gid in ids:
                    self.store.announce(conn, gid, -1)
                ended += ids
        return ended
