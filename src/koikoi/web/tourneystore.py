"""Tournaments in the database (the tables ``tournaments``, ``tournament_players`` and ``tournament_games``
of :mod:`koikoi.web.schema`); every method runs on a database thread (:class:`~koikoi.web.database.Database`).

Players join, pause and come back through :class:`TourneyStore` from any process. What changes a
tournament's course (its start, each result counted into the standings, each pairing and its games, its
end) is written by its **director** alone: the one process that holds the tournament's lease
(``director``, ``lease_until``), taken when it is free or has run out and renewed while that process lives
(:mod:`koikoi.web.director`). Every write of the director's renews the lease in its own transaction, with
``WHERE director = <me> AND lease_until > now``: a process that lost the lease (it stalled, another took
over) has its whole transaction refused, so two directors never both pair or count. A player's row is
taken for a match with ``UPDATE ... WHERE game_id IS NULL AND NOT paused``: a player who paused while a
wave read them is not paired, and the wave is undone and made again.

Times of the lease are the database's own clock on PostgreSQL (processes on hosts whose clocks differ agree
on when a lease runs out), Unix seconds. On SQLite one process serves, and its clock is the one.
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import String, case, func, insert, literal, or_, select, update
from sqlalchemy.engine import Connection

from ..clocks import deadline_of, time_control
from ..rules import RuleSet
from .accountstore import owner_key
from .arena import berserk_counts, counts_at_end
from .lobbystore import ON_TIME, a_person, playing_in_real_time
from .pairing import category_of
from .schema import (
    actions,
    clocks,
    games,
    rated_games,
    seats,
    tournament_games,
    tournament_players,
    tournaments,
)
from .store import (
    BOT_CHANNEL,
    TOURNAMENT_CHANNEL,
    Store,
    StoreError,
    add_clocks,
    new_token,
    result_for,
    two_player_games,
)

__all__ = [
    "LEASE",
    "MAX_PLAYERS",
    "MAX_SWISS_PLAYERS",
    "NO_SHOWS",
    "PRESENT",
    "Entrant",
    "LostLease",
    "Paired",
    "Played",
    "Tournament",
    "TourneyError",
    "TourneyStore",
]

log = logging.getLogger("koikoi.web")

LEASE = 4.0  # seconds a director's lease lasts unless renewed: a dead director's tournaments move on after it
MAX_PLAYERS = 2000  # players of one arena at most: a wave stays bounded
# ... and of a Swiss event: the Dutch pairing of a round of 500 takes about a second (koikoi.web.swiss), of
# 2,000 more than a minute.
MAX_SWISS_PLAYERS = 500
# A player the arena has not seen for this long (no tournament page, no bot stream, no match just ended) is
# not paired: nobody is paired with someone who has gone.
PRESENT = timedelta(seconds=30)
# Matches in a row that a player aborted or never came to (a no-show is an abort: docs/web.md, "Leaving a
# game") that pause them in the tournament: they come back by joining again.
NO_SHOWS = 2
WAVE_PAIRS = 100  # matches made in one transaction at most: a wave stays short; the next pairs the rest
KINDS = ("arena", "swiss")
STATUSES = ("upcoming", "running", "finished", "cancelled")

# seeds(rules, first) -> (the deal's secret seed, the computer's seed, the seat that moves first): ``first``
# None for any, or the seat that must deal (and so move) first.
Seeds = Callable[[RuleSet, int | None], tuple[int, int, int]]


class TourneyError(Exception):
    """A request the tournament refuses: ``code`` and a message that says why (koikoi.web.errors)."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class LostLease(Exception):
    """This process no longer directs the tournament (its lease ran out and another took it): its
    transaction was rolled back, and it leaves the tournament to the other."""


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Tournament:
    """A tournament as stored (:data:`~koikoi.web.schema.tournaments`), the password's hash left out."""

    id: str
    kind: str
    name: str
    created_by: str | None
    rules: dict[str, Any]
    clock: str
    rated: bool
    bots: bool
    berserk: bool
    min_moves: int
    access: str
    starts: datetime
    minutes: int | None
    grace: int
    rounds: int | None
    round_every: int | None
    late: str
    status: str
    round: int
    round_started: datetime | None
    ended: datetime | None
    players: int
    created: datetime

    @staticmethod
    def from_row(row: Any) -> Tournament:
        return Tournament(
            id=row.id,
            kind=row.kind,
            name=row.name,
            created_by=row.created_by,
            rules=json.loads(row.rules),
            clock=row.clock,
            rated=bool(row.rated),
            bots=bool(row.bots),
            berserk=bool(row.berserk),
            min_moves=int(row.min_moves),
            access=row.access,
            starts=_aware(row.starts),
            minutes=row.minutes,
            grace=int(row.grace),
            rounds=row.rounds,
            round_every=row.round_every,
            late=row.late,
            status=row.status,
            round=int(row.round),
            round_started=None if row.round_started is None else _aware(row.round_started),
            ended=None if row.ended is None else _aware(row.ended),
            players=int(row.players),
            created=_aware(row.created),
        )

    @property
    def hands(self) -> int:
        return int(self.rules.get("hands", 1))

    @property
    def category(self) -> str:
        """The rating category of its matches (koikoi.web.pairing)."""
        return category_of(self.hands)

    @property
    def ends(self) -> datetime | None:
        """An arena's end (its countdown's zero); None for a Swiss event, which ends with its last round."""
        return None if self.minutes is None else self.starts + timedelta(minutes=self.minutes)


@dataclass(frozen=True, slots=True)
class Entrant:
    """A player of a tournament and their standing (:data:`~koikoi.web.schema.tournament_players`)."""

    account_id: str
    name: str
    rating: float
    bot: bool
    joined: datetime
    joined_round: int
    score: int
    games: int
    wins: int
    draws: int
    losses: int
    streak: int
    opponent_ratings: float
    berserks: int
    aborts: int
    paused: bool
    seen: datetime
    waiting_since: float | None
    game_id: str | None
    last_opponent: str | None

    @staticmethod
    def from_row(row: Any) -> Entrant:
        return Entrant(
            account_id=row.account_id,
            name=row.name,
            rating=float(row.rating),
            bot=bool(row.bot),
            joined=_aware(row.joined),
            joined_round=int(row.joined_round),
            score=int(row.score),
            games=int(row.games),
            wins=int(row.wins),
            draws=int(row.draws),
            losses=int(row.losses),
            streak=int(row.streak),
            opponent_ratings=float(row.opponent_ratings),
            berserks=int(row.berserks),
            aborts=int(row.aborts),
            paused=bool(row.paused),
            seen=_aware(row.seen),
            waiting_since=row.waiting_since,
            game_id=row.game_id,
            last_opponent=row.last_opponent,
        )


@dataclass(frozen=True, slots=True)
class Played:
    """A match (or a Swiss bye: ``account1`` None, no game) of a tournament
    (:data:`~koikoi.web.schema.tournament_games`)."""

    game_id: str | None
    round: int
    account0: str
    account1: str | None
    berserk0: bool
    berserk1: bool
    result0: float | None
    points0: int | None
    points1: int | None
    started: datetime
    counted: datetime | None

    @staticmethod
    def from_row(row: Any) -> Played:
        return Played(
            game_id=row.game_id,
            round=int(row.round),
            account0=row.account0,
            account1=row.account1,
            berserk0=bool(row.berserk0),
            berserk1=bool(row.berserk1),
            result0=row.result0,
            points0=row.points0,
            points1=row.points1,
            started=_aware(row.started),
            counted=None if row.counted is None else _aware(row.counted),
        )


@dataclass(frozen=True, slots=True)
class Paired:
    """A player paired by the director: the match's game and their own seat's token (told to them alone)."""

    account_id: str
    game_id: str
    token: str


class TourneyStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def _now(self) -> datetime:
        return datetime.now(UTC)

    def _clock_now(self) -> Any:
        """Now in Unix seconds, for leases: the database's clock on PostgreSQL, this process's on SQLite."""
        if self.store.is_sqlite:
            return time.time()
        return func.extract("epoch", func.clock_timestamp())

    def _notify(self, conn: Connection, payloads: list[str]) -> None:
        """Announce ``payloads`` on the tournaments' channel when this transaction commits (PostgreSQL)."""
        if not self.store.is_sqlite and payloads:
            for i in range(0, len(payloads), 100):
                conn.execute(select(*(func.pg_notify(TOURNAMENT_CHANNEL, p) for p in payloads[i : i + 100])))

    # -- made, read and listed ---------------------------------------------------------------------------

    def create(self, values: dict[str, Any]) -> Tournament | None:
        """A new tournament from checked ``values`` (koikoi.web.tournaments); None when it has a ``schedule``
        key that another process made first."""
        now = self._now()
        row = {
            "id": new_token(9),
            "created_by": None,
            "schedule": None,
            "password_hash": None,
            "minutes": None,
            "rounds": None,
            "round_every": None,
            "status": "upcoming",
            "round": 0,
            "round_started": None,
            "ended": None,
            "players": 0,
            "director": None,
            "lease_until": None,
            "created": now,
            **values,
        }
        row["rules"] = json.dumps(row["rules"])
        try:
            with self.engine.begin() as conn:
                if row["schedule"] is not None:
                    taken = conn.execute(select(tournaments.c.id).where(tournaments.c.schedule == row["schedule"]))
                    if taken.first() is not None:
                        return None
                conn.execute(insert(tournaments).values(**row))
                self._notify(conn, ["list"])
        except Exception as e:
            if row["schedule"] is not None and "unique" in str(e).lower():
                return None  # another process made this scheduled one at the same moment
            raise
        got = self.get(row["id"])
        assert got is not None
        return got

    def get(self, tournament_id: str) -> Tournament | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(tournaments).where(tournaments.c.id == tournament_id)).first()
        return None if row is None else Tournament.from_row(row)

    def upcoming_by(self, account_id: str) -> int:
        """How many tournaments ``account_id`` made that have not started yet."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(tournaments)
                    .where((tournaments.c.created_by == account_id) & (tournaments.c.status == "upcoming"))
                ).scalar_one()
            )

    def password_hash(self, tournament_id: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(tournaments.c.password_hash).where(tournaments.c.id == tournament_id)).scalar()

    def listing(self, limit: int = 30) -> dict[str, list[Tournament]]:
        """The listed tournaments (not those reached by link alone): upcoming (soonest first), running, and
        the last finished."""
        out: dict[str, list[Tournament]] = {}
        listed = tournaments.c.access != "link"
        with self.engine.connect() as conn:
            for status, order in (
                ("upcoming", tournaments.c.starts.asc()),
                ("running", tournaments.c.starts.asc()),
                ("finished", tournaments.c.ended.desc()),
            ):
                rows = conn.execute(
                    select(tournaments).where(listed & (tournaments.c.status == status)).order_by(order).limit(limit)
                ).all()
                out[status] = [Tournament.from_row(r) for r in rows]
        return out

    def standings_data(self, tournament_id: str) -> tuple[Tournament, list[Entrant], list[Played] | None] | None:
        """What a tournament's standings are made of, in one trip: the tournament, its players, and (a Swiss
        event) its matches and byes; None if there is no such tournament."""
        with self.engine.connect() as conn:
            row = conn.execute(select(tournaments).where(tournaments.c.id == tournament_id)).first()
            if row is None:
                return None
            t = Tournament.from_row(row)
            entrants = [
                Entrant.from_row(r)
                for r in conn.execute(
                    select(tournament_players).where(tournament_players.c.tournament_id == tournament_id)
                )
            ]
            played = None
            if t.kind == "swiss":
                played = [
                    Played.from_row(r)
                    for r in conn.execute(
                        select(tournament_games)
                        .where(tournament_games.c.tournament_id == tournament_id)
                        .order_by(tournament_games.c.id)
                    )
                ]
        return t, entrants, played

    def entrants(self, tournament_id: str) -> list[Entrant]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(tournament_players).where(tournament_players.c.tournament_id == tournament_id)
            ).all()
        return [Entrant.from_row(r) for r in rows]

    def played(self, tournament_id: str, account_id: str | None = None) -> list[Played]:
        """The tournament's matches and byes (``account_id``: theirs), oldest first."""
        q = select(tournament_games).where(tournament_games.c.tournament_id == tournament_id)
        if account_id is not None:
            q = q.where((tournament_games.c.account0 == account_id) | (tournament_games.c.account1 == account_id))
        with self.engine.connect() as conn:
            rows = conn.execute(q.order_by(tournament_games.c.id)).all()
        return [Played.from_row(r) for r in rows]

    def token_of(self, account_id: str, game_id: str) -> str | None:
        """The seat token of ``account_id`` in ``game_id`` (told to that player alone)."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(seats.c.token).where((seats.c.game_id == game_id) & (seats.c.owner == owner_key(account_id)))
            ).scalar()

    def tournaments_of(self, account_id: str, limit: int = 20) -> list[tuple[Tournament, Entrant]]:
        """The tournaments ``account_id`` joined, the latest first, with their standing in each."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(tournaments, tournament_players)
                .select_from(
                    tournament_players.join(tournaments, tournaments.c.id == tournament_players.c.tournament_id)
                )
                .where(tournament_players.c.account_id == account_id)
                .order_by(tournaments.c.starts.desc())
                .limit(limit)
            ).all()
        return [(Tournament.from_row(r), Entrant.from_row(r)) for r in rows]

    def match_of(self, game_id: str, seat: int) -> tuple[Tournament, bool, bool] | None:
        """The tournament of a match, whether ``seat`` berserked in it, and whether they have decided yet."""
        with self.engine.connect() as conn:
            row = conn.execute(select(tournament_games).where(tournament_games.c.game_id == game_id)).first()
            if row is None:
                return None
            t = conn.execute(select(tournaments).where(tournaments.c.id == row.tournament_id)).first()
            moved = conn.execute(
                select(actions.c.seq).where((actions.c.game_id == game_id) & (actions.c.seat == seat)).limit(1)
            ).first()
        return Tournament.from_row(t), bool(row.berserk0 if seat == 0 else row.berserk1), moved is not None

    # -- a player's own doings ----------------------------------------------------------------------------

    def join(self, tournament_id: str, account_id: str, name: str, rating: float, *, bot: bool) -> Entrant:
        """``account_id`` joins (or comes back to a tournament they paused or withdrew from)."""
        now = self._now()
        with self.engine.begin() as conn:
            q = select(tournaments).where(tournaments.c.id == tournament_id)
            row = conn.execute(q if self.store.is_sqlite else q.with_for_update()).first()
            if row is None:
                raise TourneyError("no_tournament", "there is no such tournament", 404)
            t = Tournament.from_row(row)
            if t.status not in ("upcoming", "running"):
                raise TourneyError("tournament_over", "this tournament is over: it takes no more players")
            if t.kind == "arena" and t.ends is not None and now >= t.ends:
                raise TourneyError("tournament_over", "this arena's time is up: it takes no more players")
            if t.kind == "swiss" and t.rounds is not None and t.round >= t.rounds:
                raise TourneyError("tournament_over", "this Swiss event is in its last round: it takes no more players")
            if bot and not t.bots:
                raise TourneyError("no_bots", "this tournament is for people: bots may not join it", 403)
            mine = (tournament_players.c.tournament_id == tournament_id) & (
                tournament_players.c.account_id == account_id
            )
            there = conn.execute(select(tournament_players).where(mine)).first()
            if there is not None:
                e = Entrant.from_row(there)
                conn.execute(
                    update(tournament_players)
                    .where(mine)
                    .values(
                        paused=False,
                        aborts=0,
                        seen=now,
                        waiting_since=e.waiting_since
                        if e.game_id is not None or (not e.paused and e.waiting_since is not None)
                        else now.timestamp(),
                    )
                )
            else:
                most = MAX_SWISS_PLAYERS if t.kind == "swiss" else MAX_PLAYERS
                if t.players >= most:
                    raise TourneyError("tournament_full", f"this tournament has {most} players, the most")
                conn.execute(
                    insert(tournament_players).values(
                        tournament_id=tournament_id,
                        account_id=account_id,
                        name=name,
                        rating=rating,
                        bot=bot,
                        joined=now,
                        joined_round=t.round + 1 if t.kind == "swiss" else 1,
                        score=0,
                        games=0,
                        wins=0,
                        draws=0,
                        losses=0,
                        streak=0,
                        opponent_ratings=0.0,
                        berserks=0,
                        aborts=0,
                        paused=False,
                        seen=now,
                        waiting_since=now.timestamp(),
                        game_id=None,
                        last_opponent=None,
                    )
                )
                conn.execute(
                    update(tournaments)
                    .where(tournaments.c.id == tournament_id)
                    .values(players=tournaments.c.players + 1)
                )
            self._notify(conn, [f"tour {tournament_id}"])
            got = conn.execute(select(tournament_players).where(mine)).first()
        return Entrant.from_row(got)

    def pause(self, tournament_id: str, account_id: str) -> bool:
        """``account_id`` pauses (an arena) or withdraws (a Swiss event): no more pairings until they join
        again; the match they are playing goes on and counts. False if they are not a player of it."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(tournament_players)
                .where(
                    (tournament_players.c.tournament_id == tournament_id)
                    & (tournament_players.c.account_id == account_id)
                )
                .values(paused=True, waiting_since=None)
            ).rowcount
            if done:
                self._notify(conn, [f"tour {tournament_id}"])
        return bool(done)

    def seen(self, tournament_id: str, account_ids: list[str]) -> None:
        """``account_ids`` are on the tournament's page (or a bot's stream) now."""
        now = self._now()
        with self.engine.begin() as conn:
            for i in range(0, len(account_ids), 500):
                conn.execute(
                    update(tournament_players)
                    .where(
                        (tournament_players.c.tournament_id == tournament_id)
                        & tournament_players.c.account_id.in_(account_ids[i : i + 500])
                    )
                    .values(seen=now)
                )

    def seen_everywhere(self, account_ids: list[str]) -> None:
        """``account_ids`` (bots with an open stream) are present in every running tournament they joined."""
        now = self._now()
        live = select(tournaments.c.id).where(tournaments.c.status.in_(("upcoming", "running")))
        with self.engine.begin() as conn:
            for i in range(0, len(account_ids), 500):
                conn.execute(
                    update(tournament_players)
                    .where(
                        tournament_players.c.account_id.in_(account_ids[i : i + 500])
                        & tournament_players.c.tournament_id.in_(live)
                    )
                    .values(seen=now)
                )

    # -- the director's -----------------------------------------------------------------------------------

    def lease(self, process: str, soon: float = 60.0) -> tuple[list[str], list[str]]:
        """Take or renew the lease of every tournament that needs directing (running, or starting within
        ``soon`` seconds) and that nobody else holds a live lease on: the ids this process directs now, and
        those of them it took over from another process (whose lease had run out)."""
        now = self._clock_now()
        free = or_(
            tournaments.c.director.is_(None),
            tournaments.c.director == process,
            tournaments.c.lease_until.is_(None),
            tournaments.c.lease_until < now,
        )
        due = (tournaments.c.status == "running") | (
            (tournaments.c.status == "upcoming") & (tournaments.c.starts <= self._now() + timedelta(seconds=soon))
        )
        with self.engine.begin() as conn:
            before = {
                r.id: r.director
                for r in conn.execute(select(tournaments.c.id, tournaments.c.director).where(due & free))
            }
            if not before:
                return [], []
            rows = conn.execute(
                update(tournaments)
                .where(tournaments.c.id.in_(sorted(before)) & free)
                .values(director=process, lease_until=now + LEASE)
                .returning(tournaments.c.id)
            ).all()
        held = sorted(r.id for r in rows)
        return held, [tid for tid in held if before.get(tid) not in (None, process)]

    def release(self, process: str) -> None:
        """Give up this process's leases at once (it is stopping): another process takes over now."""
        with self.engine.begin() as conn:
            conn.execute(update(tournaments).where(tournaments.c.director == process).values(lease_until=0.0))

    def _fence(self, conn: Connection, tournament_id: str, process: str) -> Tournament:
        """In a director's transaction: renew the lease (and lock the row) if this process still holds it;
        else :class:`LostLease`, and the transaction is rolled back by the caller's exception."""
        now = self._clock_now()
        held = conn.execute(
            update(tournaments)
            .where(
                (tournaments.c.id == tournament_id)
                & (tournaments.c.director == process)
                & (tournaments.c.lease_until > now)
            )
            .values(lease_until=now + LEASE)
        ).rowcount
        if held != 1:
            raise LostLease(tournament_id)
        row = conn.execute(select(tournaments).where(tournaments.c.id == tournament_id)).first()
        return Tournament.from_row(row)

    def start(self, tournament_id: str, process: str) -> Tournament:
        """The start time came: an upcoming tournament runs (a Swiss one pairs its first round next), or is
        cancelled with fewer than two players."""
        with self.engine.begin() as conn:
            t = self._fence(conn, tournament_id, process)
            if t.status != "upcoming":
                return t
            status = "running" if t.players >= 2 else "cancelled"
            values: dict[str, Any] = {"status": status}
            if status == "cancelled":
                values["ended"] = self._now()
            conn.execute(update(tournaments).where(tournaments.c.id == tournament_id).values(**values))
            if t.kind == "arena" and status == "running":
                # Everyone who joined before the start waits from the start: the first wave pairs by rating.
                conn.execute(
                    update(tournament_players)
                    .where(
                        (tournament_players.c.tournament_id == tournament_id)
                        & ~tournament_players.c.paused
                        & tournament_players.c.game_id.is_(None)
                    )
                    .values(waiting_since=time.time())
                )
            self._notify(conn, [f"tour {tournament_id}", "list"])
            return self._fence(conn, tournament_id, process)

    def finish(self, tournament_id: str, process: str) -> None:
        """The tournament ends: its standings are final."""
        with self.engine.begin() as conn:
            self._fence(conn, tournament_id, process)
            conn.execute(
                update(tournaments)
                .where(tournaments.c.id == tournament_id)
                .values(status="finished", ended=self._now(), director=None, lease_until=None)
            )
            self._notify(conn, [f"tour {tournament_id}", "list"])

    def unfinished(self, tournament_id: str) -> int:
        """How many of its matches are being played (not yet counted)."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(tournament_games)
                    .where((tournament_games.c.tournament_id == tournament_id) & tournament_games.c.counted.is_(None))
                ).scalar_one()
            )

    def count(
        self,
        tournament_id: str,
        process: str,
        score: Callable[[Tournament, int, str, bool], tuple[int, int]],
    ) -> int:
        """Count every match of the tournament that has ended and is not counted yet, in the order they
        ended, into its players' standings: ``score(tournament, streak, result, berserk_counts)`` gives
        what a player's result scores (points, their streak after). Each player is freed for the next
        pairing (or paused after :data:`NO_SHOWS` aborts in a row). Returns how many were counted."""
        now = self._now()
        counted = 0
        with self.engine.begin() as conn:
            t = self._fence(conn, tournament_id, process)
            rows = conn.execute(
                select(
                    tournament_games.c.id.label("row_id"),
                    tournament_games.c.game_id,
                    tournament_games.c.account0,
                    tournament_games.c.account1,
                    tournament_games.c.berserk0,
                    tournament_games.c.berserk1,
                    games.c.status,
                    games.c.ending,
                    games.c.winner,
                    games.c.scores,
                    games.c.aborted_by,
                    games.c.updated,
                )
                .select_from(tournament_games.join(games, games.c.id == tournament_games.c.game_id))
                .where(
                    (tournament_games.c.tournament_id == tournament_id)
                    & tournament_games.c.counted.is_(None)
                    & games.c.status.in_(("finished", "broken"))
                )
                .order_by(games.c.updated, tournament_games.c.id)
                .limit(500)
            ).all()
            if not rows:
                return 0
            ids = sorted({r.account0 for r in rows} | {r.account1 for r in rows if r.account1 is not None})
            q = select(tournament_players).where(
                (tournament_players.c.tournament_id == tournament_id) & tournament_players.c.account_id.in_(ids)
            )
            players = {
                r.account_id: Entrant.from_row(r)
                for r in conn.execute(q if self.store.is_sqlite else q.with_for_update()).all()
            }
            changed: dict[str, dict[str, Any]] = {}
            ends = t.ends
            for r in rows:
                a0, a1 = r.account0, r.account1
                if a1 is None or a0 not in players or a1 not in players:
                    continue
                in_time = ends is None or counts_at_end(_aware(r.updated).timestamp(), ends.timestamp(), t.grace)
                try:
                    s0, s1 = (int(x) for x in str(r.scores).split(","))
                    scores: tuple[int, int] | None = (s0, s1)
                except ValueError:
                    scores = None
                status = "finished" if r.status == "finished" else "broken"
                results = [result_for(status, r.ending, r.winner, scores, seat) for seat in (0, 1)]
                berserked = [bool(r.berserk0), bool(r.berserk1)]
                counts = [False, False]
                if any(berserked) and t.min_moves > 0:
                    for seat in (0, 1):
                        if berserked[seat]:
                            made = conn.execute(
                                select(func.count())
                                .select_from(actions)
                                .where((actions.c.game_id == r.game_id) & (actions.c.seat == seat))
                            ).scalar_one()
                            counts[seat] = berserk_counts(int(made), t.min_moves)
                else:
                    counts = berserked
                aborted_by = None
                if r.ending == "abort" and r.aborted_by in (0, 1):
                    aborted_by = (a0, a1)[int(r.aborted_by)]
                points = [0, 0]
                for seat, (me, other) in enumerate(((a0, a1), (a1, a0))):
                    p = players[me]
                    values = changed.setdefault(me, {})
                    streak = values.get("streak", p.streak)
                    values["game_id"] = None
                    values["last_opponent"] = other
                    values["seen"] = now  # they were at the table: they are present for the next wave
                    result = results[seat]
                    if result is None or not in_time:
                        if aborted_by == me:
                            aborts = values.get("aborts", p.aborts) + 1
                            values["aborts"] = aborts
                            if aborts >= NO_SHOWS:
                                values["paused"] = True
                        continue
                    got, streak = score(t, streak, result, counts[seat])
                    points[seat] = got
                    values["streak"] = streak
                    values["aborts"] = 0
                    for key, add in (
                        ("score", got),
                        ("games", 1),
                        ("wins", int(result == "won")),
                        ("draws", int(result == "draw")),
                        ("losses", int(result == "lost")),
                        ("berserks", int(counts[seat])),
                        ("opponent_ratings", players[other].rating),
                    ):
                        values[key] = values.get(key, getattr(p, key)) + add
                result0 = {"won": 1.0, "draw": 0.5, "lost": 0.0}.get(results[0] or "") if in_time else None
                conn.execute(
                    update(tournament_games)
                    .where(tournament_games.c.id == r.row_id)
                    .values(
                        counted=now,
                        result0=result0,
                        points0=points[0] if in_time else None,
                        points1=points[1] if in_time else None,
                    )
                )
                counted += 1
            stamp = time.time()
            for account_id, values in changed.items():
                paused = values.get("paused", players[account_id].paused)
                values["waiting_since"] = None if paused else stamp
                conn.execute(
                    update(tournament_players)
                    .where(
                        (tournament_players.c.tournament_id == tournament_id)
                        & (tournament_players.c.account_id == account_id)
                    )
                    .values(**values)
                )
            self._notify(conn, [f"tour {tournament_id}"])
        return counted

    def bye(self, conn: Connection, tournament_id: str, round_number: int, account_id: str) -> None:
        """A Swiss bye for ``account_id`` in ``round_number``: a won round with no game (two half points)."""
        now = self._now()
        conn.execute(
            insert(tournament_games).values(
                tournament_id=tournament_id,
                game_id=None,
                round=round_number,
                account0=account_id,
                account1=None,
                berserk0=False,
                berserk1=False,
                result0=1.0,
                points0=2,
                points1=None,
                started=now,
                counted=now,
            )
        )
        conn.execute(
            update(tournament_players)
            .where(
                (tournament_players.c.tournament_id == tournament_id) & (tournament_players.c.account_id == account_id)
            )
            .values(score=tournament_players.c.score + 2)
        )

    def pair(
        self,
        tournament_id: str,
        process: str,
        pairs: list[tuple[str, str]],
        seeds: Seeds,
        *,
        round_number: int = 0,
        bye: str | None = None,
        first_deals: bool = False,
        new_round: bool = False,
    ) -> list[Paired]:
        """Make a match for each pair (seat 0, seat 1) of players, on the tournament's rules and clock, all in
        one transaction with the players taken (each only if still free: all of them, or nothing, and a
        :class:`StoreError` conflict). A Swiss round (``new_round``) also moves the round on and gives the
        ``bye``; ``first_deals``: seat 0 deals first. Returns each player's :class:`Paired`."""
        pairs = pairs[:WAVE_PAIRS] if not new_round else pairs
        with self.engine.begin() as conn:
            t = self._fence(conn, tournament_id, process)
            if t.status != "running":
                return []
            if new_round:
                moved = conn.execute(
                    update(tournaments)
                    .where((tournaments.c.id == tournament_id) & (tournaments.c.round == round_number - 1))
                    .values(round=round_number, round_started=self._now())
                ).rowcount
                if moved != 1:
                    raise StoreError(f"round {round_number} was paired already", conflict=True)
                if bye is not None:
                    self.bye(conn, tournament_id, round_number, bye)
            if not pairs:
                self._notify(conn, [f"tour {tournament_id}"])
                return []
            rules = t.rules
            rule_set = RuleSet.from_dict(rules)
            ids = [a for pair in pairs for a in pair]
            if len(set(ids)) != len(ids):
                raise StoreError("a player is in two pairs of one wave")
            players = {
                r.account_id: Entrant.from_row(r)
                for r in conn.execute(
                    select(tournament_players).where(
                        (tournament_players.c.tournament_id == tournament_id) & tournament_players.c.account_id.in_(ids)
                    )
                ).all()
            }
            if len(players) != len(ids):
                raise StoreError("a paired player is not in the tournament", conflict=True)
            new, movers = [], []
            for a, b in pairs:
                seed, ai_seed, mover = seeds(rule_set, 0 if first_deals else None)
                pa, pb = players[a], players[b]
                new.append((rules, seed, ai_seed, pa.name, owner_key(a), pb.name, owner_key(b)))
                movers.append(mover)
            made = two_player_games(conn, new)
            control = time_control(t.clock)
            add_clocks(conn, [(g[0], control, ON_TIME, m) for g, m in zip(made, movers)], start=time.time())
            now = self._now()
            conn.execute(
                insert(tournament_games),
                [
                    {
                        "tournament_id": tournament_id,
                        "game_id": g[0],
                        "round": round_number,
                        "account0": a,
                        "account1": b,
                        "berserk0": False,
                        "berserk1": False,
                        "result0": None,
                        "points0": None,
                        "points1": None,
                        "started": now,
                        "counted": None,
                    }
                    for (a, b), g in zip(pairs, made)
                ],
            )
            if t.rated:
                conn.execute(
                    insert(rated_games),
                    [
                        {"game_id": g[0], "category": t.category, "account0": a, "account1": b, "rated": None}
                        for (a, b), g in zip(pairs, made)
                    ],
                )
            out: list[Paired] = []
            game_of: dict[str, str] = {}
            for (a, b), (game_id, t0, t1) in zip(pairs, made):
                out += [Paired(a, game_id, t0), Paired(b, game_id, t1)]
                game_of[a] = game_of[b] = game_id
            # Each only if still free and not paused meanwhile (a Swiss player who withdrew while the round
            # was being paired): else the whole pairing is undone, and made again without them.
            free = tournament_players.c.game_id.is_(None) & ~tournament_players.c.paused
            taken = conn.execute(
                update(tournament_players)
                .where(
                    (tournament_players.c.tournament_id == tournament_id)
                    & tournament_players.c.account_id.in_(ids)
                    & free
                )
                .values(game_id=case(game_of, value=tournament_players.c.account_id), waiting_since=None)
            ).rowcount
            if taken != len(ids):
                raise StoreError("a player paused or was paired while the wave paired them", conflict=True)
            self._notify(
                conn, [f"tour {tournament_id}"] + [f"paired {tournament_id} {p.account_id} {p.game_id}" for p in out]
            )
            bots = [a for a in ids if players[a].bot]
            if bots and not self.store.is_sqlite:  # their streams, wherever they are, tell them of the match
                conn.execute(select(*(func.pg_notify(BOT_CHANNEL, b) for b in bots)))
        return out

    def waiting(self, tournament_id: str) -> tuple[list[Entrant], set[str]]:
        """An arena's players, and which of them may be paired now: not paused, not playing (here, or a
        real-time game elsewhere, for a person), and seen lately."""
        now = self._now()
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(tournament_players).where(tournament_players.c.tournament_id == tournament_id)
            ).all()
            everyone = [Entrant.from_row(r) for r in rows]
            ready = [
                e.account_id
                for e in everyone
                if not e.paused and e.game_id is None and e.waiting_since is not None and e.seen >= now - PRESENT
            ]
            busy: set[str] = set()
            if ready:
                owner = literal("a:", String) + tournament_players.c.account_id  # its seats' owner key
                for i in range(0, len(ready), 500):
                    part = ready[i : i + 500]
                    busy |= {
                        r.account_id
                        for r in conn.execute(
                            select(tournament_players.c.account_id).where(
                                (tournament_players.c.tournament_id == tournament_id)
                                & tournament_players.c.account_id.in_(part)
                                & playing_in_real_time(owner)
                                & a_person(tournament_players.c.account_id)
                            )
                        ).all()
                    }
        return everyone, set(ready) - busy

    def berserk(self, game_id: str, seat: int, *, to_move: int, first_move: bool) -> str | None:
        """Seat ``seat`` of a tournament match berserks, before their first decision: their bank is halved,
        once; the deadline follows if they are ``to_move`` (``first_move``: the game's first decision).
        None when done, else why not (a code of koikoi.web.tournaments' errors)."""
        column = tournament_games.c.berserk0 if seat == 0 else tournament_games.c.berserk1
        with self.engine.begin() as conn:
            row = conn.execute(
                select(tournament_games, tournaments.c.berserk.label("allowed"), tournaments.c.status.label("t_status"))
                .select_from(tournament_games.join(tournaments, tournaments.c.id == tournament_games.c.tournament_id))
                .where(tournament_games.c.game_id == game_id)
            ).first()
            if row is None:
                return "not_a_tournament_game"
            if not row.allowed:
                return "no_berserk"
            if row.counted is not None:
                return "over"
            if row.berserk0 if seat == 0 else row.berserk1:
                return "berserk_already"
            moved = conn.execute(
                select(func.count())
                .select_from(actions)
                .where((actions.c.game_id == game_id) & (actions.c.seat == seat))
            ).scalar_one()
            if moved:
                return "berserk_late"
            q = select(clocks).where(clocks.c.game_id == game_id)
            clock = conn.execute(q if self.store.is_sqlite else q.with_for_update()).first()
            if clock is None or clock.deadline is None:
                return "over"
            banks = [float(clock.bank0), float(clock.bank1)]
            banks[seat] /= 2
            values: dict[str, Any] = {"bank0": banks[0], "bank1": banks[1]}
            if to_move == seat and clock.turn_started is not None:
                control = time_control(clock.control)
                values["deadline"] = deadline_of(
                    control, banks, seat, float(clock.turn_started), first_move=first_move and clock.on_time == "lose"
                )
            conn.execute(update(clocks).where(clocks.c.game_id == game_id).values(**values))
            conn.execute(update(tournament_games).where(tournament_games.c.game_id == game_id).values({column: True}))
            self.store.announce(conn, game_id, -1)
            self._notify(conn, [f"tour {row.tournament_id}"])
        return None


def schedule_key(name: str, starts: datetime) -> str:
    """The unique key of a scheduled tournament: its configured name and its start (koikoi.web.schedule)."""
    return f"{name[:60]}@{starts.strftime('%Y-%m-%dT%H:%M')}#{zlib.crc32(name.encode()) & 0xFFFF:04x}"
